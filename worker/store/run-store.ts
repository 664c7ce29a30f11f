/**
 * Where runs live: the run record, per-step metrics, evaluations, advantage groups, packed batches,
 * sessions, and the latest checkpoint with what continuing from it needs (AdamW state and the
 * trainer's position). One interface, two homes: IndexedDB in the browser (idb-store.ts, the
 * worker alone owns it) and memory (this file) in Node and when IndexedDB is unavailable.
 */
import type { BatchRecord, GroupRecord, RunStatus, RunSummary, SessionRecord } from '../protocol';
import type { CheckpointFiles } from '../model/checkpoint';
import type { OptimizerState } from '../model/model';
import type { Session } from '../rl/types';
import type { TrainerPosition } from '../train/resume';
import type { SessionsRow } from './sessions-codec';
import { decodeSessions, encodeSessions } from './sessions-codec';

/** A stored run: the protocol's RunSummary is exactly what the store keeps. */
export type RunRecord = RunSummary;

export interface EvalRecord {
  step: number;
  accuracy: number;
  meanLength: number;
  n: number;
}

/** Everything one step produced: written together, or not at all. */
export interface StepCommit {
  step: number;
  metrics: Record<string, number>;
  groups?: GroupRecord[];
  batch?: BatchRecord;
  evaluation?: EvalRecord;
  /** The step's sessions (GRPO), with every call's ids and log-probs. */
  sessions?: readonly Session[];
}

/** Beside a checkpoint's files, what continuing from it needs. */
export interface ResumeRecord {
  optimizer: OptimizerState;
  position: TrainerPosition;
}

export interface RunStore {
  /** Where the data lives, for the UI: 'indexeddb' or 'memory'. */
  readonly kind: 'indexeddb' | 'memory';
  putRun(run: RunRecord): Promise<void>;
  /** Writes one step atomically and advances the run's lastStep. */
  commitStep(runId: string, commit: StepCommit): Promise<void>;
  setStatus(runId: string, status: RunStatus, message?: string): Promise<void>;
  /**
   * Replaces the run's checkpoint. With `resume`, the run's `checkpointStep` becomes `step` in the
   * same write; without, the run no longer has a checkpoint to continue from.
   */
  saveCheckpoint(runId: string, step: number, files: CheckpointFiles, resume?: ResumeRecord): Promise<void>;
  /** Deletes every step after `step` (metrics, groups, batch, sessions) and sets lastStep to it, atomically. */
  truncateAfter(runId: string, step: number): Promise<void>;
  listRuns(): Promise<RunRecord[]>;
  stepMetrics(runId: string): Promise<{ step: number; metrics: Record<string, number> }[]>;
  evaluations(runId: string): Promise<EvalRecord[]>;
  groupSteps(runId: string): Promise<number[]>;
  groupsAt(runId: string, step: number): Promise<GroupRecord[] | null>;
  batchAt(runId: string, step: number): Promise<BatchRecord | null>;
  sessionsAt(runId: string, step: number): Promise<SessionRecord[] | null>;
  latestCheckpoint(runId: string): Promise<{ step: number; files: CheckpointFiles } | null>;
  /** The latest checkpoint with its AdamW state and trainer position, or null when it has none. */
  resumePoint(runId: string): Promise<{ step: number; files: CheckpointFiles; resume: ResumeRecord } | null>;
}

/** Raised when the store is full (IndexedDB quota): the run pauses with this message. */
export class StorageFullError extends Error {
  override readonly name = 'StorageFull';
}

export class MemoryRunStore implements RunStore {
  readonly kind = 'memory' as const;
  private readonly runs = new Map<string, RunRecord>();
  private readonly steps = new Map<string, (Omit<StepCommit, 'sessions'> & { sessions?: SessionsRow })[]>();
  private readonly checkpoints = new Map<string, { step: number; files: CheckpointFiles; resume?: ResumeRecord }>();

  async putRun(run: RunRecord) {
    this.runs.set(run.runId, { ...run });
    if (!this.steps.has(run.runId)) this.steps.set(run.runId, []);
  }

  async commitStep(runId: string, commit: StepCommit) {
    const run = this.require(runId);
    const { sessions, ...rest } = commit;
    const steps = this.steps.get(runId)!.filter((s) => s.step !== commit.step);
    steps.push({ ...rest, ...(sessions ? { sessions: encodeSessions(sessions) } : {}) });
    this.steps.set(runId, steps.sort((a, b) => a.step - b.step));
    run.lastStep = commit.step;
  }

