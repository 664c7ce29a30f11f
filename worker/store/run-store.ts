/**
 * Where runs live: the run record, per-step metrics, evaluations, advantage groups, packed batches,
 * sessions, and the latest checkpoint with what continuing from it needs (AdamW state and the
 * trainer's position). One interface, two homes: IndexedDB in the browser (idb-store.ts, the
 * worker alone owns it) and memory (this file) in Node and when IndexedDB is unavailable.
 */
import type { RunOptions } from '../contract/options';
import type {
  BatchRecord,
  FailedEpisode,
  FlowCloud,
  GroupRecord,
  RunStatus,
  RunSummary,
  SessionRecord,
} from '../contract/records';
import type { BackendName, RunBackendChoice } from '../contract/system';
import type { CheckpointFiles } from '../model/checkpoint';
import type { FlowCheckpointFiles } from '../flow/index';
import type { Session } from '../rl/types';
import type { ResumeRecord } from '../train/resume';
import type { EpisodeJournal } from '../episodes/journal';
import { MemoryJournal } from '../episodes/journal';
import type { SessionsRow } from './sessions-codec';
import { decodeSessions, encodeSessions } from './sessions-codec';

/**
 * A stored run: the protocol's RunSummary, with the options a trainer reads. An imported run
 * (status `imported`, worker/interop/verl-import.ts) keeps its ImportedRunOptions here under this
 * type; the worker API answers for it before any trainer path reads them (api.ts `imported`).
 */
export type RunRecord = Omit<RunSummary, 'options'> & { options: RunOptions };

/**
 * A run's checkpoint files: a language model's Hugging Face-style folder (model/checkpoint.ts),
 * or the flow policy's weights (flow/checkpoint.ts). What the store keeps and a person downloads.
 */
export type RunCheckpointFiles = CheckpointFiles | FlowCheckpointFiles;

export interface EvalRecord {
  step: number;
  accuracy: number;
  meanLength: number;
  n: number;
}

/**
 * Everything one step produced: written together, or not at all. Step 0 is the evaluation before
 * the first update (metrics empty): it is an evaluation, not a step, and `stepMetrics` skips it.
 */
export interface StepCommit {
  step: number;
  /** Milliseconds the step (and its evaluation) computed, added to the run's `activeMs`. */
  ms?: number;
  metrics: Record<string, number>;
  groups?: GroupRecord[];
  batch?: BatchRecord;
  evaluation?: EvalRecord;
  /** The step's sessions (GRPO), with every call's ids and log-probs. */
  sessions?: readonly Session[];
  /** A Flow-GRPO step's sample cloud (kept with its metrics). */
  flow?: FlowCloud;
}

/** Beside a checkpoint's files, what continuing from it needs (defined with the trainers' positions). */
export type { ResumeRecord };

/** What a person may change on a stored run: its name and notes. */
export interface RunMeta {
  name?: string;
  notes?: string;
}

/** What deleting a run removed: its committed steps and the approximate bytes of every record. */
interface DeletedRun {
  steps: number;
  bytes: number;
}

/** The run record after `commit`: last step, time of the commit, compute time, latest reward and accuracy. */
export function committedRun(run: RunRecord, commit: StepCommit, now: number): RunRecord {
  const latest = { ...run.latest };
  const reward = commit.metrics['reward/mean'];
  if (reward !== undefined && Number.isFinite(reward)) latest.rewardMean = reward;
  if (commit.evaluation)
    Object.assign(latest, { accuracy: commit.evaluation.accuracy, accuracyStep: commit.evaluation.step });
  return { ...run, lastStep: commit.step, updatedAt: now, activeMs: (run.activeMs ?? 0) + (commit.ms ?? 0), latest };
}

/**
 * Approximate bytes a stored value takes: typed arrays and buffers by their length, strings at two
 * bytes a character, numbers and booleans at eight; objects and arrays summed over their parts. An
 * estimate of what deleting it frees (the browser's own accounting adds overhead and compacts later).
 */
export function approxBytes(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'string') return 2 * v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return 8;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + approxBytes(x), 0);
  if (typeof v === 'object') return Object.entries(v).reduce((n, [k, x]) => n + 2 * k.length + approxBytes(x), 0);
  return 0;
}

