import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { RunOptions } from '../contract/options';
import type { RunEvent } from '../contract/records';
import { findPreset } from '../presets/table';
import type { Trainer } from '../presets/trainers';
import { MemoryRunStore } from '../store/run-store';
import { runLoop, type ActiveRun } from './loop';

/** A trainer that computes nothing and keeps no checkpoint: an evaluation of `n` items, and `evalCount` when it says one. */
function fakeTrainer(n: number, evalCount?: number): Trainer {
  return {
    config: {},
    next: async () => ({ metrics: { 'reward/mean': 0.5 } }),
    evaluate: async () => ({ n, accuracy: 0.5, meanLength: 3, samples: [] }),
    ...(evalCount !== undefined ? { evalCount } : {}),
  };
}

async function evaluatingTotals(trainer: Trainer, evalN: number) {
  const o = {
    ...findPreset('grpo-code')!.defaults,
    steps: 1,
    evalEvery: 1,
    evalN,
    checkpointEvery: 0,
  } as RunOptions;
  const events: RunEvent[] = [];
  const run: ActiveRun = { id: 'r', status: 'running', wake: null, done: null, ended: false };
  const services = {
    store: new MemoryRunStore(),
    ops: createCpuOps,
    backendChoice: () => null,
    trainer: async () => trainer,
  };
  await runLoop(services, run, o, (e) => events.push(e), null, 'test');
  expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
  return {
    announced: events.flatMap((e) => (e.type === 'phase' && e.phase === 'evaluating' ? [[e.step, e.total]] : [])),
    evaluated: events.flatMap((e) => (e.type === 'eval' ? [[e.step, e.n]] : [])),
  };
}

describe('runLoop: the evaluation it announces', () => {
  it('announces the items the trainer evaluates when it says how many (grpo-code: 62 held-out tasks for evalN 100)', async () => {
    const { announced, evaluated } = await evaluatingTotals(fakeTrainer(62, 62), 100);
    expect(evaluated).toEqual([
      [0, 62],
      [1, 62],
    ]);
    expect(announced).toEqual(evaluated);
  });

  it("announces the options' evalN when the trainer does not say", async () => {
    const { announced } = await evaluatingTotals(fakeTrainer(40), 40);
    expect(announced).toEqual([
      [0, 40],
      [1, 40],
    ]);
  });
});
