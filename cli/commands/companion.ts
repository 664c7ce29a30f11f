/**
 * `dewpoint companion [--port P] [--workers N] [--queue N] [--origin URL]`: the local sandbox
 * server (companion/server.ts) with the process runner, on 127.0.0.1 only. A fresh random token
 * per start is printed with the address; every request needs it. Ctrl-C or SIGTERM stops the
 * server, kills every program still running (its whole process group) and deletes its job
 * directory.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { ProcessRunner } from '../../companion/process-runner';
import { COMPANION_VERSION, startCompanion } from '../../companion/server';
import { UsageError, parseFlags } from '../args';

const DEFAULT_PORT = 8787;
const DEFAULT_ORIGIN = 'http://localhost:5173';

export async function companionCommand(argv: string[]): Promise<number> {
  const f = parseFlags('companion', argv, { port: 'number', workers: 'number', queue: 'number', origin: 'string', 'max-body': 'number' });
  const port = (f.port as number | undefined) ?? DEFAULT_PORT;
  const workers = (f.workers as number | undefined) ?? availableParallelism();
  const queueLimit = (f.queue as number | undefined) ?? 4 * workers;
  const maxBodyBytes = (f['max-body'] as number | undefined) ?? 8 * 1024 ** 2;
  for (const [name, v, min, max] of [['port', port, 0, 65535], ['workers', workers, 1, 256], ['queue', queueLimit, 0, 100_000], ['max-body', maxBodyBytes, 1024, 1024 ** 3]] as const) {
    if (!Number.isInteger(v) || v < min || v > max) throw new UsageError(`dewpoint companion: --${name} must be an integer in ${min}..${max}, got ${v}`);
  }
  const origins = String(f.origin ?? DEFAULT_ORIGIN).split(',').map((o) => o.trim());
  for (const o of origins) {
    if (!/^https?:\/\/[^/]+$/.test(o)) throw new UsageError(`dewpoint companion: --origin must be scheme://host[:port] with no path (comma-separated for several), got '${o}'`);
  }
  const inner = new ProcessRunner();
  const runner = { name: 'process', run: inner.run.bind(inner) };
  const token = randomBytes(24).toString('base64url');
  const companion = await startCompanion({ runner, token, origins, workers, queueLimit, maxBodyBytes, networkIsolation: false }, port);
  process.stdout.write(
    [
      `dewpoint companion ${COMPANION_VERSION}: ${companion.url} (process runner, ${workers} workers, queue ${queueLimit}; network NOT isolated)`,
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