export interface RunStore {
  /** Where the data lives, for the UI: 'indexeddb' or 'memory'. */
  readonly kind: 'indexeddb' | 'memory';
  /** The episode journal of multi-turn runs, in the same home (deleteRun removes a run's records; truncateAfter keeps them). */
  readonly journal: EpisodeJournal;
  putRun(run: RunRecord): Promise<void>;
  /**
   * Writes one step atomically and advances the run record (`committedRun`). Answers the commit's
   * time as stored (ms since the epoch, what `stepTimes` reads): the loop's live 'step' event carries
   * it, so the dashboard's steps hold what a reload reads, without reading it back.
   */
  commitStep(runId: string, commit: StepCommit): Promise<number>;
  /** Sets the run's status and message, and the episode it failed on (cleared when absent). */
  setStatus(runId: string, status: RunStatus, message?: string, failedEpisode?: FailedEpisode): Promise<void>;
  /** Sets the run's name and notes (an empty name: back to the default); the caller checks them (RunManager.updateMeta). */
  updateMeta(runId: string, meta: RunMeta): Promise<void>;
  /** Sets the backend that trains the run now, and why it was chosen. */
  setBackend(runId: string, backend: BackendName, choice?: RunBackendChoice): Promise<void>;
  /** Removes every record of the run (run, steps, groups, batches, sessions, checkpoint, resume state), atomically. */
  deleteRun(runId: string): Promise<DeletedRun>;
  /**
   * Replaces the run's checkpoint. With `resume`, the run's `checkpointStep` becomes `step` in the
   * same write; without, the run no longer has a checkpoint to continue from.
   */
  saveCheckpoint(runId: string, step: number, files: RunCheckpointFiles, resume?: ResumeRecord): Promise<void>;
  /** Deletes every step after `step` (metrics, groups, batch, sessions) and sets lastStep to it, atomically. */
  truncateAfter(runId: string, step: number): Promise<void>;
  listRuns(): Promise<RunRecord[]>;
  /** Each trained step's metrics, and step 0's when it has any (`hasStepMetrics`). */
  stepMetrics(runId: string): Promise<{ step: number; metrics: Record<string, number> }[]>;
  /**
   * When each step (> 0) was committed, ms since the epoch (steps stored before this was kept have
   * none), and the run's compute time up to it (`activeMs`, when stored: steps since it was kept).
   */
  stepTimes(runId: string): Promise<{ step: number; t: number; activeMs?: number }[]>;
  evaluations(runId: string): Promise<EvalRecord[]>;
  groupSteps(runId: string): Promise<number[]>;
  groupsAt(runId: string, step: number): Promise<GroupRecord[] | null>;
  batchAt(runId: string, step: number): Promise<BatchRecord | null>;
  /** A Flow-GRPO step's sample cloud, or null when that step has none. */
  flowAt(runId: string, step: number): Promise<FlowCloud | null>;
  sessionsAt(runId: string, step: number): Promise<SessionRecord[] | null>;
  latestCheckpoint(runId: string): Promise<{ step: number; files: RunCheckpointFiles } | null>;
  /** The latest checkpoint with its AdamW state and trainer position, or null when it has none. */
  resumePoint(runId: string): Promise<{ step: number; files: RunCheckpointFiles; resume: ResumeRecord } | null>;
}

/** The run with a name and notes edit applied: an empty name or notes removes the field. */
export function withMeta(run: RunRecord, meta: RunMeta): RunRecord {
  const next = { ...run };
  for (const k of ['name', 'notes'] as const) {
    const v = meta[k];
    if (v === undefined) continue;
    if (v.trim() === '') delete next[k];
    else next[k] = k === 'name' ? v.trim() : v;
  }
  return next;
}

/** Raised when the store is full (IndexedDB quota): the run pauses with this message. */
export class StorageFullError extends Error {
  override readonly name = 'StorageFull';
}

/**
 * The steps `stepMetrics` answers with: every trained step, and step 0 (the evaluation before any
 * update) when it measured something beyond the accuracy (a sampled evaluation's `eval/pass@*`).
 */
export function hasStepMetrics(s: { step: number; metrics: Record<string, number> }): boolean {
  return s.step > 0 || Object.keys(s.metrics).length > 0;
}

export class MemoryRunStore implements RunStore {
  readonly kind = 'memory' as const;
  readonly journal = new MemoryJournal();
  private readonly runs = new Map<string, RunRecord>();
  private readonly steps = new Map<
    string,
    (Omit<StepCommit, 'sessions'> & { sessions?: SessionsRow; t?: number; activeMs?: number })[]
  >();
  private readonly checkpoints = new Map<string, { step: number; files: RunCheckpointFiles; resume?: ResumeRecord }>();

  async putRun(run: RunRecord) {
    this.runs.set(run.runId, { ...run });
    if (!this.steps.has(run.runId)) this.steps.set(run.runId, []);
  }

  async commitStep(runId: string, commit: StepCommit) {
    const run = this.require(runId);
    const { sessions, ...rest } = commit;
    const steps = this.steps.get(runId)!.filter((s) => s.step !== commit.step);
    const t = Date.now();
    const committed = committedRun(run, commit, t);
    // The step keeps the run's compute time up to it: Compare's time axis, without pauses and stops.
    steps.push({
      ...rest,
      t,
      activeMs: committed.activeMs,
      ...(sessions ? { sessions: encodeSessions(sessions) } : {}),
    });
    this.steps.set(
      runId,
      steps.sort((a, b) => a.step - b.step),
    );
    this.runs.set(runId, committed);
    return t;
  }

