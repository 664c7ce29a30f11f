#!/usr/bin/env node
/**
 * A FAKE docker CLI, for tests only. It isolates nothing: it is not a sandbox and must never be
 * used as a runtime outside companion/container-runner.test.ts.
 *
 * It speaks the subset of the docker CLI that ContainerRunner uses, with docker's exit statuses
 * and messages, so the runner's handling of them can be tested without a container engine:
 *
 * - `run [flags] IMAGE ARGV...`: parses the flags (an unknown one exits 125 like docker), writes
 *   the cidfile once the "container" exists, and runs ARGV on this machine with cwd = the host
 *   directory mounted at the -w path (container paths in ARGV under a -v mount are translated),
 *   a scrubbed environment, and `--ulimit cpu=S:H` applied with prlimit. Nothing else is enforced.
 *   Like docker, the "container" outlives a killed client: it runs in a detached shim (our stand-in
 *   for the daemon) until it exits or `rm -f` kills it. The client relays stdin, stdout and stderr
 *   and exits with the container's status: its own, 128 + n for signal n, 127 or 126 when ARGV
 *   cannot be found or run.
 * - `rm [-f|--force] [-t|--time N] NAME...`: kills a running container's process group and
 *   forgets it, printing NAME; a missing one prints docker's "No such container" on stderr (exit 0
 *   with --force, as docker's CLI does; 1 without).
 * - `version`, `image inspect [--format F] IMAGE`.
 * - Leading global flags (`--flag value` before the command) are accepted and ignored.
 *
 * Environment:
 * - FAKE_DOCKER_LOG: a file; every invocation appends one JSON line `{"argv": [...]}`, and the
 *   shim appends `{"event": "start" | "exit", "name", "pid", ...}` for each container program.
 * - FAKE_DOCKER_STATE: a directory holding one `NAME.json` per live container (required).
 * - FAKE_DOCKER_MODE=no-daemon: every command fails like a client without a daemon (run exits
 *   125 without writing the cidfile); FAKE_DOCKER_MODE=no-image: the image is not there.
 * - FAKE_DOCKER_CREATE_DELAY_MS: a slow create: the container appears (and the cidfile is
 *   written) that long after `run` started, even if the client was killed meanwhile.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  appendFileSync,
  constants as fsConstants,
  existsSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const NO_DAEMON = 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?';
const env = process.env;
const mode = env.FAKE_DOCKER_MODE ?? '';

function log(entry) {
  if (env.FAKE_DOCKER_LOG) appendFileSync(env.FAKE_DOCKER_LOG, JSON.stringify(entry) + '\n');
}

function fail(message, status) {
  process.stderr.write(message + '\n');
  process.exit(status);
}

function stateDir() {
  if (!env.FAKE_DOCKER_STATE) fail('fake-docker: set FAKE_DOCKER_STATE to a directory', 2);
  return env.FAKE_DOCKER_STATE;
}

const VALUE_FLAGS = new Set([
  '--name',
  '--cidfile',
  '--network',
  '-v',
  '--volume',
  '-w',
  '--workdir',
  '--tmpfs',
  '-m',
  '--memory',
  '--memory-swap',
  '--pids-limit',
  '--cpus',
  '--ulimit',
  '-u',
  '--user',
  '--cap-drop',
  '--security-opt',
  '--pull',
]);
const BOOL_FLAGS = new Set(['--rm', '--read-only', '-i', '--interactive']);

/** `run`'s flags (each a list of values, in order), the image and the argv after it; exits 125 on an unknown flag. */
function parseRun(args) {
  const flags = {};
  let i = 0;
  for (; i < args.length && args[i].startsWith('-'); i++) {
    const eq = args[i].indexOf('=');
    const flag = eq > 0 ? args[i].slice(0, eq) : args[i];
    if (BOOL_FLAGS.has(flag)) (flags[flag] ??= []).push('true');
    else if (VALUE_FLAGS.has(flag)) (flags[flag] ??= []).push(eq > 0 ? args[i].slice(eq + 1) : args[++i]);
    else fail(`unknown flag: ${flag}\nSee 'docker run --help'.`, 125);
  }
  if (i >= args.length) fail(`docker: 'docker run' requires at least 1 argument.\nSee 'docker run --help'.`, 125);
  return { flags, image: args[i], argv: args.slice(i + 1) };
}

/** The host path of a container path under one of the -v mounts, else the path unchanged. */
function translate(path, mounts) {
  for (const { source, target } of mounts) {
    if (path === target) return source;
    if (path.startsWith(target + '/')) return source + path.slice(target.length);
  }
  return path;
}

