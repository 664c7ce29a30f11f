import { describe, expect, it } from 'vitest';
import { pausesAfter, useRunStore } from './live-run';

describe('pausesAfter: the live run’s paused intervals, from its status events', () => {
  it('opens a pause when the run is paused and closes it when it runs (or ends) again', () => {
    const paused = pausesAfter([], 'paused', 100);
    expect(paused).toEqual([{ from: 100, until: null }]);
    expect(pausesAfter(paused, 'paused', 150)).toBe(paused);
    const resumed = pausesAfter(paused, 'running', 400);
    expect(resumed).toEqual([{ from: 100, until: 400 }]);
    expect(pausesAfter(resumed, 'running', 500)).toBe(resumed);
    expect(pausesAfter(pausesAfter(resumed, 'paused', 600), 'stopped', 700)).toEqual([
      { from: 100, until: 400 },
      { from: 600, until: 700 },
    ]);
  });
  it('keeps them in the store from the worker’s status events', () => {
    const store = useRunStore.getState();
    store.begin('r', { preset: 'grpo-arith', steps: 5 } as Parameters<typeof store.begin>[1]);
    store.receive({ type: 'status', runId: 'r', status: 'paused' });
    expect(useRunStore.getState().pauses).toHaveLength(1);
    expect(useRunStore.getState().pauses[0].until).toBeNull();
    store.receive({ type: 'status', runId: 'r', status: 'running' });
    expect(useRunStore.getState().pauses[0].until).not.toBeNull();
  });
});