  async setStatus(runId: string, status: RunStatus, message?: string, failedEpisode?: FailedEpisode) {
    Object.assign(this.require(runId), { status, message, failedEpisode });
  }

  async updateMeta(runId: string, meta: RunMeta) {
    this.runs.set(runId, withMeta(this.require(runId), meta));
  }

  async setBackend(runId: string, backend: BackendName, choice?: RunBackendChoice) {
    const run = this.require(runId);
    run.backend = backend;
    run.backendChoice = choice;
  }

  async deleteRun(runId: string) {
    const run = this.require(runId);
    const steps = this.steps.get(runId) ?? [];
    const bytes = approxBytes(run) + approxBytes(steps) + approxBytes(this.checkpoints.get(runId));
    this.runs.delete(runId);
    this.steps.delete(runId);
    this.checkpoints.delete(runId);
    await this.journal.deleteRun(runId);
    return { steps: steps.filter((s) => s.step > 0).length, bytes };
  }

  async saveCheckpoint(runId: string, step: number, files: RunCheckpointFiles, resume?: ResumeRecord) {
    const run = this.require(runId);
    this.checkpoints.set(runId, { step, files, ...(resume ? { resume } : {}) });
    if (resume) run.checkpointStep = step;
    else delete run.checkpointStep;
  }

  async truncateAfter(runId: string, step: number) {
    const run = this.require(runId);
    this.steps.set(
      runId,
      (this.steps.get(runId) ?? []).filter((s) => s.step <= step),
    );
    run.lastStep = step;
  }

  async listRuns() {
    return [...this.runs.values()].sort((a, b) => b.createdAt - a.createdAt).map((r) => ({ ...r }));
  }

  async stepMetrics(runId: string) {
    return (this.steps.get(runId) ?? []).filter(hasStepMetrics).map((s) => ({ step: s.step, metrics: s.metrics }));
  }

  async stepTimes(runId: string) {
    return (this.steps.get(runId) ?? []).flatMap((s) =>
      s.step > 0 && s.t !== undefined
        ? [{ step: s.step, t: s.t, ...(s.activeMs !== undefined ? { activeMs: s.activeMs } : {}) }]
        : [],
    );
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

  async flowAt(runId: string, step: number) {
    return this.steps.get(runId)?.find((s) => s.step === step)?.flow ?? null;
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
    void ready.then((s) => {
      this.kind = s.kind;
      (this.journal as { kind: EpisodeJournal['kind'] }).kind = s.journal.kind;
    });
  }
  private async call<K extends keyof RunStore>(
    k: K,
    ...args: unknown[]
  ): Promise<Awaited<ReturnType<Extract<RunStore[K], (...a: never[]) => unknown>>>> {
    const s = await this.ready;
    return (s[k] as (...a: unknown[]) => Promise<never>)(...args);
  }
  /** The journal of the store once open. */
  readonly journal: EpisodeJournal = {
    kind: 'memory',
    load: async (runId, step) => (await this.ready).journal.load(runId, step),
    commit: async (records) => (await this.ready).journal.commit(records),
    steps: async (runId) => (await this.ready).journal.steps(runId),
    deleteRun: async (runId) => (await this.ready).journal.deleteRun(runId),
  };
  putRun = (run: RunRecord) => this.call('putRun', run);
  commitStep = (runId: string, c: StepCommit) => this.call('commitStep', runId, c);
  setStatus = (runId: string, status: RunStatus, message?: string, failedEpisode?: FailedEpisode) =>
    this.call('setStatus', runId, status, message, failedEpisode);
  updateMeta = (runId: string, meta: RunMeta) => this.call('updateMeta', runId, meta);
  setBackend = (runId: string, backend: BackendName, choice?: RunBackendChoice) =>
    this.call('setBackend', runId, backend, choice);
  deleteRun = (runId: string) => this.call('deleteRun', runId);
  saveCheckpoint = (runId: string, step: number, files: RunCheckpointFiles, resume?: ResumeRecord) =>
    this.call('saveCheckpoint', runId, step, files, resume);
  truncateAfter = (runId: string, step: number) => this.call('truncateAfter', runId, step);
  listRuns = () => this.call('listRuns');
  stepMetrics = (runId: string) => this.call('stepMetrics', runId);
  stepTimes = (runId: string) => this.call('stepTimes', runId);
  evaluations = (runId: string) => this.call('evaluations', runId);
  groupSteps = (runId: string) => this.call('groupSteps', runId);
  groupsAt = (runId: string, step: number) => this.call('groupsAt', runId, step);
  batchAt = (runId: string, step: number) => this.call('batchAt', runId, step);
  flowAt = (runId: string, step: number) => this.call('flowAt', runId, step);
  sessionsAt = (runId: string, step: number) => this.call('sessionsAt', runId, step);
  latestCheckpoint = (runId: string) => this.call('latestCheckpoint', runId);
  resumePoint = (runId: string) => this.call('resumePoint', runId);
}
