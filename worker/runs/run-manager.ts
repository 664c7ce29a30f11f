/**
 * A run's lifecycle: start, continue, pause, resume, stop, rename, delete and the listing, with
 * the locks that keep two loops (two tabs, or a continue racing a start) off one run. `start`
 * returns a run id at once and the loop (loop.ts) reports through the event callback, so no
 * comlink promise is held open. One run at a time.
 *
 * Continuing: every checkpoint is stored with the AdamW state and the trainer's position, so
 * `continue` rebuilds the trainer at the checkpoint's step and runs on to `options.steps` under
 * the same id. Steps committed after that checkpoint (a stop or a closed tab between checkpoints)
 * are deleted first, not overwritten as they come: the stored history is always one unbroken
 * trajectory, even when the continued run is stopped again before reaching them.
 *
 * Not here: where bases and tokenizers come from (bases.ts), the steps (loop.ts), the trainers
 * (the preset table), what the views read (reads.ts).
 */
import type { Ops } from '../../kernels/ops';
import { InvalidConfigError, UnknownRunError } from '../contract/errors';
import type { KindServices } from '../episodes/kinds';
import type { CheckpointFiles } from '../model/checkpoint';
import type { RunOptions } from '../contract/options';
import type { ContinueResult, DeleteResult, RunEvent, RunSummary } from '../contract/records';
import type { RunBackendChoice } from '../contract/system';
import { checkRunOptions, trainerOf, type BaseName } from '../presets/table';
import type { Trainer } from '../presets/trainers';
import type { RunMeta, RunStore } from '../store/run-store';
import { Bases } from './bases';
import { runLoop, type ActiveRun, type From } from './loop';
import type { RunLocks } from './run-locks';
import { memoryRunLocks } from './run-locks';

/** What a run manager is built from. */
interface RunManagerDeps {
  /** The active backend (throws NotInitialized before `init`). */
  getOps: () => Ops;
  /** The files of a shipped base checkpoint (public/checkpoints/NAME), fetched by the page's origin in the browser. */
  loadBase: (name: BaseName) => Promise<CheckpointFiles>;
  /** Where runs, steps, groups, batches, checkpoints and the episode journal are committed (IndexedDB in the browser). */
  store: RunStore;
  /** Which runs a page of this origin is running (Web Locks in the browser, run-locks.ts); default: this manager's alone. */
  locks?: RunLocks;
  /** Why the active backend was chosen, recorded with each run it trains. */
  getBackendChoice?: () => RunBackendChoice | null;
  /** What environments need from outside (the companion's code grader), read when a run starts. */
  getServices?: () => KindServices;
  /** The checkpoint files of a person's own model kept in this worker (worker/hf/models.ts), by the id a run's `base` names. */
  pickedModel?: (id: string) => CheckpointFiles | undefined;
}

/** Checks a name and notes edit: the problems in words, empty when it is fine. */
function metaProblems(meta: RunMeta): string[] {
  const problems: string[] = [];
  if (meta.name !== undefined && (typeof meta.name !== 'string' || meta.name.length > 100))
    problems.push(
      `name must be text of at most 100 characters, got ${typeof meta.name === 'string' ? `${meta.name.length} characters` : typeof meta.name}`,
    );
  if (meta.notes !== undefined && (typeof meta.notes !== 'string' || meta.notes.length > 10_000))
    problems.push(
      `notes must be text of at most 10000 characters, got ${typeof meta.notes === 'string' ? `${meta.notes.length} characters` : typeof meta.notes}`,
    );
  return problems;
}

/** A run's name until a person gives it one: the preset and the time part of its id. */
function defaultName(r: { runId: string; options: RunOptions }): string {
  return `${r.options.preset} · ${r.runId.split('-')[1] ?? r.runId}`;
}

export class RunManager {
  private active: ActiveRun | null = null;
  private counter = 0;
  /** The id of the run started last (still active or not), for the latest checkpoint. */
  lastRunId: string | null = null;
  /** Loops started by this manager: each gets its own writer id for the episode journal. */
  private loops = 0;
  readonly store: RunStore;
  /** Where each run's base checkpoint and tokenizer come from. */
  readonly bases: Bases;
  private readonly deps: Required<RunManagerDeps>;

