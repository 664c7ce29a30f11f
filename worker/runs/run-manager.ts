/**
 * Runs long work without holding a comlink promise open: `start` returns a run id at once, the
 * loop reports through the event callback and yields between steps so that pause, resume and stop
 * (other API calls) are delivered. One run at a time.
 *
 * Continuing: every checkpoint is stored with the AdamW state and the trainer's position, so
 * `continue` rebuilds the trainer at the checkpoint's step and runs on to `options.steps` under
 * the same id. Steps committed after that checkpoint (a stop or a closed tab between checkpoints)
 * are deleted first, not overwritten as they come: the stored history is always one unbroken
 * trajectory, even when the continued run is stopped again before reaching them.
 */
import type { Ops } from '../../kernels/ops';
import type { CharTokenizer, TokenizerDescription } from '../data/tokenizer';
import { tokenizerFromDescription } from '../data/tokenizer';
import type { CheckpointFiles, CheckpointTokenizer, LoadedCheckpoint } from '../model/checkpoint';
import { charTokenizer, checkpointTokenizer, exportCheckpoint, importCheckpoint } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { KindServices } from '../episodes/kinds';
import { EPISODE_PRESETS } from '../protocol';
import type {
  BaseModelRunOptions,
  BatchRecord,
  ContinueResult,
  DeleteResult,
  EpisodeGrpoRunOptions,
  PpoEpisodeRunOptions,
  FlowCloud,
  FlowField,
  FlowRunOptions,
  GroupRecord,
  PhaseReport,
  RunBackendChoice,
  RunEvent,
  RunOptions,
  RunStatus,
  RunSummary,
} from '../protocol';
import {
  FLOW_GRPO_2D,
  FLOW_VIEW_BOX,
  FlowGrpoRun,
  flowReward,
  pretrainBase,
  rewardGrid,
  validateFlowGrpoConfig,
} from '../flow/index';
import type { Session } from '../rl/types';
import type { ResumeRecord, RunMeta, RunStore } from '../store/run-store';
import { StorageFullError } from '../store/run-store';
import {
  dpoConfigOf,
  episodeRunConfigOf as episodeConfigOf,
  flowConfigOf,
  grpoConfigOf,
  ppoConfigOf,
  sftConfigOf,
} from './configs';
import { checkRunOptions } from './fields';
import { batchRecord, groupRecords, pairRecords, pairSessions, type GroupsConfig } from './groups';
import type { RunLocks } from './run-locks';
import { memoryRunLocks } from './run-locks';
import type { EvalResult } from '../train/evaluate';
import { DPO_ARITH, DpoRun } from '../train/dpo';
import { GRPO_ARITH, GrpoRun } from '../train/grpo';
import { PPO_ARITH, PpoRun } from '../train/ppo';
import { GrpoEpisodeRun, configuredKind } from '../train/grpo-episodes';
import type { EpisodeContext } from '../episodes/views';
import type { Resumable } from '../train/resume';
import { SFT_ARITH, SftRun, sftTokenizer } from '../train/sft';

/** The shipped base checkpoints (public/checkpoints/NAME): arithmetic, and one per environment. */
export type BaseName = 'arith-base' | 'calc-base' | 'guess-base' | 'code-base';

/** The base checkpoint a preset starts from (SFT starts from nothing: null). */
export function baseOf(preset: RunOptions['preset']): BaseName | null {
  if (preset === 'sft-arith' || preset === 'flowgrpo-2d') return null;
  if (preset === 'grpo-calc' || preset === 'ppo-calc') return 'calc-base';
  if (preset === 'grpo-guess') return 'guess-base';
  if (preset === 'grpo-code') return 'code-base';
  return 'arith-base';
}

/** A run's own model (`base`), when it has one. */
const pickedBase = (o: RunOptions): BaseModelRunOptions | undefined => ('base' in o ? o.base : undefined);

/** Why a run's own model is not here, in words. */
const notHeld = (b: BaseModelRunOptions) =>
  `the model '${b.name}' (${b.id}) is no longer in this tab's worker (a reload drops a picked model)`;

const isEpisodePreset = (o: RunOptions): o is EpisodeGrpoRunOptions | PpoEpisodeRunOptions =>
  (EPISODE_PRESETS as readonly string[]).includes(o.preset) || o.preset === 'ppo-calc';