  async setStatus(runId: string, status: RunStatus, message?: string) {
    Object.assign(this.require(runId), { status, message });
  }

  async saveCheckpoint(runId: string, step: number, files: CheckpointFiles, resume?: ResumeRecord) {
    const run = this.require(runId);
    this.checkpoints.set(runId, { step, files, ...(resume ? { resume } : {}) });
    if (resume) run.checkpointStep = step;
    else delete run.checkpointStep;
  }

  async truncateAfter(runId: string, step: number) {
    const run = this.require(runId);
    this.steps.set(runId, (this.steps.get(runId) ?? []).filter((s) => s.step <= step));
    run.lastStep = step;
  }

  async listRuns() {
    return [...this.runs.values()].sort((a, b) => b.createdAt - a.createdAt).map((r) => ({ ...r }));
  }

  async stepMetrics(runId: string) {
    return (this.steps.get(runId) ?? []).map((s) => ({ step: s.step, metrics: s.metrics }));
  }

  async evaluations(runId: string) {
    return (this.steps.get(runId) ?? []).flatMap((s) => (s.evaluation ? [s.evaluation] : []));
  }

  async groupSteps(runId: string) {
    return (this.steps.get(runId) ?? []).filter((s) => s.groups).map((s) => s.step);
  }

  async groupsAt(runId: string, step: number) {
    return this.steps.get(runId)?.find((s) => s.step === step)?.groups ?? null;
  }

  async batchAt(runId: string, step: number) {
    return this.steps.get(runId)?.find((s) => s.step === step)?.batch ?? null;
  }

  async sessionsAt(runId: string, step: number) {
    const row = this.steps.get(runId)?.find((s) => s.step === step)?.sessions;
    return row ? decodeSessions(row) : null;
  }

  async latestCheckpoint(runId: string) {
    const c = this.checkpoints.get(runId);
    return c ? { step: c.step, files: c.files } : null;
  }

  async resumePoint(runId: string) {
    const c = this.checkpoints.get(runId);
    return c?.resume ? { step: c.step, files: c.files, resume: c.resume } : null;
  }

  private require(runId: string): RunRecord {
    const r = this.runs.get(runId);
    if (!r) throw new Error(`run store: no run '${runId}'`);
    return r;
  }
}

/**
 * A store that is still opening (IndexedDB opens asynchronously, but the worker must expose its API
 * at once or the page's first messages are lost): every call waits for the real store.
 */
export class DeferredRunStore implements RunStore {
  kind: 'indexeddb' | 'memory' = 'memory';
  constructor(private readonly ready: Promise<RunStore>) {
    void ready.then((s) => (this.kind = s.kind));
  }
  private async call<K extends keyof RunStore>(k: K, ...args: unknown[]): Promise<Awaited<ReturnType<Extract<RunStore[K], (...a: never[]) => unknown>>>> {
    const s = await this.ready;
    return (s[k] as (...a: unknown[]) => Promise<never>)(...args);
  }
  putRun = (run: RunRecord) => this.call('putRun', run);
  commitStep = (runId: string, c: StepCommit) => this.call('commitStep', runId, c);
  setStatus = (runId: string, status: RunStatus, message?: string) => this.call('setStatus', runId, status, message);
  saveCheckpoint = (runId: string, step: number, files: CheckpointFiles, resume?: ResumeRecord) => this.call('saveCheckpoint', runId, step, files, resume);
  truncateAfter = (runId: string, step: number) => this.call('truncateAfter', runId, step);
  listRuns = () => this.call('listRuns');
  stepMetrics = (runId: string) => this.call('stepMetrics', runId);
  evaluations = (runId: string) => this.call('evaluations', runId);
  groupSteps = (runId: string) => this.call('groupSteps', runId);
  groupsAt = (runId: string, step: number) => this.call('groupsAt', runId, step);
  batchAt = (runId: string, step: number) => this.call('batchAt', runId, step);
  sessionsAt = (runId: string, step: number) => this.call('sessionsAt', runId, step);
  latestCheckpoint = (runId: string) => this.call('latestCheckpoint', runId);
  resumePoint = (runId: string) => this.call('resumePoint', runId);
}