  constructor(deps: RunManagerDeps) {
    this.deps = {
      locks: memoryRunLocks(),
      getBackendChoice: () => null,
      getServices: () => ({}),
      pickedModel: () => undefined,
      ...deps,
    };
    this.store = deps.store;
    this.bases = new Bases(deps.loadBase, this.deps.pickedModel, deps.store);
  }

  private get locks(): RunLocks {
    return this.deps.locks;
  }

  /**
   * Starts a run of a preset and returns its id at once (stopping the active run, if another).
   * Options no preset accepts, or a person's model this worker no longer holds, are refused with
   * InvalidConfig naming the field.
   */
  start(options: RunOptions, emit: (e: RunEvent) => void): string {
    const problems = checkRunOptions(options);
    if (problems.length) throw new InvalidConfigError(problems.map((p) => p.message).join('; '));
    this.bases.requireHeld(options);
    if (this.active) this.stop(this.active.id);
    const id = `${options.preset.split('-')[0]}-${Date.now().toString(36)}-${++this.counter}`;
    const run: ActiveRun = { id, status: 'running', wake: null, done: null, ended: false };
    this.active = run;
    this.lastRunId = id;
    // A new id: nobody else holds its lock, so the loop starts once it has it.
    run.done = this.locks.acquire(id).then((release) => this.loop(run, options, emit, null, release ?? (() => {})));
    return id;
  }

  /**
   * Continues a stored run from its last checkpoint, to its `options.steps`, under the same id
   * (stopping the active run, if another). Refused, with the reason, for an unknown, finished or
   * active run and for one without a checkpoint holding AdamW state (none yet, or stored by v1).
   */
  async continue(runId: string, emit: (e: RunEvent) => void): Promise<ContinueResult> {
    const refused = await this.refusal(runId);
    if (refused) return { ok: false, reason: refused };
    // Its lock first: another tab (or a continue already under way here) may have taken it since the listing.
    const release = await this.locks.acquire(runId);
    if (!release)
      return {
        ok: false,
        reason: `run '${runId}' is already running (another tab, or a continue under way here, holds its lock)`,
      };
    // Claim the one slot at once (a second call now sees this run as live), then let the previous
    // run's loop end: it may be inside a step of this very run, and two loops must never write one run.
    const previous = this.active;
    const run: ActiveRun = { id: runId, status: 'running', wake: null, done: null, ended: false };
    this.active = run;
    this.lastRunId = runId;
    if (previous && !previous.ended) {
      if (previous.status === 'running' || previous.status === 'paused') this.stop(previous.id);
      await previous.done;
    }
    const [stored, point] = await Promise.all([
      this.store.listRuns().then((rs) => rs.find((r) => r.runId === runId)),
      this.store.resumePoint(runId),
    ]);
    const late =
      stored?.status === 'finished'
        ? `run '${runId}' finished meanwhile`
        : !stored || !point
          ? `run '${runId}' has no checkpoint to continue from`
          : null;
    if (late) {
      run.ended = true;
      release();
      return { ok: false, reason: late };
    }
    run.done = this.loop(run, stored!.options, emit, point, release);
    return { ok: true, fromStep: point!.step };
  }

  /** Why `runId` cannot be continued now, or null when it can. */
  private async refusal(runId: string): Promise<string | null> {
    const stored = (await this.listRuns()).find((r) => r.runId === runId);
    if (!stored) return `no stored run '${runId}'`;
    if (stored.status === 'finished')
      return `run '${runId}' is finished (${stored.lastStep} of ${stored.options.steps} steps)`;
    if (stored.status === 'running' || stored.status === 'paused') {
      return stored.elsewhere
        ? `run '${runId}' is ${stored.status} in another tab`
        : `run '${runId}' is ${stored.status} now: stop it first`;
    }
    const problems = checkRunOptions(stored.options);
    if (problems.length)
      return `run '${runId}' was stored with options this version no longer accepts: ${problems.map((p) => p.message).join('; ')}`;
    if (stored.checkpointStep === undefined)
      return `run '${runId}' has no checkpoint to continue from (none written yet, or written before checkpoints kept the optimizer state)`;
    return null;
  }