/** What the loop needs of a run, whatever its objective. */
export interface Trainer {
  /** The language model and its tokenizer, checkpointed as a Hugging Face folder; null: the run keeps no checkpoint (Flow-GRPO). */
  model: Model | null;
  tok: CheckpointTokenizer | null;
  config: object;
  next(): Promise<{
    metrics: Record<string, number>;
    groups?: GroupRecord[];
    batch?: BatchRecord;
    sessions?: readonly Session[];
    flow?: FlowCloud;
  }>;
  /** Where the step under way is, for trainers that report it (GRPO); others report the whole step as `step`. */
  onProgress?: (report: PhaseReport | null) => void;
  evaluate(): Promise<EvalResult>;
  /** The run itself, to store its position with each checkpoint and to continue from one. */
  run: Resumable;
}

/** A GRPO run (single-turn or on episodes) as the loop drives it: each step stored with its groups, packed batch and sessions. */
function grpoTrainer(grpo: GrpoRun | GrpoEpisodeRun | PpoRun, config: GroupsConfig, tok: CheckpointTokenizer): Trainer {
  return {
    model: grpo.model,
    tok,
    config,
    next: async () => {
      const s = await grpo.next();
      return {
        metrics: s.metrics,
        groups: groupRecords(s, tok, config),
        batch: batchRecord(s, tok),
        sessions: s.sessions,
      };
    },
    evaluate: () => grpo.evaluate(),
    onProgress: (report) => (grpo.onProgress = report),
    run: grpo,
  };
}

/**
 * A Flow-GRPO run as the loop drives it: the policy is pretrained (flow matching) on its first
 * call, each step stores its sample cloud, and the evaluation is the fraction of the fixed ODE
 * preview inside the shape. It keeps no checkpoint (there is no language model to export).
 */
export function flowTrainer(ops: Ops, o: FlowRunOptions): Trainer {
  const { config, pretrain } = flowConfigOf(o, FLOW_GRPO_2D);
  const problems = validateFlowGrpoConfig(config);
  if (problems.length) throw new Error(`flowgrpo-2d: ${problems.join('; ')}`);
  let report: PhaseReport | null = null;
  let flow: FlowGrpoRun | null = null;
  const ready = async (): Promise<FlowGrpoRun> => {
    if (flow) return flow;
    report?.('pretraining', 0, pretrain.iterations, 'steps');
    const { weights } = await pretrainBase(ops, config.model, pretrain, config.seed, (i) => {
      if ((i + 1) % 50 === 0) report?.('pretraining', i + 1, pretrain.iterations, 'steps');
    });
    flow = new FlowGrpoRun(ops, config, weights);
    return flow;
  };
  return {
    model: null,
    tok: null,
    config,
    next: async () => {
      const s = await (await ready()).next();
      report?.('storing');
      return {
        metrics: s.metrics,
        flow: {
          step: s.step,
          points: s.points,
          rewards: Float32Array.from(s.rewards),
          advantages: Float32Array.from(s.advantages),
          group: config.group,
        },
      };
    },
    evaluate: async () => {
      const points = await (await ready()).preview();
      const { inside } = flowReward(points, config.reward);
      return {
        n: inside.length,
        accuracy: inside.reduce((a, b) => a + b, 0) / inside.length,
        meanLength: 0,
        samples: [],
      };
    },
    onProgress: (r) => (report = r),
    run: {
      position: () => ({ step: flow?.step ?? 0, tasksDrawn: 0 }),
      resumeAt: () => {
        throw new Error('flowgrpo-2d runs keep no checkpoint: start a new run');
      },
    },
  };
}

/**
 * A trainer config as a checkpoint's dewpoint.json records it: a dataset's records are left out
 * (their count stays), so a checkpoint does not carry a copy of the person's file; the run's
 * stored options keep them.
 */
