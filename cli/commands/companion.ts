/**
 * `dewpoint companion [--port P] [--runner process|container] [--workers N] [--queue N] [--origin URL]
 * [--image IMAGE] [--runtime docker|podman|PATH] [--runtime-args "ARGS"]`: the local sandbox
 * server (companion/server.ts) on 127.0.0.1 only. A fresh random token per start is printed with
 * the address; every request needs it. The runner is probed at start (what it contains is printed
 * and reported by /v1/health); a runner that cannot work here stops the command with the reason.
 * Ctrl-C or SIGTERM stops the server, kills every program still running (its whole process group
 * or its container) and deletes its job directory.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ContainerRunner } from '../../companion/container-runner';
import type { Containment } from '../../companion/containment';
import { ProcessRunner } from '../../companion/process-runner';
import type { Runner } from '../../companion/server';
import { COMPANION_VERSION, startCompanion } from '../../companion/server';
import { UsageError, num, parseFlags, str, type CommandSpec } from '../args';

const DEFAULT_PORT = 8787;
const DEFAULT_ORIGIN = 'http://localhost:5173';
/** The image scripts/container-engine.sh builds from Debian's packages. */
const DEFAULT_IMAGE = 'localhost/dewpoint-python:bookworm';

/** The runner the flags ask for, probed: what it contains, or a UsageError naming why it cannot run here. */
async function runnerOf(
  f: Record<string, unknown>,
  sessions: ProcessRunner,
): Promise<{ runner: Runner; containment: Containment; label: string }> {
  const kind = String(f.runner ?? 'process');
  if (kind === 'process') {
    const containment = await sessions.probe();
    return { runner: { name: 'process', run: sessions.run.bind(sessions) }, containment, label: 'process runner' };
  }
  if (kind !== 'container')
    throw new UsageError(`dewpoint companion: --runner must be process or container, got '${kind}'`);
  const image = String(f.image ?? DEFAULT_IMAGE);
  const runtime = String(f.runtime ?? 'docker');
  const runtimeArgs = String(f['runtime-args'] ?? '')
    .split(/\s+/)
    .filter(Boolean);
  const inner = new ContainerRunner({ image, runtime, runtimeArgs });
  let probe: { notes: string[] };
  try {
    probe = await inner.probe();
  } catch (e) {
    throw new UsageError(`dewpoint companion: the container runner cannot run here: ${(e as Error).message}`);
  }
  const containment: Containment = {
    networkIsolation: true,
    dedicatedUser: true,
    user: `${inner.user} in a fresh container of ${image}`,
    maxProcesses: inner.pids,
    notes: probe.notes,
  };
  return {
    runner: { name: 'container', run: inner.run.bind(inner) },
    containment,
    label: `container runner (${runtime}, ${image})`,
  };
}

export const COMPANION: CommandSpec = {
  name: 'companion',
  args: '',
  summary:
    'the local sandbox server: runs code rewards and environment programs for the app, on 127.0.0.1 only, ' +
    'behind a token printed at start',
  flags: {
    port: num('P', `the port; default ${DEFAULT_PORT} (0: any free one)`),
    runner: str(
      'process|container',
      'how programs run: contained processes, or a fresh container each; default process',
    ),
    workers: num('N', 'programs run at once; default the CPUs'),
    queue: num('N', 'programs waiting at most; default 4 × workers'),
    origin: str('URL[,URL]', `the app origins allowed to call it; default ${DEFAULT_ORIGIN}`),
    'max-body': num('BYTES', 'largest request body; default 8 MiB'),
    image: str('IMAGE', `with --runner container: the image; default ${DEFAULT_IMAGE}`),
    runtime: str('docker|podman|PATH', 'with --runner container: the container runtime; default docker'),
    'runtime-args': str('"ARGS"', 'with --runner container: extra arguments to the runtime'),
  },
};

export async function companionCommand(argv: string[]): Promise<number> {
  const f = parseFlags(COMPANION.name, argv, COMPANION.flags);
  const port = (f.port as number | undefined) ?? DEFAULT_PORT;
  const workers = (f.workers as number | undefined) ?? availableParallelism();
  const queueLimit = (f.queue as number | undefined) ?? 4 * workers;
  const maxBodyBytes = (f['max-body'] as number | undefined) ?? 8 * 1024 ** 2;
  for (const [name, v, min, max] of [
    ['port', port, 0, 65535],
    ['workers', workers, 1, 256],
    ['queue', queueLimit, 0, 100_000],
    ['max-body', maxBodyBytes, 1024, 1024 ** 3],
  ] as const) {
    if (!Number.isInteger(v) || v < min || v > max)
      throw new UsageError(`dewpoint companion: --${name} must be an integer in ${min}..${max}, got ${v}`);
  }
  const origins = String(f.origin ?? DEFAULT_ORIGIN)
    .split(',')
    .map((o) => o.trim());
  for (const o of origins) {
    if (!/^https?:\/\/[^/]+$/.test(o))
      throw new UsageError(
        `dewpoint companion: --origin must be scheme://host[:port] with no path (comma-separated for several), got '${o}'`,
      );
  }
  if (
    f.runner !== 'container' &&
    (f.image !== undefined || f.runtime !== undefined || f['runtime-args'] !== undefined)
  ) {
    throw new UsageError('dewpoint companion: --image, --runtime and --runtime-args are for --runner container');
  }
  // Environment sessions always run as processes; they share the process runner's probe.
  const sessions = new ProcessRunner();
  const { runner, containment, label } = await runnerOf(f, sessions);
  const token = randomBytes(24).toString('base64url');
  const companion = await startCompanion(
    {
      runner,
      token,
      origins,
      workers,
      queueLimit,
      maxBodyBytes,
      networkIsolation: containment.networkIsolation,
      containment,
      sessions: { launcher: sessions },
    },
    port,
  );
  process.stdout.write(
    [
      `dewpoint companion ${COMPANION_VERSION}: ${companion.url} (${label}, ${workers} workers, queue ${queueLimit}; network ${containment.networkIsolation ? 'isolated' : 'NOT isolated'})`,
      `programs run as: ${containment.user}`,
      ...containment.notes.map((n) => `  - ${n}`),
      `token: ${token}`,
      `open the app connected: ${origins[0]}/#/system?companion=${encodeURIComponent(companion.url)}&token=${token}`,
      `allowed origins: ${origins.join(', ')}`,
      `try: curl -H 'Origin: ${origins[0]}' -H 'Authorization: Bearer ${token}' ${companion.url}/v1/health`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    // close() cancels the fleet: every running program's group is killed and its directory deleted.
    const stop = (signal: string) => {
      process.stderr.write(`dewpoint companion: ${signal}, stopping\n`);
      void companion.close().finally(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}
