/**
 * A companion in a process of its own, for tests that kill it (companion/die-with-companion.test.ts):
 * `node --import tsx companion/testing/companion-child.ts` with DEWPOINT_TEST_TOKEN and
 * DEWPOINT_TEST_ROOT (where job directories go) set; prints `{"port":…}` on one line once it
 * listens. On purpose no signal handlers: SIGTERM and SIGINT kill it as they kill any Node
 * program that installs none, so only the reaper can clean up after it. Not used by the companion.
 */
import { ProcessRunner } from '../process-runner';
import { startCompanion } from '../server';

const token = process.env.DEWPOINT_TEST_TOKEN;
const tmpRoot = process.env.DEWPOINT_TEST_ROOT;
if (!token || !tmpRoot) throw new Error('companion-child: set DEWPOINT_TEST_TOKEN and DEWPOINT_TEST_ROOT');
const runner = new ProcessRunner({ tmpRoot });
const containment = await runner.probe();
const companion = await startCompanion(
  {
    runner: { name: 'process', run: runner.run.bind(runner) },
    token,
    origins: ['http://localhost:5173'],
    workers: 1,
    queueLimit: 4,
    maxBodyBytes: 1024 ** 2,
    networkIsolation: containment.networkIsolation,
    containment,
    sessions: { launcher: runner, max: 4, idleSeconds: 600 },
  },
  0,
);
process.stdout.write(`${JSON.stringify({ port: companion.port })}\n`);
