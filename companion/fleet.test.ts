import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QueueFull, SandboxFleet } from './fleet';
import { ProcessRunner, RunCancelled } from './process-runner';
import type { Program } from './protocol';
import { sandboxLimitsSchema } from './protocol';

const limits = sandboxLimitsSchema.parse({ wallSeconds: 20 });
const py = (code: string, stdin?: string): { program: Program; limits: typeof limits } => ({
  program: { files: { 'main.py': code }, stdin },
  limits,
});

/** The real ProcessRunner, recording each started program's pid and job directory. */
function recordingRunner() {
  const started: { pid: number; dir: string }[] = [];
  const inner = new ProcessRunner({ onStart: (job) => started.push(job) });
  return { started, runner: { name: 'process', run: inner.run.bind(inner) } };
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The promise's value, or the error it rejected with (handled at once: no unhandled rejection while the test awaits another). */
const settle = <T>(p: Promise<T>): Promise<T | Error> => p.catch((e: Error) => e);

const gone = (job: { pid: number; dir: string }) => !existsSync(`/proc/${job.pid}`) && !existsSync(job.dir);

describe('SandboxFleet (real processes)', () => {
  it('runs a batch on its workers and returns the outcomes in the batch order', async () => {
    const { runner } = recordingRunner();
    const fleet = new SandboxFleet(runner, 2, 8);
    // Later programs finish first: the order is the batch's, not the finishing order.
    const jobs = [0.6, 0.3, 0, 0.1].map((s, i) => py(`import time; time.sleep(${s}); print(${i})`));
    const outcomes = await fleet.run(jobs);
    expect(outcomes.map((o) => o.stdout)).toEqual(['0\n', '1\n', '2\n', '3\n']);
    expect(fleet.running).toBe(0);
  });

  it('submit returns at once; a job beyond the workers and the queue is refused, and so is a batch that does not fit whole', async () => {
    const { runner, started } = recordingRunner();
    const fleet = new SandboxFleet(runner, 1, 1);
    const t0 = performance.now();
    const first = fleet.submit(py('import time; time.sleep(1)'));
    const second = fleet.submit(py('print(2)'));
    expect(performance.now() - t0).toBeLessThan(100);
    await expect(fleet.submit(py('print(3)'))).rejects.toBeInstanceOf(QueueFull);
    await expect(fleet.run([py('print(4)')])).rejects.toThrow(/a batch of 1 does not fit \(room for 0/);
    expect((await first).verdict).toBe('COMPLETED');
    expect((await second).stdout).toBe('2\n');
    expect(started).toHaveLength(2);
  });

  it('an aborted signal cancels a running job (its program killed, its directory deleted) and a waiting one (never started)', async () => {
    const { runner, started } = recordingRunner();
    const fleet = new SandboxFleet(runner, 1, 4);
    const ac = new AbortController();
    const running = settle(fleet.submit(py('import time; time.sleep(30)'), ac.signal));
    const waiting = settle(fleet.submit(py('print("never")'), ac.signal));
    await until(() => started.length === 1, 10_000);
    ac.abort();
    expect(await running).toBeInstanceOf(RunCancelled);
    expect(String(await waiting)).toMatch(/cancelled while waiting/);
    expect(gone(started[0])).toBe(true);
    expect(started).toHaveLength(1);
    expect((await fleet.submit(py('print(1)'))).stdout).toBe('1\n'); // the worker is free again
  });

  it('a failing job cancels the rest of its batch', async () => {
    const { runner: real, started } = recordingRunner();
    // The real runner, made to fail (as a runner that cannot start does) on the job whose stdin says so.
    const runner = {
      name: 'process',
      run: (p: Program, l: typeof limits, signal?: AbortSignal) =>
        p.stdin === 'fail' ? Promise.reject(new Error('injected runner failure')) : real.run(p, l, signal),
    };
    const fleet = new SandboxFleet(runner, 2, 4);
    const batch = fleet.run([py('import time; time.sleep(30)'), py('', 'fail'), py('print(3)')]);
    await expect(batch).rejects.toThrow(/injected runner failure/);
    await until(() => fleet.running === 0, 10_000);
    expect(started.every(gone)).toBe(true);
  });

  it('close() kills every running program, refuses the waiting ones, and later submits', async () => {
    const { runner, started } = recordingRunner();
    const fleet = new SandboxFleet(runner, 2, 4);
    const jobs = [
      fleet.submit(py('import time; time.sleep(30)')),
      fleet.submit(py('import time; time.sleep(30)')),
      fleet.submit(py('print(1)')),
    ].map(settle);
    await until(() => started.length === 2, 10_000);
    const t0 = performance.now();
    await fleet.close();
    expect(performance.now() - t0).toBeLessThan(5_000);
    for (const j of jobs) expect(await j).toBeInstanceOf(RunCancelled);
    expect(started.every(gone)).toBe(true);
    await expect(fleet.submit(py('print(1)'))).rejects.toThrow(/closed/);
  });
});