  /**
   * Stored runs. One stored as running or paused whose loop is not running here is live in another
   * tab when its lock is held (`elsewhere`), and otherwise was interrupted (a closed tab).
   */
  async listRuns(): Promise<RunSummary[]> {
    const live = this.active && !this.active.ended ? this.active.id : null;
    const [runs, held] = await Promise.all([this.store.listRuns(), this.locks.held()]);
    return runs.map((stored) => {
      const r = stored.name ? stored : { ...stored, name: defaultName(stored) };
      if ((r.status !== 'running' && r.status !== 'paused') || r.runId === live) return r;
      return held.has(r.runId) ? { ...r, elsewhere: true } : { ...r, status: 'interrupted' as const };
    });
  }

  /** Renames a stored run or edits its notes; refused, with the reason, for an unknown run or a bad value. */
  async updateMeta(runId: string, meta: RunMeta): Promise<{ ok: true } | { ok: false; reason: string }> {
    const problems = metaProblems(meta);
    if (problems.length) return { ok: false, reason: problems.join('; ') };
    if (!(await this.store.listRuns()).some((r) => r.runId === runId))
      return { ok: false, reason: `no stored run '${runId}'` };
    await this.store.updateMeta(runId, meta);
    return { ok: true };
  }

  /**
   * Deletes every stored record of a run. Refused for a run that is running or paused, here or in
   * another tab (stop it first), and for an unknown one. Says how much it removed.
   */
  async deleteRun(runId: string): Promise<DeleteResult> {
    const stored = (await this.listRuns()).find((r) => r.runId === runId);
    if (!stored) return { ok: false, reason: `no stored run '${runId}'` };
    if (stored.status === 'running' || stored.status === 'paused') {
      return {
        ok: false,
        reason: `run '${runId}' is ${stored.status}${stored.elsewhere ? ' in another tab' : ''}: stop it first`,
      };
    }
    // Its lock for the length of the delete, so no tab starts continuing it meanwhile.
    const release = await this.locks.acquire(runId);
    if (!release) return { ok: false, reason: `run '${runId}' is being continued (another tab holds its lock)` };
    try {
      const { steps, bytes } = await this.store.deleteRun(runId);
      if (this.lastRunId === runId) this.lastRunId = null;
      return { ok: true, steps, bytes };
    } finally {
      release();
    }
  }

  pause(id: string): void {
    const run = this.get(id);
    if (run.status === 'running') run.status = 'paused';
  }

  resume(id: string): void {
    const run = this.get(id);
    if (run.status === 'paused') {
      run.status = 'running';
      run.wake?.();
    }
  }

  stop(id: string): void {
    const run = this.get(id);
    if (run.status === 'running' || run.status === 'paused') {
      run.status = 'stopped';
      run.wake?.();
    }
  }

  private get(id: string): ActiveRun {
    if (!this.active || this.active.id !== id) {
      throw new UnknownRunError(`no active run '${id}'${this.active ? ` (active: '${this.active.id}')` : ''}`);
    }
    return this.active;
  }

  /** The run's trainer, from the preset table, on its base checkpoint. */
  private async trainer(o: RunOptions, runId: string, writer: string): Promise<Trainer> {
    const base = await this.bases.checkpoint(o, runId);
    return trainerOf(o, {
      ops: this.deps.getOps(),
      base,
      services: this.deps.getServices(),
      journal: { journal: this.store.journal, runId, writer },
    });
  }

  /** Runs the loop (loop.ts) of `run`, releasing its lock when it returns. */
  private loop(
    run: ActiveRun,
    o: RunOptions,
    emit: (e: RunEvent) => void,
    from: From | null,
    release: () => void,
  ): Promise<void> {
    const services = {
      store: this.store,
      ops: () => this.deps.getOps(),
      backendChoice: () => this.deps.getBackendChoice(),
      trainer: (o: RunOptions, runId: string, writer: string) => this.trainer(o, runId, writer),
    };
    const writer = `${run.id}/loop ${++this.loops} at ${new Date().toISOString()}`;
    return runLoop(services, run, o, emit, from, writer).finally(() => {
      run.ended = true;
      release();
    });
  }
}
