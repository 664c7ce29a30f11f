import { describe, expect, it } from 'vitest';
import type { MismatchLabPlan, RunOptions, RunStatus } from '../../worker/protocol';
import { runLab, type LabSteps } from './mismatch-lab';

const plan: MismatchLabPlan = {
  title: 'sampler at temperature 1.5, uncorrected',
  runs: ['on-policy', 'none', 'tis'].map((correction) => ({
    correction,
    title: correction,
    name: `lab temperature:1.5: ${correction}`,
    options: { preset: 'grpo-arith', seed: 1 } as unknown as RunOptions,
  })),
};

/** Fake steps: runs get ids r1, r2, …, end with `statuses` in turn, and every call is logged. */
function fakeSteps(statuses: RunStatus[], stopAfter = Infinity): { steps: LabSteps; log: string[] } {
  const log: string[] = [];
  let n = 0;
  const steps: LabSteps = {
    start: async () => `r${++n}`,
    name: async (runId, name) => void log.push(`name ${runId} ${name}`),
    ended: async (runId) => {
      log.push(`ended ${runId}`);
      return statuses[n - 1];
    },
    stopRequested: () => n >= stopAfter,
    onRun: (i, runId) => void log.push(`run ${i} ${runId}`),
  };
  return { steps, log };
}

describe('the mismatch lab in the app', () => {
  it('starts each run after the one before ended, names it once it has ended, and returns the finished runs with their corrections', async () => {
    const { steps, log } = fakeSteps(['finished', 'finished', 'finished']);
    expect(await runLab(plan, steps)).toEqual({
      status: 'done',
      finished: [
        { runId: 'r1', correction: 'on-policy' },
        { runId: 'r2', correction: 'none' },
        { runId: 'r3', correction: 'tis' },
      ],
    });
    expect(log).toEqual([
      'run 0 r1',
      'ended r1',
      'name r1 lab temperature:1.5: on-policy',
      'run 1 r2',
      'ended r2',
      'name r2 lab temperature:1.5: none',
      'run 2 r3',
      'ended r3',
      'name r3 lab temperature:1.5: tis',
    ]);
  });

  it('ends at a failed run, naming it, and stops between runs when asked', async () => {
    const failed = await runLab(plan, fakeSteps(['finished', 'failed']).steps);
    expect(failed).toEqual({
      status: 'failed',
      message: 'lab temperature:1.5: none failed',
      finished: [{ runId: 'r1', correction: 'on-policy' }],
    });
    const stopped = await runLab(plan, fakeSteps(['finished', 'finished', 'finished'], 2).steps);
    expect(stopped).toEqual({
      status: 'stopped',
      message: 'stopped before lab temperature:1.5: tis',
      finished: [
        { runId: 'r1', correction: 'on-policy' },
        { runId: 'r2', correction: 'none' },
      ],
    });
  });
});
