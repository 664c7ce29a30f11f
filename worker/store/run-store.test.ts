import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import type { BatchRecord, GroupRecord } from '../contract/records';
import { findPreset } from '../presets/table';
import { openIdbStore, write } from './idb-store';
import type { RunStore } from './run-store';
import { MemoryRunStore, StorageFullError } from './run-store';

const OPTIONS: RunOptions = {
  ...findPreset('grpo-arith')!.defaults,
  steps: 2,
  lr: 1e-4,
  seed: 1,
  evalEvery: 1,
  evalN: 4,
  checkpointEvery: 0,
} as RunOptions;
const GROUPS: GroupRecord[] = [
  { group: 't1', prompt: '1+2=', answer: '3', rewardMean: 0.5, rewardStd: 0.5, zeroStd: false, samples: [] },
];
const BATCH: BatchRecord = {
  rows: 1,
  width: 3,
  rowsNeeded: 1,
  efficiency: 1,
  tokens: ['<bos>', '1', '+'],
  sessionIds: Int32Array.of(1, 1, 1),
  layers: {
    segments: Float32Array.of(1, 1, 1),
    responseMask: Float32Array.of(0, 1, 1),
    advantage: Float32Array.of(0, 0.5, 0.5),
    mismatch: new Float32Array(3),
    dlogp: Float32Array.of(0, -0.1, -0.1),
    version: Float32Array.of(-1, 0, 0),
  },
};

let n = 0;
const stores: [string, () => Promise<RunStore>][] = [
  ['memory', async () => new MemoryRunStore()],
  ['indexeddb (fake-indexeddb)', () => openIdbStore()],
];

describe.each(stores)('run store: %s', (_name, open) => {
  it('keeps a run, its steps, groups, batches, evaluations and checkpoint, in order', async () => {
    const store = await open();
    const runId = `grpo-${++n}`;
    await store.putRun({ runId, options: OPTIONS, createdAt: 1000 + n, status: 'running', lastStep: 0 });
    await store.commitStep(runId, {
      step: 1,
      metrics: { 'reward/mean': 0.25 },
      groups: GROUPS,
      batch: BATCH,
      evaluation: { step: 1, accuracy: 0.5, meanLength: 11, n: 4 },
    });
    await store.commitStep(runId, { step: 2, metrics: { 'reward/mean': 0.5 } });
    await store.setStatus(runId, 'finished');
    await store.saveCheckpoint(runId, 2, {
      'model.safetensors': Uint8Array.of(1, 2),
      'config.json': Uint8Array.of(3),
      'tokenizer.json': Uint8Array.of(4),
      'dewpoint.json': Uint8Array.of(5),
    });
    const run = (await store.listRuns()).find((r) => r.runId === runId);
    expect(run).toMatchObject({ status: 'finished', lastStep: 2, options: OPTIONS });
    expect(await store.stepMetrics(runId)).toEqual([
      { step: 1, metrics: { 'reward/mean': 0.25 } },
      { step: 2, metrics: { 'reward/mean': 0.5 } },
    ]);
    expect(await store.evaluations(runId)).toEqual([{ step: 1, accuracy: 0.5, meanLength: 11, n: 4 }]);
    expect(await store.groupSteps(runId)).toEqual([1]);
    expect(await store.groupsAt(runId, 1)).toEqual(GROUPS);
    expect(await store.groupsAt(runId, 2)).toBeNull();
    const batch = (await store.batchAt(runId, 1))!;
    expect(batch.layers.dlogp).toBeInstanceOf(Float32Array);
    expect([...batch.layers.advantage]).toEqual([0, 0.5, 0.5]);
    expect((await store.latestCheckpoint(runId))?.step).toBe(2);
  });

  it("answers each commit's time as stepTimes has it (the live 'step' event carries it)", async () => {
    const store = await open();
    const runId = `times-${++n}`;
    await store.putRun({ runId, options: OPTIONS, createdAt: 1000 + n, status: 'running', lastStep: 0 });
    const before = Date.now();
    const answered = [
      await store.commitStep(runId, { step: 1, metrics: { x: 1 } }),
      await store.commitStep(runId, { step: 2, metrics: { x: 2 } }),
    ];
    const times = await store.stepTimes(runId);
    expect(times.map((s) => s.step)).toEqual([1, 2]);
    expect(times.map((s) => s.t)).toEqual(answered);
    for (const t of answered) expect(t).toBeGreaterThanOrEqual(before);
  });

  it("keeps each step's run compute time: a stop between two steps adds nothing to it", async () => {
    const store = await open();
    const runId = `active-${++n}`;
    await store.putRun({ runId, options: OPTIONS, createdAt: 1000 + n, status: 'running', lastStep: 0 });
    await store.commitStep(runId, { step: 1, metrics: { x: 1 }, ms: 1500 });
    // Whatever time passes here (a stop, a Continue), only the steps' own ms count.
    await new Promise((r) => setTimeout(r, 20));
    await store.commitStep(runId, { step: 2, metrics: { x: 2 }, ms: 500 });
    expect((await store.stepTimes(runId)).map((s) => [s.step, s.activeMs])).toEqual([
      [1, 1500],
      [2, 2000],
    ]);
  });

  it('refuses a step for an unknown run and writes nothing', async () => {
    const store = await open();
    await expect(store.commitStep('nope', { step: 1, metrics: { x: 1 }, groups: GROUPS })).rejects.toThrow(
      /no run 'nope'/,
    );
    expect(await store.groupSteps('nope')).toEqual([]);
    expect(await store.stepMetrics('nope')).toEqual([]);
  });
});

describe('IndexedDB store', () => {
  it('survives reopening (a reload): runs and steps are still there', async () => {
    const first = await openIdbStore();
    await first.putRun({ runId: 'reload-1', options: OPTIONS, createdAt: 5, status: 'running', lastStep: 0 });
    await first.commitStep('reload-1', { step: 1, metrics: { a: 1 } });
    const again = await openIdbStore();
    expect((await again.listRuns()).some((r) => r.runId === 'reload-1' && r.lastStep === 1)).toBe(true);
  });

  it('turns a quota abort into StorageFullError with a message saying the run is paused', async () => {
    const quota = Promise.reject(new DOMException('quota', 'QuotaExceededError'));
    await expect(write(Promise.resolve(1), quota)).rejects.toBeInstanceOf(StorageFullError);
    await expect(write(Promise.resolve(1), Promise.reject(new DOMException('x', 'AbortError')))).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