export function checkpointConfig(config: object): object {
  const d = (config as { dataset?: { records: unknown[] } }).dataset;
  return d ? { ...config, dataset: { ...d, records: d.records.length } } : config;
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
export function defaultName(r: { runId: string; options: RunOptions }): string {
  return `${r.options.preset} · ${r.runId.split('-')[1] ?? r.runId}`;
}

/** Where `loop` starts a continued run: the stored checkpoint and what resuming it needs. */
interface From {
  step: number;
  files: CheckpointFiles;
  resume: ResumeRecord;
}

interface Active {
  id: string;
  status: RunStatus;
  wake: (() => void) | null;
  /** Settles when the run's loop has returned (its last write done); null before it starts. */
  done: Promise<void> | null;
  ended: boolean;
}

export class RunManager {
  private active: Active | null = null;
  private counter = 0;
  /** The id of the run started last (still active or not), for the latest checkpoint. */
  lastRunId: string | null = null;
  /** Each base checkpoint's tokenizer, read once (absent until asked, or after a failed read). */
  private readonly baseTokenizers = new Map<BaseName, Promise<CharTokenizer>>();
  /** The same for a person's own models, by model id. */
  private readonly pickedTokenizers = new Map<string, Promise<CheckpointTokenizer>>();
  /** Loops started by this manager: each gets its own writer id for the episode journal. */
  private loops = 0;

  /**
   * `getOps`: the active backend. `loadBase`: the files of a shipped base checkpoint
   * (public/checkpoints/NAME), fetched by the page's origin in the browser. `store`: where runs,
   * steps, groups, batches, checkpoints and the episode journal are committed (IndexedDB in the browser).
   * `locks`: which runs a page of this origin is running (Web Locks in the browser, run-locks.ts).
   * `getBackendChoice`: why the active backend was chosen, recorded with each run it trains.
   * `getServices`: what environments need from outside (the companion's code grader), read when a run starts.
   * `pickedModel`: the checkpoint files of a person's own model kept in this worker (worker/hf/models.ts), by the id a run's `base` names.
   */
  constructor(
    private readonly getOps: () => Ops,
    private readonly loadBase: (name: BaseName) => Promise<CheckpointFiles>,
    readonly store: RunStore,
    private readonly locks: RunLocks = memoryRunLocks(),
    private readonly getBackendChoice: () => RunBackendChoice | null = () => null,
    private readonly getServices: () => KindServices = () => ({}),
    private readonly pickedModel: (id: string) => CheckpointFiles | undefined = () => undefined,
  ) {}

  start(options: RunOptions, emit: (e: RunEvent) => void): string {
    if (this.active) this.stop(this.active.id);
    const id = `${options.preset.split('-')[0]}-${Date.now().toString(36)}-${++this.counter}`;
    const run: Active = { id, status: 'running', wake: null, done: null, ended: false };
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
    const run: Active = { id: runId, status: 'running', wake: null, done: null, ended: false };
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

  private get(id: string): Active {
    if (!this.active || this.active.id !== id) {
      const e = new Error(`no active run '${id}'${this.active ? ` (active: '${this.active.id}')` : ''}`);
      e.name = 'UnknownRun';
      throw e;
    }
    return this.active;
  }

  /**
   * The tokenizer a stored run encodes with, or null when no run `runId` is stored: an SFT run's
   * own (its task format's vocabulary), else the base checkpoint's (GRPO and DPO start from it and
   * keep its vocabulary): a person's own model's (its `base`) from this worker, else from the run's
   * checkpoint. Only the tokenizer files are parsed, not the weights.
   */
  async tokenizerOf(runId: string): Promise<CheckpointTokenizer | null> {
    const run = (await this.store.listRuns()).find((r) => r.runId === runId);
    if (!run || run.options.preset === 'flowgrpo-2d') return null; // a flow run has no tokens
    const picked = pickedBase(run.options);
    if (picked) return this.pickedTokenizer(runId, picked);
    const base = baseOf(run.options.preset);
    if (base === null) return sftTokenizer(sftConfigOf(run.options as Parameters<typeof sftConfigOf>[0], SFT_ARITH));
    let tok = this.baseTokenizers.get(base);
    if (!tok) {
      tok = this.loadBase(base).then((files) =>
        tokenizerFromDescription(JSON.parse(new TextDecoder().decode(files['tokenizer.json'])) as TokenizerDescription),
      );
      this.baseTokenizers.set(base, tok);
    }
    try {
      return await tok;
    } catch (e) {
      this.baseTokenizers.delete(base); // the next call tries again
      throw new Error(
        `could not read the base checkpoint's tokenizer.json (public/checkpoints/${base}): ${(e as Error).message}`,
      );
    }
  }

  /** The tokenizer of run `runId`'s own model: from this worker's copy, else from the run's checkpoint (each carries it). */
  private async pickedTokenizer(runId: string, picked: BaseModelRunOptions): Promise<CheckpointTokenizer> {
    let tok = this.pickedTokenizers.get(picked.id);
    if (!tok) {
      tok = (async () => {
        const files = this.pickedModel(picked.id) ?? (await this.store.latestCheckpoint(runId))?.files;
        if (!files)
          throw new Error(
            `${notHeld(picked)}, and run '${runId}' has no checkpoint of it: pick the model folder again (Use this model)`,
          );
        return checkpointTokenizer(files).tokenizer;
      })();
      this.pickedTokenizers.set(picked.id, tok);
    }
    try {
      return await tok;
    } catch (e) {
      this.pickedTokenizers.delete(picked.id); // the next call tries again
      throw e;
    }
  }

  /**
   * The base a run starts from: the shipped checkpoint of its preset, or a person's own model (its
   * `base`): this worker's copy, else (after a reload) the run's own checkpoint, which carries the
   * model and its tokenizer. The latter is the base only while it is the step-0 checkpoint or the
   * run has no reference policy (KL β > 0, DPO's reference and pair sampler): a later checkpoint
   * holds trained weights, and taking them as the reference would change the objective silently.
   */
  private async baseCheckpoint(o: RunOptions, runId: string): Promise<LoadedCheckpoint> {
    const picked = pickedBase(o);
    if (!picked) {
      const name = baseOf(o.preset)!;
      try {
        return importCheckpoint(await this.loadBase(name));
      } catch (e) {
        throw new Error(`could not load the base checkpoint (public/checkpoints/${name}): ${(e as Error).message}`);
      }
    }
    const held = this.pickedModel(picked.id);
    const own = held ? null : await this.store.latestCheckpoint(runId);
    if (!held && !own)
      throw new Error(`${notHeld(picked)}: pick the model folder again (Use this model), then start the run`);
    const reference =
      o.preset === 'dpo-arith'
        ? 'DPO samples its pairs from the starting model and scores them against it'
        : 'beta' in o && o.beta > 0
          ? `KL β = ${o.beta} holds the run to the starting model`
          : null;
    if (own && own.step > 0 && reference) {
      throw new Error(
        `${notHeld(picked)}, and ${reference}, which the run's checkpoint at step ${own.step} no longer holds (it has the trained weights): pick the model folder again (Use this model), then continue`,
      );
    }
    try {
      return importCheckpoint(held ?? own!.files);
    } catch (e) {
      throw new Error(
        `could not read the model '${picked.name}' (${held ? "this worker's copy" : `the run's checkpoint at step ${own!.step}`}): ${(e as Error).message}`,
      );
    }
  }

  /** A stored Flow-GRPO run's reward over its view box, on a size × size grid (cell centres), or null for another run. */
  async flowField(runId: string, size = 64): Promise<FlowField | null> {
    if (!Number.isInteger(size) || size < 2 || size > 512)
      throw new Error(`flowField: size = ${size}; expected an integer in 2..512`);
    const run = (await this.store.listRuns()).find((r) => r.runId === runId);
    if (!run || run.options.preset !== 'flowgrpo-2d') return null;
    return rewardGrid(flowConfigOf(run.options, FLOW_GRPO_2D).config.reward, FLOW_VIEW_BOX, size);
  }

  /**
   * What reading a stored run's episodes needs (its environment, tokenizer, group size and what
   * trains), or null when the run is unknown or journals no episodes.
   */
  async episodeContext(runId: string): Promise<EpisodeContext | null> {
    const run = (await this.store.listRuns()).find((r) => r.runId === runId);
    if (!run || !isEpisodePreset(run.options)) return null;
    const config = episodeConfigOf(run.options);
    const tok = await this.tokenizerOf(runId);
    return {
      kind: configuredKind(config, this.getServices()),
      tok: charTokenizer(tok!, `${run.options.preset} episodes`),
      group: config.group,
      truncation: config.truncation,
      maskZeroAdvantage: config.maskZeroAdvantage,
    };
  }

  private async trainer(o: RunOptions, runId: string, writer: string): Promise<Trainer> {
    if (o.preset === 'sft-arith') {
      const sft = new SftRun(this.getOps(), sftConfigOf(o, SFT_ARITH));
      return {
        model: sft.model,
        tok: sft.tok,
        config: sft.config,
        next: async () => ({ metrics: { ...(await sft.next()) } }),
        evaluate: () => sft.evaluate(),
        run: sft,
      };
    }
    if (o.preset === 'flowgrpo-2d') return flowTrainer(this.getOps(), o);
    const base = await this.baseCheckpoint(o, runId);
    if (isEpisodePreset(o)) {
      const config = episodeConfigOf(o);
      return grpoTrainer(
        new GrpoEpisodeRun(
          this.getOps(),
          config,
          base,
          { journal: this.store.journal, runId, writer },
          this.getServices(),
        ),
        config,
        base.tokenizer,
      );
    }
    if (o.preset === 'dpo-arith') {
      const config = dpoConfigOf(o, DPO_ARITH);
      const dpo = new DpoRun(this.getOps(), config, base);
      return {
        model: dpo.model,
        tok: base.tokenizer,
        config,
        next: async () => {
          const s = await dpo.next();
          return {
            metrics: s.metrics,
            groups: pairRecords(s, base.tokenizer, config),
            sessions: pairSessions(s, base.tokenizer, config),
          };
        },
        evaluate: () => dpo.evaluate(),
        onProgress: (report) => (dpo.onProgress = report),
        run: dpo,
      };
    }
    if (o.preset === 'ppo-arith') {
      const config = ppoConfigOf(o, PPO_ARITH);
      return grpoTrainer(new PpoRun(this.getOps(), config, base, this.getServices()), config, base.tokenizer);
    }
    const config = grpoConfigOf(o, GRPO_ARITH);
    return grpoTrainer(new GrpoRun(this.getOps(), config, base, this.getServices()), config, base.tokenizer);
  }

  /**
   * Runs steps to `o.steps`: from 1 (after the evaluation before training, step 0, when the run
   * evaluates at all), or from the step after the checkpoint `from`. A stop between steps writes a
   * checkpoint of the last committed step (unless it has one), so a stopped run can continue.
   */
  private async loop(
    run: Active,
    o: RunOptions,
    emit: (e: RunEvent) => void,
    from: From | null,
    release: () => void,
  ): Promise<void> {
    const runId = run.id;
    const setStatus = async (status: RunStatus, message?: string, errorName?: string) => {
      emit({ type: 'status', runId, status, ...(message ? { message } : {}), ...(errorName ? { errorName } : {}) });
      await this.store
        .setStatus(runId, status, message)
        .catch((e: Error) => console.error(`run ${runId}: could not store status ${status}: ${e.message}`));
    };
    const phase =
      (step: number): PhaseReport =>
      (p, done, total, unit) =>
        emit({
          type: 'phase',
          runId,
          step,
          phase: p,
          ...(done !== undefined ? { done } : {}),
          ...(total !== undefined ? { total } : {}),
          ...(unit ? { unit } : {}),
        });
    try {
      if (from) {
        await this.store.truncateAfter(runId, from.step);
        await setStatus('running', `continuing from the checkpoint at step ${from.step}`);
      } else {
        await this.store.putRun({ runId, options: o, createdAt: Date.now(), status: 'running', lastStep: 0 });
        emit({ type: 'status', runId, status: 'running' });
      }
      const choice = this.getBackendChoice();
      await this.store.setBackend(runId, this.getOps().backend, choice ?? undefined);
      const trainer = await this.trainer(o, runId, `${runId}/loop ${++this.loops} at ${new Date().toISOString()}`);
      if (from) trainer.run.resumeAt({ ...from.resume, weights: importCheckpoint(from.files).weights });
      /** The last step stored, and the step of the run's checkpoint (the one continuing would start from). */
      let committed = from?.step ?? 0;
      let checkpointed = from?.step ?? null;
      const checkpoint = async (step: number) => {
        if (!trainer.model || !trainer.tok) return;
        phase(step)('checkpointing');
        const files = await exportCheckpoint(trainer.model, trainer.tok, {
          kind: 'dewpoint-checkpoint',
          trainedWith: `Experiments view (${o.preset})`,
          runId,
          step,
          [o.preset.split('-')[0]]: checkpointConfig(trainer.config),
        });
        // With AdamW's state and the trainer's position, the checkpoint is one a run can continue from.
        const resume = { optimizer: await trainer.model.getOptimizerState(), position: trainer.run.position() };
        await this.store.saveCheckpoint(runId, step, files, resume);
        checkpointed = step;
        emit({ type: 'checkpoint', runId, step, bytes: Object.values(files).reduce((n, f) => n + f.byteLength, 0) });
      };
      // A run from a base checkpoint can continue from its start (the base, fresh AdamW) when it
      // is cut off before its first checkpoint: a multi-turn run then resumes its first step's
      // journaled turns instead of losing them.
      if (!from && baseOf(o.preset) !== null) await checkpoint(0);
      // The held-out accuracy before any update, so the accuracy curve starts where the model started.
      if (!from && o.evalEvery > 0) {
        phase(0)('evaluating', 0, o.evalN, 'problems');
        const t0 = performance.now();
        trainer.onProgress?.(phase(0));
        const ev = await trainer.evaluate();
        trainer.onProgress?.(null);
        emit({
          type: 'eval',
          runId,
          step: 0,
          accuracy: ev.accuracy,
          meanLength: ev.meanLength,
          n: ev.n,
          samples: ev.samples,
        });
        await this.store.commitStep(runId, {
          step: 0,
          metrics: {},
          evaluation: { step: 0, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n },
          ms: performance.now() - t0,
        });
      }
      for (let step = committed + 1; step <= o.steps; step++) {
        // Yield to the event loop so pause / stop messages are handled between steps.
        await new Promise((r) => setTimeout(r, 0));
        if (run.status === 'paused') await this.waitWhilePaused(run, setStatus);
        if (run.status === 'stopped') {
          // The trainer stands exactly at the last committed step: its checkpoint is one to continue from.
          if (committed > 0 && checkpointed !== committed) await checkpoint(committed);
          await setStatus(
            'stopped',
            committed === 0
              ? 'stopped before the first step'
              : trainer.model
                ? `stopped after step ${committed}; continue from its checkpoint`
                : `stopped after step ${committed} (this run keeps no checkpoint to continue from)`,
          );
          return;
        }
        const t0 = performance.now();
        const report = phase(step);
        if (trainer.onProgress) trainer.onProgress(report);
        else report('step');
        const { metrics, groups, batch, sessions, flow } = await trainer.next();
        trainer.onProgress?.(null);
        let evaluation;
        if (o.evalEvery > 0 && (step % o.evalEvery === 0 || step === o.steps)) {
          report('evaluating', 0, o.evalN, 'problems');
          const ev = await trainer.evaluate();
          evaluation = { step, accuracy: ev.accuracy, meanLength: ev.meanLength, n: ev.n };
          emit({
            type: 'eval',
            runId,
            step,
            accuracy: ev.accuracy,
            meanLength: ev.meanLength,
            n: ev.n,
            samples: ev.samples,
          });
        }
        report('storing');
        // One transaction per step; a full store pauses the run until the person frees space and resumes.
        let stored = false;
        while (!stored) {
          try {
            await this.store.commitStep(runId, {
              step,
              metrics,
              ms: performance.now() - t0,
              ...(groups ? { groups } : {}),
              ...(batch ? { batch } : {}),
              ...(sessions ? { sessions } : {}),
              ...(flow ? { flow } : {}),
              ...(evaluation ? { evaluation } : {}),
            });
            stored = true;
          } catch (e) {
            if (!(e instanceof StorageFullError)) throw e;
            run.status = 'paused';
            await this.waitWhilePaused(run, setStatus, e.message);
            if ((run.status as RunStatus) === 'stopped') break;
          }
        }
        // Stopped while waiting for space: this step was never committed, so it is neither reported
        // nor checkpointed, and the trainer has moved past the last committed step (no checkpoint of it now).
        if (!stored) {
          await setStatus(
            'stopped',
            `stopped after step ${committed} (step ${step} could not be stored)${checkpointed !== null ? `; continue from the checkpoint at step ${checkpointed}` : ''}`,
          );
          return;
        }
        committed = step;
        emit({ type: 'step', runId, step, totalSteps: o.steps, metrics });
        if ((o.checkpointEvery > 0 && step % o.checkpointEvery === 0) || step === o.steps) await checkpoint(step);
      }
      run.status = 'finished';
      await setStatus('finished');
    } catch (e) {
      run.status = 'failed';
      const err = e as Error;
      await setStatus('failed', err.message, err.name);
    } finally {
      run.ended = true;
      release();
    }
  }

  private async waitWhilePaused(
    run: Active,
    setStatus: (s: RunStatus, m?: string) => Promise<void>,
    message?: string,
  ): Promise<void> {
    await setStatus('paused', message);
    // A resume or stop may arrive while the status is being reported, before there is a wake to call.
    if (run.status === 'paused') await new Promise<void>((r) => (run.wake = r));
    run.wake = null;
    if ((run.status as RunStatus) === 'running') await setStatus('running');
  }
}
