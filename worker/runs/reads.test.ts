import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import type { ImportedRunOptions } from '../contract/records';
import { findPreset } from '../presets/table';
import { openIdbStore } from '../store/idb-store';
import type { RunRecord, RunStore } from '../store/run-store';
import { MemoryRunStore } from '../store/run-store';
import { runHistory, stepDistributions } from './reads';
import { groupOf, groupSample } from './testing/groups';

const OPTIONS = { ...findPreset('grpo-arith')!.defaults, steps: 2 } as RunOptions;
const sample = groupSample;
const group = groupOf;

let n = 0;
describe.each([
  ['memory', async (): Promise<RunStore> => new MemoryRunStore()],
  ['indexeddb (fake-indexeddb)', (): Promise<RunStore> => openIdbStore(`reads-${++n}`)],
])('reads of a stored run: %s', (_name, open) => {
  it("includes step 0's metrics when its evaluation measured pass rates, and not otherwise", async () => {
    const store = await open();
    await store.putRun({ runId: 'p', options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
    const evaluation = { step: 0, accuracy: 0.5, meanLength: 3, n: 4 };
    await store.commitStep('p', { step: 0, metrics: { 'eval/pass@1': 0.25, 'eval/pass@4': 0.5 }, evaluation });
    await store.commitStep('p', { step: 1, metrics: { 'reward/mean': 0.25 } });
    const h = await runHistory(store, 'p');
    expect(h.steps.map((s) => [s.step, s.metrics])).toEqual([
      [0, { 'eval/pass@1': 0.25, 'eval/pass@4': 0.5 }],
      [1, { 'reward/mean': 0.25 }],
    ]);
  });

  it('gives each step the time it was committed, and none for an imported run', async () => {
    const store = await open();
    await store.putRun({ runId: 'r', options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
    const before = Date.now();
    await store.commitStep('r', { step: 0, metrics: {}, evaluation: { step: 0, accuracy: 0.5, meanLength: 3, n: 4 } });
    await store.commitStep('r', { step: 1, metrics: { 'reward/mean': 0.25 } });
    await store.commitStep('r', { step: 2, metrics: { 'reward/mean': 0.5 } });
    const after = Date.now();
    const h = await runHistory(store, 'r');
    expect(h.steps.map((s) => s.step)).toEqual([1, 2]);
    const [t1, t2] = h.steps.map((s) => s.t!);
    expect(before).toBeLessThanOrEqual(t1);
    expect(t1).toBeLessThanOrEqual(t2);
    expect(t2).toBeLessThanOrEqual(after);
    expect(h.evaluations).toEqual([{ step: 0, accuracy: 0.5, meanLength: 3, n: 4 }]);

    const imported = { preset: 'verl-import', steps: 1 } as unknown as ImportedRunOptions;
    await store.putRun({
      runId: 'v',
      options: imported,
      createdAt: 1,
      status: 'imported',
      lastStep: 0,
    } as unknown as RunRecord);
    await store.commitStep('v', { step: 1, metrics: { 'reward/mean': 1 } });
    expect((await runHistory(store, 'v')).steps).toEqual([{ step: 1, metrics: { 'reward/mean': 1 } }]);
  });

  it('gives per kept step the samples’ rewards and lengths, without DPO pairs or unrecorded lengths', async () => {
    const store = await open();
    await store.putRun({ runId: 'd', options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
    await store.commitStep('d', { step: 1, metrics: {}, groups: [group([sample(1, 4), sample(0, NaN)])] });
    await store.commitStep('d', { step: 2, metrics: {} });
    await store.commitStep('d', {
      step: 3,
      metrics: {},
      groups: [group([sample(0.5, 2)]), group([sample(9, 9)], 'dpo-pair')],
    });
    await store.commitStep('d', { step: 4, metrics: {}, groups: [group([sample(9, 9)], 'dpo-pair')] });
    expect(await stepDistributions(store, 'd')).toEqual([
      { step: 1, rewards: [1, 0], lengths: [4] },
      { step: 3, rewards: [0.5], lengths: [2] },
    ]);
    expect(await stepDistributions(store, 'nope')).toEqual([]);
  });
});
