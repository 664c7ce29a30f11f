import 'fake-indexeddb/auto';
import type { IDBPDatabase } from 'idb';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import type { JournalRecord, StartRecord, TurnRecord } from '../episodes/journal';
import { JournalConflict, checksumOk, withChecksum } from '../episodes/journal';
import type { RunOptions } from '../contract/options';
import { findPreset } from '../presets/table';
import type { JournalSchema } from './idb-journal';
import { IdbJournal } from './idb-journal';
import { DB_VERSION, openIdbStore } from './idb-store';
import { StorageFullError } from './run-store';

const OPTIONS = { ...findPreset('grpo-arith')!.defaults, steps: 4 } as RunOptions;
const cohort = (runId: string, step: number) => `${runId}/step ${step}/version 0/seed 7`;

function start(runId: string, step: number, episode: number): StartRecord {
  return withChecksum<StartRecord>({
    runId,
    step,
    episode,
    turn: 0,
    cohort: cohort(runId, step),
    writer: 'loop-1',
    kind: 'start',
    task: { id: 'add/47/35', prompt: '47+35=', answer: '82', data: { a: 47, b: 35 } },
    group: 'add/47/35',
    sample: episode,
    initial: [1, 7, 9],
    ms: 0.25,
  });
}

function turn(runId: string, step: number, episode: number, k: number): TurnRecord {
  return withChecksum<TurnRecord>({
    runId,
    step,
    episode,
    turn: k,
    cohort: cohort(runId, step),
    writer: 'loop-1',
    kind: 'turn',
    trace: {
      traceId: `t${episode}.${k}`,
      parentTraceId: k > 1 ? `t${episode}.${k - 1}` : null,
      promptDeltaIds: [3, 4],
      completionIds: [5, 2],
    },
    // Log-probs that float32 would round: the journal must give them back exactly.
    action: {
      rawLogProbs: [-0.1234567890123, -1e-9],
      behaviorLogProbs: [-0.1234567890124, -3e-9],
      terminated: k === 2,
      policyStep: 0,
      sampling: { temperature: 1, topK: 8 },
    },
    observation: {
      ids: k === 2 ? [] : [6],
      status: k === 2 ? 'completed' : 'running',
      ...(k === 2 ? { reward: 1 } : {}),
    },
    state: `{"turn":${k}}`,
    sampleMs: 1.5,
    envMs: 0.5,
  });
}

/** Two episodes of two turns each, committed out of key order. */
const episodes = (runId: string, step: number): JournalRecord[] => [
  start(runId, step, 1),
  turn(runId, step, 1, 1),
  start(runId, step, 0),
  turn(runId, step, 0, 1),
  turn(runId, step, 1, 2),
  turn(runId, step, 0, 2),
];

let n = 0;
const keys = (rs: JournalRecord[]) => rs.map((r) => [r.episode, r.turn]);

