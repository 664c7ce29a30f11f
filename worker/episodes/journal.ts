/**
 * The episode journal: every completed turn of every episode, committed durably before the next
 * model call or environment step, so that a crash, a closed tab or a reload loses no committed
 * turn and executes none twice. One record per episode start (turn 0: its task and first context)
 * and per turn (the action, the environment's answer, the environment's state after it, the
 * turn's prompt as a delta-chain trace). Records are keyed (run, step, episode, turn) and written
 * with "add" semantics: committing a key twice is refused (`JournalConflict`), so a committed turn
 * that were executed again would fail loudly instead of being silently overwritten.
 *
 * Every record carries a checksum (FNV-1a 32 of its canonical JSON without the checksum); a
 * record that fails it makes its episode corrupt: shown, never trained on, never continued.
 * Recovery needs the same cohort (run, step, policy version, sampler seed): a record of another
 * cohort under the same key is an error, not something to continue.
 *
 * Homes: memory (this file), IndexedDB (worker/store/idb-journal.ts), a directory of JSONL files in
 * Node (cli/node-journal.ts). Reference: dew `EpisodeJournal` (docs/rl-core.md "Journal and traces").
 */
import type { CaseResult, EpisodeStatus, SamplingSettings, TerminationReason } from '../rl/types';
import type { EnvTask } from './environment';
import type { TraceRecord } from './traces';

/** The identity a step's episodes are collected under; recovery requires the same. */
export interface Cohort {
  runId: string;
  step: number;
  /** The policy version (updates taken) whose weights drew every action of the step. */
  policyVersion: number;
  /** The seed every action's sampler of the step derives from. */
  samplerSeed: number;
}

export function cohortSignature(c: Cohort): string {
  return `${c.runId}/step ${c.step}/version ${c.policyVersion}/seed ${c.samplerSeed}`;
}

interface RecordKey {
  runId: string;
  step: number;
  /** The episode's index within the step (group-major: group g, sample s is g · G + s). */
  episode: number;
  /** 0: the episode's start; k ≥ 1: its k-th turn. */
  turn: number;
  /** `cohortSignature` of the step. */
  cohort: string;
  /** Which process executed it (a run loop's id): turns of one episode by different writers were restored after a restart. */
  writer: string;
  /** FNV-1a 32 of the record's canonical JSON without this field (`withChecksum`). */
  checksum: number;
}

/** An episode's start: what it works on and its first context. */
export interface StartRecord extends RecordKey {
  kind: 'start';
  turn: 0;
  task: EnvTask;
  group: string;
  sample: number;
  /** The first model context (from `reset`). */
  initial: number[];
  /** The environment's snapshot after reset (recoverable environments). */
  state?: string;
  /** Set when the first context already used up a budget (no room for an action): how the episode ended. */
  ended?: { status: 'truncated'; termination: TerminationReason; detail: string };
  /** What the environment's program wrote to stderr during reset (environment.ts `takeStderr`). */
  stderr?: string;
  ms: number;
}

/** One completed turn: the model's action and the environment's answer. */
export interface TurnRecord extends RecordKey {
  kind: 'turn';
  /** The action's prompt as a delta on the previous turn's trace, and its completion. */
  trace: TraceRecord;
  action: {
    rawLogProbs: number[];
    behaviorLogProbs: number[];
    terminated: boolean;
    policyStep: number;
    sampling: SamplingSettings;
  };
  observation: {
    /** Ids the environment appended (empty when it ended the episode or rewrote the context). */
    ids: number[];
    /** The whole next context when the environment rewrote it. */
    context?: number[];
    status: EpisodeStatus;
    detail?: string;
    termination?: TerminationReason;
    /** The environment's own reward, when it gave one. */
    reward?: number;
    /** A code reward's test cases (the `code` environment). */
    cases?: CaseResult[];
    /** What the environment's program wrote to stderr during this step (environment.ts `takeStderr`). */
    stderr?: string;
  };
  /** The environment's snapshot after this step (recoverable environments). */
  state?: string;
  sampleMs: number;
  envMs: number;
}

export type JournalRecord = StartRecord | TurnRecord;

/** FNV-1a 32 of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function digest(record: Omit<JournalRecord, 'checksum'> | JournalRecord): number {
  const { checksum: _omit, ...rest } = record as JournalRecord;
  return fnv1a(JSON.stringify(rest));
}

/** The record with its checksum filled in. */
export function withChecksum<R extends JournalRecord>(record: Omit<R, 'checksum'>): R {
  return { ...record, checksum: digest(record) } as R;
}

/** Whether a record read back still matches its checksum. */
export function checksumOk(record: JournalRecord): boolean {
  return typeof record.checksum === 'number' && digest(record) === record.checksum;
}

/** `step 3, episode 5, turn 2`: how messages name a record. */
export function describeRecord(r: Pick<RecordKey, 'step' | 'episode' | 'turn'>): string {
  return `step ${r.step}, episode ${r.episode}, turn ${r.turn}`;
}

/** Raised when a record's key is already committed: a committed turn was about to be written again. */
export class JournalConflict extends Error {
  override readonly name = 'JournalConflict';
}

export interface EpisodeJournal {
  /** Where it lives, for the UI. */
  readonly kind: 'indexeddb' | 'memory' | 'files';
  /** Every committed record of one step of a run, ordered by (episode, turn). */
  load(runId: string, step: number): Promise<JournalRecord[]>;
  /**
   * Commits records durably and atomically (all or none), before the caller's next model call or
   * environment step. Refuses a key already committed (`JournalConflict`), writing nothing.
   */
  commit(records: readonly JournalRecord[]): Promise<void>;
  /** Steps of a run with journaled episodes, ascending. */
  steps(runId: string): Promise<number[]>;
  /** Removes every record of a run. */
  deleteRun(runId: string): Promise<void>;
}

const keyOf = (r: Pick<RecordKey, 'runId' | 'step' | 'episode' | 'turn'>) =>
  `${r.runId}\u0000${r.step}\u0000${r.episode}\u0000${r.turn}`;

export function byEpisodeTurn(a: JournalRecord, b: JournalRecord): number {
  return a.episode - b.episode || a.turn - b.turn;
}

/** The journal in memory (Node, tests, and the browser without IndexedDB). Records are copied in and out. */
export class MemoryJournal implements EpisodeJournal {
  readonly kind = 'memory' as const;
  private readonly records = new Map<string, JournalRecord>();

  async load(runId: string, step: number) {
    return [...this.records.values()]
      .filter((r) => r.runId === runId && r.step === step)
      .sort(byEpisodeTurn)
      .map((r) => structuredClone(r));
  }

  async commit(records: readonly JournalRecord[]) {
    const seen = new Set<string>();
    for (const r of records) {
      const k = keyOf(r);
      if (this.records.has(k) || seen.has(k))
        throw new JournalConflict(`journal: ${describeRecord(r)} of run '${r.runId}' is already committed`);
      seen.add(k);
    }
    for (const r of records) this.records.set(keyOf(r), structuredClone(r));
  }

  async steps(runId: string) {
    return [...new Set([...this.records.values()].filter((r) => r.runId === runId).map((r) => r.step))].sort(
      (a, b) => a - b,
    );
  }

  async deleteRun(runId: string) {
    for (const [k, r] of this.records) if (r.runId === runId) this.records.delete(k);
  }

  /** Test hook: the stored record under a key, mutable (to corrupt it). */
  raw(runId: string, step: number, episode: number, turn: number): JournalRecord | undefined {
    return this.records.get(keyOf({ runId, step, episode, turn }));
  }
}
