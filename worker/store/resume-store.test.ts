import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import type { CheckpointFiles } from '../model/checkpoint';
import type { RunOptions } from '../contract/options';
import type { Session } from '../rl/types';
import { findPreset } from '../presets/table';
import { DB_VERSION, openIdbStore } from './idb-store';
import type { ResumeRecord, RunStore } from './run-store';
import { MemoryRunStore } from './run-store';
import { decodeSessions, encodeSessions } from './sessions-codec';

const OPTIONS = {
  ...findPreset('grpo-arith')!.defaults,
  steps: 4,
  checkpointEvery: 1,
} as RunOptions;
const FILES: CheckpointFiles = {
  'model.safetensors': Uint8Array.of(1, 2),
  'config.json': Uint8Array.of(3),
  'tokenizer.json': Uint8Array.of(4),
  'dewpoint.json': Uint8Array.of(5),
};
const RESUME: ResumeRecord = {
  optimizer: {
    t: 2,
    m: new Map([['model.norm.weight', Float32Array.of(0.5, -0.25)]]),
    v: new Map([['model.norm.weight', Float32Array.of(1e-8, 3e-7)]]),
  },
  position: { step: 2, tasksDrawn: 32 },
};

/** Two sessions of one group; log-probs that float32 would round (a replay must read them exactly). */
const SESSIONS: Session[] = [
  {
    task: 'add/47/35',
    group: 'add/47/35',
    sample: 0,
    attempt: 0,
    status: 'completed',
    reward: 1,
    components: { format: 1, correct: 1 },
    detail: 'ok',
    calls: [
      {
        promptIds: Int32Array.of(1, 7, 9, 3),
        sampledIds: Int32Array.of(11, 12, 2),
        behaviorLogProbs: Float64Array.of(-0.1234567890123, -2.5, -1e-9),
        rawLogProbs: Float64Array.of(-0.2, -2.4, -3e-9),
        finishReason: 'stop',
        version: 1,
      },
    ],
  },
  {
    task: 'add/47/35',
    group: 'add/47/35',
    sample: 1,
    attempt: 0,
    status: 'truncated',
    termination: 'max_response_length',
    reward: 0,
    calls: [
      {
        promptIds: Int32Array.of(1, 7),
        sampledIds: Int32Array.of(5),
        behaviorLogProbs: Float64Array.of(-0.7),
        finishReason: 'length',
        version: 1,
      },
      {
        promptIds: Int32Array.of(1, 7, 5, 8),
        sampledIds: Int32Array.of(6, 6),
        behaviorLogProbs: Float64Array.of(-0.3, -0.4),
        rawLogProbs: Float64Array.of(-0.31, -0.41),
        finishReason: 'length',
        version: 1,
      },
    ],
  },
];

let n = 0;
const stores: [string, () => Promise<RunStore>][] = [
  ['memory', async () => new MemoryRunStore()],
  ['indexeddb (fake-indexeddb)', () => openIdbStore()],
];

describe('sessions codec', () => {
  it('packs a step into four columns and gives back every call exactly', () => {
    const row = encodeSessions(SESSIONS);
    expect(row.sampledIds).toEqual(Int32Array.of(11, 12, 2, 5, 6, 6));
    expect(row.promptIds.length).toBe(4 + 2 + 4);
    const back = decodeSessions(row);
    expect(back[0].calls[0].behaviorLogProbs).toEqual(Float64Array.of(-0.1234567890123, -2.5, -1e-9));
    expect(back[1].calls[0].rawLogProbs).toBeNull(); // not recorded stays not recorded, never zeros
    expect(back[1].calls[1]).toEqual({
      promptIds: Int32Array.of(1, 7, 5, 8),
      sampledIds: Int32Array.of(6, 6),
      behaviorLogProbs: Float64Array.of(-0.3, -0.4),
      rawLogProbs: Float64Array.of(-0.31, -0.41),
      finishReason: 'length',
      version: 1,
    });
    expect(back.map(({ calls: _c, ...s }) => s)).toEqual([
      {
        task: 'add/47/35',
        group: 'add/47/35',
        sample: 0,
        attempt: 0,
        status: 'completed',
        reward: 1,
        components: { format: 1, correct: 1 },
        detail: 'ok',
      },
      {
        task: 'add/47/35',
        group: 'add/47/35',
        sample: 1,
        attempt: 0,
        status: 'truncated',
        termination: 'max_response_length',
        reward: 0,
        components: {},
      },
    ]);
  });

  it('refuses a call whose log-probs do not line up with its ids', () => {
    const bad = [{ ...SESSIONS[0], calls: [{ ...SESSIONS[0].calls[0], behaviorLogProbs: Float64Array.of(-1) }] }];
    expect(() => encodeSessions(bad)).toThrow(/3 sampled ids but 1 behavior/);
  });
});

