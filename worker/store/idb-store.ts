/**
 * The IndexedDB home of the run store (idb). Schema version 3; `upgrade` is a ladder of
 * `if (oldVersion < n)` steps so later versions add stores without losing data (v1: runs, steps,
 * groups, batches, checkpoints; v2: sessions, and `resume` (AdamW state and trainer position
 * beside the checkpoint, kept apart so listing or downloading a checkpoint does not read them);
 * v3: `journal`, the episode journal keyed [runId, step, episode, turn] (idb-journal.ts, reached
 * as `store.journal`). Deleting a run deletes its journal in the same transaction; truncating a
 * run does not touch it, since a recomputed step reuses its committed turns.
 * A step is one read-write transaction over every store it touches, with `durability: 'strict'`
 * so a committed step survives a crash; a transaction aborted for quota (QuotaExceededError)
 * becomes a `StorageFullError` that pauses the run instead of hanging.
 */
import type { DBSchema, IDBPDatabase } from 'idb';
import { openDB } from 'idb';
import type { BatchRecord, FailedEpisode, FlowCloud, GroupRecord, RunStatus } from '../contract/records';
import type { BackendName, RunBackendChoice } from '../contract/system';
import type { JournalSchema } from './idb-journal';
import { IdbJournal, runRange } from './idb-journal';
import type {
  EvalRecord,
  ResumeRecord,
  RunCheckpointFiles,
  RunMeta,
  RunRecord,
  RunStore,
  StepCommit,
} from './run-store';
import { StorageFullError, approxBytes, committedRun, hasStepMetrics, withMeta } from './run-store';
import type { SessionsRow } from './sessions-codec';
import { decodeSessions, encodeSessions } from './sessions-codec';

const DB_NAME = 'dewpoint';
export const DB_VERSION = 3;

interface Schema extends DBSchema, JournalSchema {
  runs: { key: string; value: RunRecord };
  steps: {
    key: [string, number];
    value: {
      runId: string;
      step: number;
      metrics: Record<string, number>;
      evaluation?: EvalRecord;
      flow?: FlowCloud;
      /** When the step was committed (ms since the epoch); absent in steps stored before it was kept. */
      t?: number;
      /** The run's compute time up to this step (ms); absent on steps stored before it was kept. */
      activeMs?: number;
    };
    indexes: { byRun: string };
  };
  groups: {
    key: [string, number];
    value: { runId: string; step: number; groups: GroupRecord[] };
    indexes: { byRun: string };
  };
  batches: { key: [string, number]; value: { runId: string; step: number; batch: BatchRecord } };
  checkpoints: { key: string; value: { runId: string; step: number; files: RunCheckpointFiles } };
  sessions: { key: [string, number]; value: { runId: string; step: number } & SessionsRow };
  resume: { key: string; value: { runId: string; step: number } & ResumeRecord };
}

/** Stores keyed [runId, step]: what one step writes, and what truncating a run deletes. */
const PER_STEP = ['steps', 'groups', 'batches', 'sessions'] as const;

