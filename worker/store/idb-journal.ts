/**
 * The IndexedDB home of the episode journal (worker/episodes/journal.ts): the `journal` object
 * store of the run store's database (schema v3, worker/store/idb-store.ts), keyed
 * [runId, step, episode, turn], so one step's records are one key range in (episode, turn) order.
 *
 * `commit` is one read-write transaction with `durability: 'strict'` that `add`s every record: a
 * key already stored (or twice in the batch) fails its request with ConstraintError, which aborts
 * the whole transaction, so nothing of the batch is written; that becomes a `JournalConflict`
 * naming the record. A quota abort becomes `StorageFullError`, as for the run store's writes.
 * Not here: what a record means, or recovery (the episode runner's).
 * Reference: idb's README (transactions, key ranges, cursors); IndexedDB 3.0 "key comparison".
 */
import type { DBSchema, IDBPDatabase } from 'idb';
import type { EpisodeJournal, JournalRecord } from '../episodes/journal';
import { JournalConflict, describeRecord } from '../episodes/journal';
import { StorageFullError } from './run-store';

type JournalKey = [runId: string, step: number, episode: number, turn: number];

/** The journal's part of the database schema (idb-store.ts's `Schema` includes it). */
export interface JournalSchema extends DBSchema {
  journal: { key: JournalKey; value: JournalRecord };
}

/**
 * Every key of one run (steps, episodes and turns are finite numbers; `[]`, an array, sorts after
 * every number, so `[runId, []]` is above all of the run's keys).
 */
export const runRange = (runId: string) => IDBKeyRange.bound([runId], [runId, []]);
const stepRange = (runId: string, step: number) =>
  IDBKeyRange.bound([runId, step, -Infinity, -Infinity], [runId, step, Infinity, Infinity]);

/** Refuses a record whose key is not (string, three non-negative integers): a broken caller, not an outcome. */
function checkKey(r: JournalRecord): void {
  const ok = typeof r.runId === 'string' && [r.step, r.episode, r.turn].every((n) => Number.isSafeInteger(n) && n >= 0);
  if (!ok)
    throw new Error(
      `journal: a record's key must be (runId: string, step, episode, turn: non-negative integers), got ` +
        `(${JSON.stringify(r.runId)}, ${r.step}, ${r.episode}, ${r.turn})`,
    );
}

export class IdbJournal implements EpisodeJournal {
  readonly kind = 'indexeddb' as const;
  constructor(private readonly db: IDBPDatabase<JournalSchema>) {}

  async load(runId: string, step: number): Promise<JournalRecord[]> {
    return this.db.getAll('journal', stepRange(runId, step)); // key order: (episode, turn)
  }

  async commit(records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0) return;
    records.forEach(checkKey);
    const tx = this.db.transaction('journal', 'readwrite', { durability: 'strict' });
    let conflict: JournalRecord | undefined;
    const adds: Promise<unknown>[] = [];
    try {
      for (const r of records) {
        adds.push(
          tx.store.add(r).catch((e: unknown) => {
            // The first failed add aborts the transaction; later ones then fail with AbortError.
            if ((e as DOMException)?.name === 'ConstraintError') conflict ??= r;
            throw e;
          }),
        );
      }
    } catch (e) {
      // A synchronous throw (a value that cannot be cloned): abort, or the adds before it would commit.
      tx.abort();
      await Promise.allSettled([...adds, tx.done]);
      throw e;
    }
    const settled = await Promise.allSettled([...adds, tx.done]);
    const errors = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as DOMException] : []));
    if (errors.length === 0) return;
    if (conflict)
      throw new JournalConflict(
        `journal: ${describeRecord(conflict)} of run '${conflict.runId}' is already committed; nothing of this commit (${records.length} records) was written`,
      );
    if (errors.some((e) => e?.name === 'QuotaExceededError'))
      throw new StorageFullError('browser storage is full: the run is paused; free space (delete old runs) and resume');
    throw errors.find((e) => e?.name !== 'AbortError') ?? errors[0];
  }

  async steps(runId: string): Promise<number[]> {
    // Keys only, one visit per step: after a step's first key, jump past all of that step's keys.
    const steps: number[] = [];
    const tx = this.db.transaction('journal', 'readonly');
    let cursor = await tx.store.openKeyCursor(runRange(runId));
    while (cursor) {
      const step = cursor.key[1];
      steps.push(step);
      cursor = await cursor.continue([runId, step, []] as unknown as JournalKey);
    }
    await tx.done;
    return steps;
  }

  async deleteRun(runId: string): Promise<void> {
    const tx = this.db.transaction('journal', 'readwrite', { durability: 'strict' });
    await Promise.all([tx.store.delete(runRange(runId)), tx.done]);
  }
}