describe.each(stores)('continuation records: %s', (_name, open) => {
  it('keeps the sessions of a step with their ids and log-probs', async () => {
    const store = await open();
    const runId = `sessions-${++n}`;
    await store.putRun({ runId, options: OPTIONS, createdAt: n, status: 'running', lastStep: 0 });
    await store.commitStep(runId, { step: 1, metrics: { 'reward/mean': 0.5 }, sessions: SESSIONS });
    await store.commitStep(runId, { step: 2, metrics: { 'reward/mean': 0.5 } });
    const got = (await store.sessionsAt(runId, 1))!;
    expect(got.map((s) => [s.sample, s.status, s.reward])).toEqual([
      [0, 'completed', 1],
      [1, 'truncated', 0],
    ]);
    expect(got[0].calls[0].sampledIds).toEqual(Int32Array.of(11, 12, 2));
    expect(got[0].calls[0].behaviorLogProbs[0]).toBe(-0.1234567890123);
    expect(got[0].calls[0].rawLogProbs).toEqual(Float64Array.of(-0.2, -2.4, -3e-9));
    expect(got[1].calls.map((c) => c.promptIds.length)).toEqual([2, 4]);
    expect(await store.sessionsAt(runId, 2)).toBeNull();
  });

  it('a checkpoint saved with AdamW state and position makes the run continuable; one without does not', async () => {
    const store = await open();
    const runId = `resume-${++n}`;
    await store.putRun({ runId, options: OPTIONS, createdAt: n, status: 'running', lastStep: 0 });
    await store.commitStep(runId, { step: 1, metrics: {} });
    expect(await store.resumePoint(runId)).toBeNull();
    await store.saveCheckpoint(runId, 2, FILES, RESUME);
    expect((await store.listRuns()).find((r) => r.runId === runId)?.checkpointStep).toBe(2);
    const point = (await store.resumePoint(runId))!;
    expect(point.step).toBe(2);
    expect(point.files['config.json']).toEqual(Uint8Array.of(3));
    expect(point.resume.position).toEqual({ step: 2, tasksDrawn: 32 });
    expect(point.resume.optimizer.t).toBe(2);
    expect(point.resume.optimizer.v.get('model.norm.weight')).toEqual(Float32Array.of(1e-8, 3e-7));
    await store.saveCheckpoint(runId, 3, FILES);
    expect((await store.listRuns()).find((r) => r.runId === runId)?.checkpointStep).toBeUndefined();
    expect(await store.resumePoint(runId)).toBeNull();
    expect((await store.latestCheckpoint(runId))?.step).toBe(3);
  });

  it('truncating after a step deletes the later steps, groups, batches and sessions of that run only', async () => {
    const store = await open();
    const [runId, other] = [`trunc-${++n}`, `trunc-other-${n}`];
    for (const id of [runId, other]) {
      await store.putRun({ runId: id, options: OPTIONS, createdAt: n, status: 'running', lastStep: 0 });
      for (const step of [1, 2, 3]) {
        const group = {
          group: `g${step}`,
          prompt: '1+1=',
          answer: '2',
          rewardMean: 0,
          rewardStd: 0,
          zeroStd: true,
          samples: [],
        };
        await store.commitStep(id, { step, metrics: { step }, groups: [group], sessions: SESSIONS });
      }
    }
    await store.truncateAfter(runId, 1);
    expect((await store.stepMetrics(runId)).map((s) => s.step)).toEqual([1]);
    expect(await store.groupSteps(runId)).toEqual([1]);
    expect(await store.sessionsAt(runId, 2)).toBeNull();
    expect(await store.sessionsAt(runId, 1)).not.toBeNull();
    expect((await store.listRuns()).find((r) => r.runId === runId)?.lastStep).toBe(1);
    expect((await store.stepMetrics(other)).map((s) => s.step)).toEqual([1, 2, 3]);
    expect(await store.sessionsAt(other, 3)).not.toBeNull();
    await store.commitStep(runId, { step: 2, metrics: { again: 1 } });
    expect(await store.stepMetrics(runId)).toEqual([
      { step: 1, metrics: { step: 1 } },
      { step: 2, metrics: { again: 1 } },
    ]);
  });
});

describe('IndexedDB schema upgrade', () => {
  it('opens a version-1 database (as the v1 code wrote it) and keeps its runs, steps and checkpoint', async () => {
    const name = 'dewpoint-v1-upgrade';
    // The v1 schema, frozen as shipped: the upgrade ladder must carry exactly this forward.
    const v1 = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: 'runId' });
        db.createObjectStore('steps', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('groups', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('batches', { keyPath: ['runId', 'step'] });
        db.createObjectStore('checkpoints', { keyPath: 'runId' });
      },
    });
    await v1.put('runs', {
      runId: 'old-1',
      options: OPTIONS,
      createdAt: 1,
      status: 'stopped',
      lastStep: 2,
      message: 'stopped after step 2',
    });
    await v1.put('steps', { runId: 'old-1', step: 1, metrics: { 'reward/mean': 0.25 } });
    await v1.put('steps', {
      runId: 'old-1',
      step: 2,
      metrics: { 'reward/mean': 0.5 },
      evaluation: { step: 2, accuracy: 0.5, meanLength: 9, n: 4 },
    });
    await v1.put('checkpoints', { runId: 'old-1', step: 2, files: FILES });
    v1.close();

    expect(DB_VERSION).toBe(3);
    const store = await openIdbStore(name);
    expect(await store.listRuns()).toEqual([
      {
        runId: 'old-1',
        options: OPTIONS,
        createdAt: 1,
        status: 'stopped',
        lastStep: 2,
        message: 'stopped after step 2',
      },
    ]);
    expect((await store.stepMetrics('old-1')).map((s) => s.metrics['reward/mean'])).toEqual([0.25, 0.5]);
    expect(await store.evaluations('old-1')).toEqual([{ step: 2, accuracy: 0.5, meanLength: 9, n: 4 }]);
    expect((await store.latestCheckpoint('old-1'))?.step).toBe(2);
    // A v1 checkpoint has no AdamW state: kept for download, not offered for continuing.
    expect(await store.resumePoint('old-1')).toBeNull();
    expect(await store.sessionsAt('old-1', 1)).toBeNull();
    // The v2 stores work on the upgraded database.
    await store.commitStep('old-1', { step: 3, metrics: {}, sessions: SESSIONS });
    expect((await store.sessionsAt('old-1', 3))?.length).toBe(2);
    await store.saveCheckpoint('old-1', 3, FILES, RESUME);
    expect((await store.resumePoint('old-1'))?.resume.position.tasksDrawn).toBe(32);
  });
});
