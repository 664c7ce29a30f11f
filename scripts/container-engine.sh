#!/usr/bin/env bash
# Tries to give ContainerRunner a real engine from Debian's packages (CI runs as root on Debian 12):
# podman with runc (crun refuses this machine's hybrid cgroups), and a Python image built from
# Debian's own packages with debootstrap (no registry is reachable here), imported as
# localhost/dewpoint-python:bookworm. On success it prints the environment the real-engine tests
# read (companion/container-runner.test.ts), for `eval`; on failure it says why on stderr and
# exits 1, and those tests skip (the fake runtime's still run).
set -uo pipefail
IMAGE=localhost/dewpoint-python:bookworm
say() { echo "container engine: $*" >&2; }
if [ "$(id -u)" != 0 ]; then say "not root: skipping the install"; exit 1; fi
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing podman, runc, debootstrap from Debian's packages"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman runc debootstrap conmon >/tmp/container-engine-apt.log 2>&1; then
    (apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman runc debootstrap conmon >/tmp/container-engine-apt.log 2>&1) || { say "apt-get install failed: $(tail -3 /tmp/container-engine-apt.log)"; exit 1; }
  fi
fi
if ! podman --runtime runc image exists "$IMAGE" 2>/dev/null; then
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  root=$(mktemp -d /tmp/dewpoint-rootfs.XXXXXX)
  say "building $IMAGE with debootstrap from $mirror"
  if ! debootstrap --variant=minbase --include=python3-minimal bookworm "$root" "$mirror" >/tmp/container-engine-debootstrap.log 2>&1; then
    say "debootstrap failed: $(tail -3 /tmp/container-engine-debootstrap.log)"; rm -rf "$root"; exit 1
  fi
  ln -sf python3 "$root/usr/bin/python"
  if ! tar -C "$root" -c . | podman --runtime runc import - "$IMAGE" >/dev/null 2>/tmp/container-engine-import.log; then
    say "podman import failed: $(tail -3 /tmp/container-engine-import.log)"; rm -rf "$root"; exit 1
  fi
  rm -rf "$root"
fi
# A trial run with the ulimits ContainerRunner passes: podman's defaults are above this machine's hard limits.
if ! out=$(podman --runtime runc run --rm --network none --pull never --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$IMAGE" python -c 'print("ok")' 2>&1) || [ "$out" != ok ]; then
  say "a trial container did not print ok: $out"; exit 1
fi
say "podman $(podman --version | awk '{print $3}') with runc, image $IMAGE"
echo "export DEWPOINT_CONTAINER_RUNTIME=podman DEWPOINT_CONTAINER_RUNTIME_ARGS='--runtime runc' DEWPOINT_CONTAINER_IMAGE=$IMAGE"