describe('IndexedDB episode journal', () => {
  it('gives back one step of one run in (episode, turn) order, exactly as committed', async () => {
    const { journal } = await openIdbStore(`journal-order-${++n}`);
    expect(journal.kind).toBe('indexeddb');
    await journal.commit(episodes('a', 3));
    await journal.commit([start('a', 4, 0)]);
    await journal.commit([start('b', 3, 0)]);
    const got = await journal.load('a', 3);
    expect(keys(got)).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    expect(got.find((r) => r.episode === 1 && r.turn === 1)).toEqual(turn('a', 3, 1, 1));
    expect(got.every(checksumOk)).toBe(true);
    expect(await journal.load('a', 5)).toEqual([]);
    expect(await journal.load('a', 2)).toEqual([]);
  });

  it('lists the steps of a run ascending, from keys', async () => {
    const { journal } = await openIdbStore(`journal-steps-${++n}`);
    for (const step of [12, 2, 7]) await journal.commit(episodes('run', step));
    await journal.commit(episodes('run-2', 1)); // a run id that extends this one's sorts after it
    await journal.commit(episodes('ru', 99));
    expect(await journal.steps('run')).toEqual([2, 7, 12]);
    expect(await journal.steps('run-2')).toEqual([1]);
    expect(await journal.steps('none')).toEqual([]);
  });

  it('refuses a key already committed and writes nothing of that commit', async () => {
    const { journal } = await openIdbStore(`journal-add-${++n}`);
    await journal.commit([start('c', 1, 0), turn('c', 1, 0, 1)]);
    const again = [start('c', 1, 1), turn('c', 1, 0, 1), turn('c', 1, 1, 1)];
    const err = await journal.commit(again).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JournalConflict);
    expect((err as Error).name).toBe('JournalConflict');
    expect((err as Error).message).toMatch(/step 1, episode 0, turn 1 of run 'c' is already committed/);
    // The new records before and after the conflicting one are not there either.
    expect(keys(await journal.load('c', 1))).toEqual([
      [0, 0],
      [0, 1],
    ]);
    // A key twice in one batch is refused the same way.
    await expect(journal.commit([start('c', 2, 0), start('c', 2, 0)])).rejects.toThrow(/step 2, episode 0, turn 0/);
    expect(await journal.steps('c')).toEqual([1]);
    // The store is usable after an aborted commit.
    await journal.commit([start('c', 1, 1)]);
    expect(keys(await journal.load('c', 1))).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
    ]);
  });

  it('refuses a record whose key is not integers before writing anything', async () => {
    const { journal } = await openIdbStore(`journal-key-${++n}`);
    await expect(journal.commit([start('d', 1, 0), { ...start('d', 1, 1), episode: 1.5 }])).rejects.toThrow(
      /non-negative integers.*1\.5/,
    );
    expect(await journal.steps('d')).toEqual([]);
  });

  it('turns a quota abort into StorageFullError', async () => {
    const quota = () => Promise.reject(new DOMException('quota', 'QuotaExceededError'));
    const store = { add: () => quota() };
    const db = { transaction: () => ({ store, done: quota(), abort() {} }) } as unknown as IDBPDatabase<JournalSchema>;
    await expect(new IdbJournal(db).commit([start('e', 1, 0)])).rejects.toBeInstanceOf(StorageFullError);
  });

  it('deleting a run deletes its journal, in the same transaction, and counts its bytes', async () => {
    const store = await openIdbStore(`journal-delete-${++n}`);
    for (const runId of ['gone', 'kept']) {
      await store.putRun({ runId, options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
      await store.commitStep(runId, { step: 1, metrics: { x: 1 } });
      await store.journal.commit(episodes(runId, 1));
      await store.journal.commit(episodes(runId, 2));
    }
    const withJournal = await store.deleteRun('gone');
    expect(await store.journal.steps('gone')).toEqual([]);
    expect(await store.journal.load('gone', 1)).toEqual([]);
    expect(await store.journal.steps('kept')).toEqual([1, 2]);
    // The same run without a journal counts fewer bytes.
    await store.putRun({ runId: 'bare', options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
    await store.commitStep('bare', { step: 1, metrics: { x: 1 } });
    const bare = await store.deleteRun('bare');
    expect(withJournal.steps).toBe(1);
    expect(withJournal.bytes).toBeGreaterThan(bare.bytes + 1000);
    // The journal's own deleteRun.
    await store.journal.deleteRun('kept');
    expect(await store.journal.steps('kept')).toEqual([]);
  });

  it('truncating a run keeps its journal: a recomputed step reuses committed turns', async () => {
    const store = await openIdbStore(`journal-truncate-${++n}`);
    await store.putRun({ runId: 't', options: OPTIONS, createdAt: 1, status: 'running', lastStep: 0 });
    for (const step of [1, 2, 3]) {
      await store.commitStep('t', { step, metrics: { step } });
      await store.journal.commit(episodes('t', step));
    }
    await store.truncateAfter('t', 1);
    expect((await store.stepMetrics('t')).map((s) => s.step)).toEqual([1]);
    expect(await store.journal.steps('t')).toEqual([1, 2, 3]);
    expect(await store.journal.load('t', 3)).toHaveLength(6);
  });
});

describe('IndexedDB schema upgrade to v3', () => {
  it('opens a version-2 database (as the v2 code wrote it) and keeps its runs, steps and checkpoint; the journal works', async () => {
    const name = 'dewpoint-v2-upgrade';
    // The v2 schema, frozen as shipped: the upgrade ladder must carry exactly this forward.
    const v2 = await openDB(name, 2, {
      upgrade(db) {
        db.createObjectStore('runs', { keyPath: 'runId' });
        db.createObjectStore('steps', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('groups', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('batches', { keyPath: ['runId', 'step'] });
        db.createObjectStore('checkpoints', { keyPath: 'runId' });
        db.createObjectStore('sessions', { keyPath: ['runId', 'step'] });
        db.createObjectStore('resume', { keyPath: 'runId' });
      },
    });
    const run = {
      runId: 'old-2',
      options: OPTIONS,
      createdAt: 1,
      status: 'stopped',
      lastStep: 2,
      message: 'stopped after step 2',
    };
    await v2.put('runs', run);
    await v2.put('steps', { runId: 'old-2', step: 1, metrics: { 'reward/mean': 0.25 } });
    await v2.put('steps', { runId: 'old-2', step: 2, metrics: { 'reward/mean': 0.5 } });
    await v2.put('checkpoints', { runId: 'old-2', step: 2, files: { 'config.json': Uint8Array.of(3) } });
    v2.close();

    expect(DB_VERSION).toBe(3);
    const store = await openIdbStore(name);
    expect(await store.listRuns()).toEqual([run]);
    expect((await store.stepMetrics('old-2')).map((s) => s.metrics['reward/mean'])).toEqual([0.25, 0.5]);
    expect((await store.latestCheckpoint('old-2'))?.step).toBe(2);
    expect(await store.journal.steps('old-2')).toEqual([]);
    await store.journal.commit(episodes('old-2', 3));
    expect(keys(await store.journal.load('old-2', 3))).toHaveLength(6);
    expect((await store.deleteRun('old-2')).steps).toBe(2);
    expect(await store.journal.steps('old-2')).toEqual([]);
  });
});
