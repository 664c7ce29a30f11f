import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { RunOptions } from '../contract/options';
import type { RunEvent } from '../contract/records';
import { findPreset } from '../presets/table';
import type { Trainer } from '../presets/trainers';
import { MemoryRunStore } from '../store/run-store';
import { runLoop, type ActiveRun, type LoopServices } from './loop';

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

/** Runs `trainer` for two steps from grpo-arith's options (a base checkpoint: the loop checkpoints step 0 and the last). */
async function twoSteps(trainer: Trainer, extra: Partial<LoopServices> = {}) {
  const o = { ...findPreset('grpo-arith')!.defaults, steps: 2, evalEvery: 1, checkpointEvery: 0 } as RunOptions;
  const events: RunEvent[] = [];
  const store = new MemoryRunStore();
  const run: ActiveRun = { id: 'r', status: 'running', wake: null, done: null, ended: false };
  const services = { store, ops: createCpuOps, backendChoice: () => null, trainer: async () => trainer, ...extra };
  await runLoop(services, run, o, (e) => events.push(e), null, 'test');
  expect(events.at(-1)).toMatchObject({ type: 'status', status: 'finished' });
  return { events, store };
}

describe('runLoop: what it tells and keeps', () => {
  /** A trainer whose checkpoints are counted (files of one byte). */
  const checkpointing = () => {
    const written: number[] = [];
    const trainer: Trainer = {
      ...fakeTrainer(4),
      checkpoints: {
        write: async (info) => (
          written.push(info.step as number),
          { files: { 'model.bin': new Uint8Array(1) } as never, resume: {} as never }
        ),
        resume: () => {},
      },
    };
    return { trainer, written };
  };

  it("checkpoints the base and the last step, and none with services' checkpoints false (the CLI)", async () => {
    const kept = checkpointing();
    const { events } = await twoSteps(kept.trainer);
    expect(kept.written).toEqual([0, 2]);
    expect(events.filter((e) => e.type === 'checkpoint').map((e) => e.step)).toEqual([0, 2]);
    const none = checkpointing();
    const { events: quiet, store } = await twoSteps(none.trainer, { checkpoints: false });
    expect(none.written).toEqual([]);
    expect(quiet.some((e) => e.type === 'checkpoint')).toBe(false);
    expect(await store.latestCheckpoint('r')).toBeNull();
  });

  it("tells each evaluation's own metrics with it, and stores them with the step", async () => {
    const trainer: Trainer = {
      ...fakeTrainer(4),
      evaluate: async () => ({ n: 4, accuracy: 0.5, meanLength: 3, samples: [], errors: 1 }),
    };
    const { events, store } = await twoSteps(trainer);
    expect(events.flatMap((e) => (e.type === 'eval' ? [[e.step, e.metrics]] : []))).toEqual([
      [0, { 'eval/errors': 1 }],
      [1, { 'eval/errors': 1 }],
      [2, { 'eval/errors': 1 }],
    ]);
    expect(events.flatMap((e) => (e.type === 'step' ? [e.metrics] : []))).toEqual([
      { 'reward/mean': 0.5, 'eval/errors': 1 },
      { 'reward/mean': 0.5, 'eval/errors': 1 },
    ]);
    expect((await store.stepMetrics('r')).map((s) => s.metrics['eval/errors'])).toEqual([1, 1, 1]);
    // Each step event carries its commit time as the store keeps it.
    const times = await store.stepTimes('r');
    expect(events.flatMap((e) => (e.type === 'step' ? [e.t] : []))).toEqual(times.map((s) => s.t));
  });
});
