/**
 * The IndexedDB home of the run store (idb). Schema version 1; `upgrade` is a ladder of
 * `if (oldVersion < n)` steps so later versions add stores without losing data. A step is one
 * read-write transaction over every store it touches, with `durability: 'strict'` so a committed
 * step survives a crash; a transaction aborted for quota (QuotaExceededError) becomes a
 * `StorageFullError` that pauses the run instead of hanging.
 */
import type { DBSchema, IDBPDatabase } from 'idb';
import { openDB } from 'idb';
import type { CheckpointFiles } from '../model/checkpoint';
import type { BatchRecord, GroupRecord, RunStatus } from '../protocol';
import type { EvalRecord, RunRecord, RunStore, StepCommit } from './run-store';
import { StorageFullError } from './run-store';

export const DB_NAME = 'dewpoint';
export const DB_VERSION = 1;

interface Schema extends DBSchema {
  runs: { key: string; value: RunRecord };
  steps: { key: [string, number]; value: { runId: string; step: number; metrics: Record<string, number>; evaluation?: EvalRecord }; indexes: { byRun: string } };
  groups: { key: [string, number]; value: { runId: string; step: number; groups: GroupRecord[] }; indexes: { byRun: string } };
  batches: { key: [string, number]; value: { runId: string; step: number; batch: BatchRecord } };
  checkpoints: { key: string; value: { runId: string; step: number; files: CheckpointFiles } };
}

export async function openIdbStore(): Promise<IdbRunStore> {
  const db = await openDB<Schema>(DB_NAME, DB_VERSION, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) {
        db.createObjectStore('runs', { keyPath: 'runId' });
        db.createObjectStore('steps', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('groups', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('batches', { keyPath: ['runId', 'step'] });
        db.createObjectStore('checkpoints', { keyPath: 'runId' });
      }
    },
    blocked() {
      console.warn('dewpoint: an older tab holds the database open; close it to upgrade');
    },
  });
  return new IdbRunStore(db);
}

/** Runs a write transaction; a quota abort becomes StorageFullError, any other abort rethrows. */
export async function write<T>(p: Promise<T>, done: Promise<void>): Promise<T> {
  try {
    const [value] = await Promise.all([p, done]);
    return value;
  } catch (e) {
    const err = e as DOMException;
    if (err?.name === 'QuotaExceededError') throw new StorageFullError('browser storage is full: the run is paused; free space (delete old runs) and resume');
    throw e;
  }
}

export class IdbRunStore implements RunStore {
  readonly kind = 'indexeddb' as const;
  constructor(private readonly db: IDBPDatabase<Schema>) {}

  async putRun(run: RunRecord) {
    const tx = this.db.transaction('runs', 'readwrite', { durability: 'strict' });
    await write(tx.store.put(run), tx.done);
  }

  async commitStep(runId: string, c: StepCommit) {
    const tx = this.db.transaction(['runs', 'steps', 'groups', 'batches'], 'readwrite', { durability: 'strict' });
    const run = await tx.objectStore('runs').get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    const writes: Promise<unknown>[] = [tx.objectStore('steps').put({ runId, step: c.step, metrics: c.metrics, ...(c.evaluation ? { evaluation: c.evaluation } : {}) })];
    if (c.groups) writes.push(tx.objectStore('groups').put({ runId, step: c.step, groups: c.groups }));
    if (c.batch) writes.push(tx.objectStore('batches').put({ runId, step: c.step, batch: c.batch }));
    writes.push(tx.objectStore('runs').put({ ...run, lastStep: c.step })); // the commit record, last
    await write(Promise.all(writes), tx.done);
  }

  async setStatus(runId: string, status: RunStatus, message?: string) {
    const tx = this.db.transaction('runs', 'readwrite', { durability: 'strict' });
    const run = await tx.store.get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    await write(tx.store.put({ ...run, status, message }), tx.done);
  }

  async saveCheckpoint(runId: string, step: number, files: CheckpointFiles) {
    const tx = this.db.transaction('checkpoints', 'readwrite', { durability: 'strict' });
    await write(tx.store.put({ runId, step, files }), tx.done);
  }

  async listRuns() {
    return (await this.db.getAll('runs')).sort((a, b) => b.createdAt - a.createdAt);
  }

  async stepMetrics(runId: string) {
    return (await this.db.getAllFromIndex('steps', 'byRun', runId)).sort((a, b) => a.step - b.step).map((s) => ({ step: s.step, metrics: s.metrics }));
  }

  async evaluations(runId: string) {
    return (await this.db.getAllFromIndex('steps', 'byRun', runId)).sort((a, b) => a.step - b.step).flatMap((s) => (s.evaluation ? [s.evaluation] : []));
  }

  async groupSteps(runId: string) {
    return (await this.db.getAllKeysFromIndex('groups', 'byRun', runId)).map(([, step]) => step).sort((a, b) => a - b);
  }

  async groupsAt(runId: string, step: number) {
    return (await this.db.get('groups', [runId, step]))?.groups ?? null;
  }

  async batchAt(runId: string, step: number) {
    return (await this.db.get('batches', [runId, step]))?.batch ?? null;
  }

  async latestCheckpoint(runId: string) {
    const c = await this.db.get('checkpoints', runId);
    return c ? { step: c.step, files: c.files } : null;
  }
}
