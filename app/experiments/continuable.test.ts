import { describe, expect, it } from 'vitest';
import { continueLabel, isContinuable } from './continuable';

describe('isContinuable', () => {
  it('offers Continue for a stopped, failed or interrupted run that has a checkpoint', () => {
    for (const status of ['stopped', 'failed', 'interrupted'] as const)
      expect(isContinuable({ status, checkpointStep: 3 }), status).toBe(true);
  });

  it('not without a checkpoint, not for a run live in another tab, not for a finished, running or imported one', () => {
    expect(isContinuable({ status: 'stopped', checkpointStep: undefined })).toBe(false);
    expect(isContinuable({ status: 'interrupted', checkpointStep: 2, elsewhere: true })).toBe(false);
    for (const status of ['finished', 'running', 'paused', 'imported'] as const)
      expect(isContinuable({ status, checkpointStep: 3 }), status).toBe(false);
  });

  it('names the button by the run and the step it continues from, the same everywhere', () => {
    expect(continueLabel({ runId: 'grpo-m3x9k2', checkpointStep: 4 })).toBe('Continue run grpo-m3x9k2 from step 4');
  });
});