/** Whether `name` (no slash: looked up on PATH) names an executable file. */
function findable(name, path) {
  const candidates = name.includes('/')
    ? [name]
    : path
        .split(delimiter)
        .filter(isAbsolute)
        .map((d) => join(d, name));
  return candidates.some((c) => {
    try {
      accessSync(c, fsConstants.X_OK);
      return statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

async function run(args) {
  const { flags, image, argv } = parseRun(args);
  if (mode === 'no-daemon') fail(`docker: ${NO_DAEMON}\n\nRun 'docker run --help' for more information`, 125);
  if (mode === 'no-image')
    fail(
      `docker: Error response from daemon: No such image: ${image}\n\nRun 'docker run --help' for more information`,
      125,
    );
  const one = (flag) => flags[flag]?.at(-1);
  const name = one('--name') ?? `fake-${randomBytes(4).toString('hex')}`;
  const cidfile = one('--cidfile');
  if (cidfile && existsSync(cidfile))
    fail(`docker: Container ID file found, make sure the other container isn't running or delete ${cidfile}`, 125);
  if (existsSync(join(stateDir(), `${name}.json`)))
    fail(`docker: Error response from daemon: Conflict. The container name "/${name}" is already in use.`, 125);
  if (argv.length === 0) fail('docker: Error response from daemon: no command specified', 125);
  const mounts = [...(flags['-v'] ?? []), ...(flags['--volume'] ?? [])].map((v) => {
    const [source, target] = v.split(':');
    return { source, target };
  });
  const workdir = one('-w') ?? one('--workdir') ?? '/';
  const cpu = (flags['--ulimit'] ?? []).find((u) => u.startsWith('cpu='))?.slice('cpu='.length);
  const spec = {
    name,
    cidfile,
    state: stateDir(),
    cwd: translate(workdir, mounts),
    argv: argv.map((a) => translate(a, mounts)),
    cpu,
    createDelayMs: Number(env.FAKE_DOCKER_CREATE_DELAY_MS ?? 0),
  };
  // detached: the shim (our "daemon") and its program are their own process group, so killing the
  // client leaves the container running, as with docker; `rm -f` kills that group.
  const shim = spawn(process.execPath, [fileURLToPath(import.meta.url), '__shim', JSON.stringify(spec)], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  shim.stdin.on('error', () => {}); // the program exited without reading its stdin: docker ignores that too
  process.stdin.pipe(shim.stdin);
  shim.stdout.pipe(process.stdout);
  shim.stderr.pipe(process.stderr);
  shim.on('close', (code, signal) => process.exit(signal ? 128 + constants.signals[signal] : code));
}

/** The container: waits out a slow create, records itself, runs the program and reports its status. */
async function shim([json]) {
  const spec = JSON.parse(json);
  if (spec.createDelayMs > 0) await delay(spec.createDelayMs);
  const record = join(spec.state, `${spec.name}.json`);
  writeFileSync(record, JSON.stringify({ pid: process.pid }), { flag: 'wx' });
  if (spec.cidfile) writeFileSync(spec.cidfile, randomBytes(32).toString('hex'));
  const path = env.PATH ?? '/usr/bin:/bin';
  const [command, ...rest] = spec.argv;
  if (!findable(command, path)) {
    rmSync(record, { force: true });
    fail(
      `docker: Error response from daemon: failed to create task for container: exec: "${command}": executable file not found in $PATH: unknown.`,
      127,
    );
  }
  const argv = spec.cpu ? ['prlimit', `--cpu=${spec.cpu}`, '--', command, ...rest] : [command, ...rest];
  // The image's environment, not the host's: nothing of ours leaks in.
  const child = spawn(argv[0], argv.slice(1), {
    cwd: spec.cwd,
    env: { PATH: path, LANG: 'C.UTF-8' },
    stdio: 'inherit',
  });
  child.on('error', (e) =>
    fail(`docker: Error response from daemon: failed to create task for container: ${e.message}: unknown.`, 126),
  );
  child.on('spawn', () => log({ event: 'start', name: spec.name, pid: child.pid }));
  child.on('exit', (code, signal) => {
    rmSync(record, { force: true }); // --rm
    log({ event: 'exit', name: spec.name, pid: child.pid, code, signal });
    process.exit(signal ? 128 + constants.signals[signal] : code);
  });
}

function rm(args) {
  if (mode === 'no-daemon') fail(NO_DAEMON, 1);
  let force = false;
  const names = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-f' || args[i] === '--force') force = true;
    else if (args[i] === '-t' || args[i] === '--time') i++;
    else if (args[i].startsWith('-')) fail(`unknown flag: ${args[i]}\nSee 'docker rm --help'.`, 125);
    else names.push(args[i]);
  }
  let status = 0;
  for (const name of names) {
    const record = join(stateDir(), `${name}.json`);
    if (!existsSync(record)) {
      process.stderr.write(`Error response from daemon: No such container: ${name}\n`);
      if (!force) status = 1;
      continue;
    }
    const { pid } = JSON.parse(readFileSync(record, 'utf8'));
    try {
      process.kill(-pid, 'SIGKILL');
    } catch (e) {
      if (e.code !== 'ESRCH') throw e;
    }
    rmSync(record, { force: true });
    process.stdout.write(`${name}\n`);
  }
  process.exit(status);
}

function version() {
  process.stdout.write(
    'Client:\n Version:           0.0.0-fake\n API version:       1.47\n OS/Arch:           linux/amd64\n',
  );
  if (mode === 'no-daemon') fail(NO_DAEMON, 1);
  process.stdout.write('\nServer: Fake Engine\n Engine:\n  Version:          0.0.0-fake\n');
  process.exit(0);
}

function image([sub, ...args]) {
  const name = args.filter((a, i) => !a.startsWith('-') && args[i - 1] !== '--format' && args[i - 1] !== '-f').at(-1);
  if (sub !== 'inspect' || !name) fail(`docker: 'image ${sub}' is not supported by the fake`, 125);
  if (mode === 'no-daemon') fail(NO_DAEMON, 1);
  if (mode === 'no-image') fail(`Error response from daemon: No such image: ${name}`, 1);
  process.stdout.write(`sha256:${'0'.repeat(64)}\n`);
  process.exit(0);
}

let args = process.argv.slice(2);
if (args[0] === '__shim') await shim(args.slice(1));
else {
  log({ argv: args });
  while (args[0]?.startsWith('--')) args = args.slice(args[0].includes('=') ? 1 : 2);
  const [command, ...rest] = args;
  if (command === 'run') await run(rest);
  else if (command === 'rm') rm(rest);
  else if (command === 'version') version();
  else if (command === 'image') image(rest);
  else fail(`docker: '${command}' is not a docker command.`, 1);
}