/** Opens (creating or upgrading) the database; `name` only for tests. */
export async function openIdbStore(name = DB_NAME): Promise<IdbRunStore> {
  const db = await openDB<Schema>(name, DB_VERSION, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) {
        db.createObjectStore('runs', { keyPath: 'runId' });
        db.createObjectStore('steps', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('groups', { keyPath: ['runId', 'step'] }).createIndex('byRun', 'runId');
        db.createObjectStore('batches', { keyPath: ['runId', 'step'] });
        db.createObjectStore('checkpoints', { keyPath: 'runId' });
      }
      if (oldVersion < 2) {
        // v1 runs keep everything; their checkpoints have no AdamW state, so they cannot be continued.
        db.createObjectStore('sessions', { keyPath: ['runId', 'step'] });
        db.createObjectStore('resume', { keyPath: 'runId' });
      }
      if (oldVersion < 3) {
        db.createObjectStore('journal', { keyPath: ['runId', 'step', 'episode', 'turn'] });
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
    if (err?.name === 'QuotaExceededError')
      throw new StorageFullError('browser storage is full: the run is paused; free space (delete old runs) and resume');
    throw e;
  }
}

class IdbRunStore implements RunStore {
  readonly kind = 'indexeddb' as const;
  /** The episode journal, in the same database. */
  readonly journal: IdbJournal;
  constructor(private readonly db: IDBPDatabase<Schema>) {
    // Schema includes JournalSchema; idb's typed store-name lists are not covariant, hence the cast.
    this.journal = new IdbJournal(db as unknown as IDBPDatabase<JournalSchema>);
  }

  async putRun(run: RunRecord) {
    const tx = this.db.transaction('runs', 'readwrite', { durability: 'strict' });
    await write(tx.store.put(run), tx.done);
  }

  async commitStep(runId: string, c: StepCommit) {
    const tx = this.db.transaction(['runs', ...PER_STEP], 'readwrite', { durability: 'strict' });
    const run = await tx.objectStore('runs').get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    const t = Date.now();
    const committed = committedRun(run, c, t);
    const writes: Promise<unknown>[] = [
      tx.objectStore('steps').put({
        runId,
        step: c.step,
        metrics: c.metrics,
        t,
        // The run's compute time up to this step: Compare's time axis, without pauses and stops.
        activeMs: committed.activeMs,
        ...(c.evaluation ? { evaluation: c.evaluation } : {}),
        ...(c.flow ? { flow: c.flow } : {}),
      }),
    ];
    if (c.groups) writes.push(tx.objectStore('groups').put({ runId, step: c.step, groups: c.groups }));
    if (c.batch) writes.push(tx.objectStore('batches').put({ runId, step: c.step, batch: c.batch }));
    if (c.sessions) writes.push(tx.objectStore('sessions').put({ runId, step: c.step, ...encodeSessions(c.sessions) }));
    writes.push(tx.objectStore('runs').put(committed)); // the commit record, last
    await write(Promise.all(writes), tx.done);
    return t;
  }

  async setStatus(runId: string, status: RunStatus, message?: string, failedEpisode?: FailedEpisode) {
    const tx = this.db.transaction('runs', 'readwrite', { durability: 'strict' });
    const run = await tx.store.get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    await write(tx.store.put({ ...run, status, message, failedEpisode }), tx.done);
  }

  async updateMeta(runId: string, meta: RunMeta) {
    await this.updateRun(runId, (run) => withMeta(run, meta));
  }

  async setBackend(runId: string, backend: BackendName, choice?: RunBackendChoice) {
    await this.updateRun(runId, (run) => ({ ...run, backend, backendChoice: choice }));
  }

  private async updateRun(runId: string, f: (run: RunRecord) => RunRecord) {
    const tx = this.db.transaction('runs', 'readwrite', { durability: 'strict' });
    const run = await tx.store.get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    await write(tx.store.put(f(run)), tx.done);
  }

  async deleteRun(runId: string) {
    const stores = ['runs', 'checkpoints', 'resume', 'journal', ...PER_STEP] as const;
    const tx = this.db.transaction([...stores], 'readwrite', { durability: 'strict' });
    const run = await tx.objectStore('runs').get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    const all = IDBKeyRange.bound([runId, -Infinity], [runId, Infinity]);
    // Read what is deleted, to say how much it was: one pass, in the same transaction.
    const [steps, ...rest] = await Promise.all([
      tx.objectStore('steps').getAll(all),
      ...PER_STEP.filter((s) => s !== 'steps').map((s) => tx.objectStore(s).getAll(all)),
      tx.objectStore('checkpoints').get(runId),
      tx.objectStore('resume').get(runId),
      tx.objectStore('journal').getAll(runRange(runId)),
    ]);
    const bytes = approxBytes(run) + approxBytes(steps) + approxBytes(rest);
    await write(
      Promise.all([
        ...PER_STEP.map((s) => tx.objectStore(s).delete(all)),
        tx.objectStore('checkpoints').delete(runId),
        tx.objectStore('resume').delete(runId),
        tx.objectStore('journal').delete(runRange(runId)),
        tx.objectStore('runs').delete(runId),
      ]),
      tx.done,
    );
    return { steps: steps.filter((s) => s.step > 0).length, bytes };
  }

  async saveCheckpoint(runId: string, step: number, files: RunCheckpointFiles, resume?: ResumeRecord) {
    const tx = this.db.transaction(['runs', 'checkpoints', 'resume'], 'readwrite', { durability: 'strict' });
    const run = await tx.objectStore('runs').get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    const rest = { ...run };
    delete rest.checkpointStep;
    await write(
      Promise.all([
        tx.objectStore('checkpoints').put({ runId, step, files }),
        resume ? tx.objectStore('resume').put({ runId, step, ...resume }) : tx.objectStore('resume').delete(runId),
        tx.objectStore('runs').put(resume ? { ...rest, checkpointStep: step } : rest), // the commit record, last
      ]),
      tx.done,
    );
  }

  /** Deletes the later steps' records; never the journal (a recomputed step reuses its committed turns). */
  async truncateAfter(runId: string, step: number) {
    const tx = this.db.transaction(['runs', ...PER_STEP], 'readwrite', { durability: 'strict' });
    const run = await tx.objectStore('runs').get(runId);
    if (!run) throw new Error(`run store: no run '${runId}'`);
    const after = IDBKeyRange.bound([runId, step], [runId, Infinity], true);
    await write(
      Promise.all([
        ...PER_STEP.map((s) => tx.objectStore(s).delete(after)),
        tx.objectStore('runs').put({ ...run, lastStep: step }),
      ]),
      tx.done,
    );
  }

  async listRuns() {
    return (await this.db.getAll('runs')).sort((a, b) => b.createdAt - a.createdAt);
  }

  async stepMetrics(runId: string) {
    const steps = await this.db.getAllFromIndex('steps', 'byRun', runId);
    return steps
      .filter(hasStepMetrics)
      .sort((a, b) => a.step - b.step)
      .map((s) => ({ step: s.step, metrics: s.metrics }));
  }

  async stepTimes(runId: string) {
    return (await this.db.getAllFromIndex('steps', 'byRun', runId))
      .sort((a, b) => a.step - b.step)
      .flatMap((s) =>
        s.step > 0 && s.t !== undefined
          ? [{ step: s.step, t: s.t, ...(s.activeMs !== undefined ? { activeMs: s.activeMs } : {}) }]
          : [],
      );
  }

  async evaluations(runId: string) {
    return (await this.db.getAllFromIndex('steps', 'byRun', runId))
      .sort((a, b) => a.step - b.step)
      .flatMap((s) => (s.evaluation ? [s.evaluation] : []));
  }

  async groupSteps(runId: string) {
    return (await this.db.getAllKeysFromIndex('groups', 'byRun', runId)).map(([, step]) => step).sort((a, b) => a - b);
  }

  async groupsAt(runId: string, step: number) {
    return (await this.db.get('groups', [runId, step]))?.groups ?? null;
  }

  async flowAt(runId: string, step: number) {
    return (await this.db.get('steps', [runId, step]))?.flow ?? null;
  }

  async batchAt(runId: string, step: number) {
    return (await this.db.get('batches', [runId, step]))?.batch ?? null;
  }

  async sessionsAt(runId: string, step: number) {
    const row = await this.db.get('sessions', [runId, step]);
    return row ? decodeSessions(row) : null;
  }

  async latestCheckpoint(runId: string) {
    const c = await this.db.get('checkpoints', runId);
    return c ? { step: c.step, files: c.files } : null;
  }

  async resumePoint(runId: string) {
    const tx = this.db.transaction(['checkpoints', 'resume'], 'readonly');
    const [c, r] = await Promise.all([tx.objectStore('checkpoints').get(runId), tx.objectStore('resume').get(runId)]);
    // Written together; a step mismatch would mean a checkpoint from another writer: not resumable.
    if (!c || !r || r.step !== c.step) return null;
    return { step: c.step, files: c.files, resume: { optimizer: r.optimizer, position: r.position } };
  }
}
