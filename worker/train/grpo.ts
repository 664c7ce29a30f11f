/**
 * The single-turn run of the GRPO family: per step a SampledRollout draws P prompts × G
 * completions under the current weights (KV cache) as one-call Sessions, from arithmetic or a
 * person's prompt dataset (task-source.ts), scored by MathReward or the dataset's reward; pack;
 * then the shared update (update.ts: the RL core's objective, backward, clip, AdamW; `epochs` ×
 * `miniBatches` optimizer steps per batch, verl `ppo_epochs`, `ppo_mini_batch_size`, one by
 * default). GrpoRun takes pack's outcome advantages, PpoRun (ppo.ts) a critic's. With beta > 0 a
 * frozen copy of the starting weights is the reference. The model, scheduler, resume position and
 * update dispatch are the run base's (grpo-family.ts). Not the UI loop (worker/runs) nor the CLI:
 * both drive this.
 */
import type { Ops } from '../../kernels/ops';
import type { ArithOptions } from '../data/arith';
import type { TextTokenizer } from '../data/tokenizer';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { stopsOf } from '../model/checkpoint';
import type { Model } from '../model/model';
import type { PackedBatch, PackOptions } from '../rl/pack-types';
import type {
  AdvantageOptions,
  AggregationOptions,
  IsWeightsOptions,
  KlOptions,
  OutcomeEstimator,
  PolicyLossSpec,
  RejectionThresholds,
  Session,
  Truncation,
} from '../rl/index';
import type { DatasetRunOptions, WeightStorage } from '../contract/options';
import type { KindServices } from '../episodes/kinds';
import type { Generated } from '../rollout/generate';
import { PromptSource } from '../rollout/prompt-source';
import { SampledRollout } from '../rollout/sampled-rollout';
import type { EvalProgress, EvalResult } from './evaluate';
import type { CriticConfig } from './critic';
import type { DynamicSampling } from './dynamic-sampling';
import { fillBatch } from './dynamic-sampling';
import { GrpoFamilyRun, punishOverlong, sampledEvalOf } from './grpo-family';
import type { RlSchedule } from './schedule';
import type { OverlongOptions } from '../rewards/overlong';
import type { RunTask, TaskSource } from './task-source';
import { taskSourceOf } from './task-source';
import { wasmStepPlan } from '../hf/memory';
import type { LoraConfig } from '../model/lora';
import type { SampledSession, Sampler } from '../rollout/prompt-source';
import type { GrpoUpdate, TrainedBatch, UpdateConfig } from './update';
import { packForUpdate } from './update';

/** A single-turn batch as collected: its tasks (those trained on), sessions and dynamic sampling's figures. */
interface SampledBatch {
  tasks: RunTask[];
  sessions: SampledSession[];
  filterMetrics: Record<string, number>;
}

/** AdamW in GRPO_ARITH: lr 1e-4 constant, (0.9, 0.99), wd 0 (docs/calibration.md "GRPO"). */
export interface GrpoConfig extends UpdateConfig {
  /** Seed of the task stream and of the samplers. */
  seed: number;
  steps: number;
  /** Prompts per step (P) and completions per prompt (G): docs/calibration.md "GRPO": P = 16, G = 8. */
  prompts: number;
  group: number;
  /** Sampling (behavior policy): temperature 1, no top-k/top-p by default. */
  temperature: number;
  topK: number;
  topP: number;
  maxNew: number;
  /** Policy loss by registry name (default ppo, clip 0.2) and its aggregation (token-mean). */
  policyLoss: PolicyLossSpec;
  aggregation: AggregationOptions;
  /** KL strength to the frozen starting weights (0: no reference model). */
  beta: number;
  /** KL estimator and its clamps (used when beta > 0). */
  kl: KlOptions;
  /** Mask sessions of all-equal groups (docs/calibration.md "GRPO" leaves them out). */
  maskZeroAdvantage: boolean;
  /** Outcome advantage estimator and its options (compat, scale, ...). */
  estimator: OutcomeEstimator;
  advantage: AdvantageOptions;
  /** Truncated completions: 'mask' (no loss mass) or 'score' (train on their reward). */
  truncation: Truncation;
  /** Behavior-policy corrections: IS weights (TIS cap or IcePop band) and rejection masks; none by default. */
  importance?: IsWeightsOptions;
  rejection?: RejectionThresholds;
  /**
   * Optimizer steps per sampled batch: `epochs` passes over it, each split into `miniBatches`
   * (1, 1 = one step, ratio ≡ 1, docs/calibration.md "GRPO"). With more than one step, old log-probs are the
   * trainer's rescoring of the batch before the first update.
   */
  epochs: number;
  miniBatches: number;
  /**
   * Renormalise the trainer's log-probs over each sampled id's top-k/top-p support, as the
   * sampler did (dew; the sampler records the support). Off by default: the full softmax.
   */
  renormalize?: boolean;
  evalEvery: number;
  evalN: number;
  /** Samples per held-out task at the training sampler's settings for pass@1 and pass@k (`SampledEval`); absent or 0: greedy only. */
  evalSamples?: number;
  /** The arithmetic generator's options (unused with a dataset). */
  task: ArithOptions;
  /** A person's prompt dataset and its reward instead of the arithmetic generator (task-source.ts); absent: arithmetic. */
  dataset?: DatasetRunOptions;
  /** Learning-rate warmup and schedule per sampled batch, as verl steps it (schedule.ts `rlLrAt`); absent: constant. */
  lrSchedule?: RlSchedule;
  /** DAPO's soft overlong punishment, added to every trainable session's reward (`punishOverlong`); absent: off. */
  overlong?: OverlongOptions;
  /** DAPO's dynamic sampling (dynamic-sampling.ts `fillBatch`): batches until P groups vary; absent: one batch. */
  dynamicSampling?: DynamicSampling;
  /**
   * Asynchronous rollouts (scheduler.ts): batch k trains on version k − 1 and may have been
   * sampled under version k − 1 − s at the oldest, while the trainer updated. Absent or 0: synchronous.
   */
  staleness?: number;
  /**
   * With a staleness bound: the batches sampled ahead draw elsewhere (a Web Worker or a worker
   * thread per slot: `services.remoteSampler`), not on sampler models in the trainer's thread. The
   * same numbers on the same backend; absent: here.
   */
  samplerWorker?: boolean;
  /**
   * Ids one training pass holds activations for (model.ts `idsPerPass`, verl
   * `ppo_max_token_len_per_gpu`): a batch of more trains in passes, each pass's forward run again
   * for its backward. Absent: hf/memory.ts `defaultIdsPerPass` (a 1 GiB budget: the whole batch of a small model).
   */
  idsPerPass?: number;
  /** LoRA adapters trained on the frozen base, which is then the reference too (model/lora.ts, policy.ts); absent: full fine-tuning. */
  lora?: LoraConfig;
  /**
   * Per-layer activation recomputation (model.ts `recomputeLayers`): each layer's forward runs again
   * before its backward. Absent: on for models of 100M parameters or more (hf/memory.ts recomputesLayers).
   */
  recomputeLayers?: boolean;
  /**
   * The weights no step changes — the reference policy's under full fine-tuning, the base's under
   * LoRA — held as bf16 (model.ts `storage`: half their memory, rounded to bf16). Absent: f32.
   */
  frozenWeights?: WeightStorage;
}

export const GRPO_ARITH: GrpoConfig = {
  seed: 1,
  steps: 150,
  prompts: 16,
  group: 8,
  temperature: 1,
  topK: 0,
  topP: 1,
  maxNew: 16,
  lr: 1e-4,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1.0,
  policyLoss: { name: 'ppo' },
  aggregation: { mode: 'token-mean' },
  beta: 0,
  kl: { estimator: 'k3' },
  maskZeroAdvantage: true,
  estimator: 'grpo',
  advantage: {},
  truncation: 'mask',
  epochs: 1,
  miniBatches: 1,
  evalEvery: 10,
  evalN: 200,
  task: { difficulty: 1, format: 'bare' },
};

export interface GrpoStep {
  step: number;
  /** The batch's figures, the last optimizer step's objective metrics and `opt/grad_norm`, `opt/steps_per_batch`. */
  metrics: Record<string, number>;
  tasks: RunTask[];
  sessions: Session[];
  generated: Generated[];
  packed: PackedBatch;
  /**
   * ∂loss/∂logp per packed id, from the last update that trained the id's row: the last epoch
   * covers every row once, so this is the last epoch's gradient seeds (one update: its seed).
   */
  dlogp: Float64Array;
  /** The IS weights and rejection keep flags per packed id, when corrections are on (TrainedBatch). */
  corrections?: TrainedBatch['corrections'];
  /**
   * The old log-probs when the trainer rescored the batch under the weights before its first
   * update (epochs × miniBatches > 1, verl `old_log_prob`); null when old is the sampler's raw
   * log-probs, `packed.oldLogProbs`. The Batch view's mismatch is old − behavior.
   */
  oldLogp: Float64Array | null;
  /** The batch's optimizer steps, in order. */
  updates: GrpoUpdate[];
  /** Under a critic (PpoRun, ppo.ts), per packed id: the value at rollout and the return target. */
  values?: Float64Array;
  returns?: Float64Array;
}

/**
 * The single-turn rollout of GRPO and PPO: G completions per task under `model`, scored by the
 * source's reward (MathReward on arithmetic). Batch `step` (version step − 1) samples with
 * generate seed c.seed · 100_003 + step, so a GRPO and a PPO run of one seed draw the same first batch.
 */
function singleTurnRollout(
  model: Model | Sampler,
  c: GrpoConfig,
  tok: TextTokenizer,
  source: TaskSource,
  onProgress: (finished: number, rows: number) => void,
  pack: PackOptions,
  seed = c.seed * 100_003 + 1,
): SampledRollout<RunTask> {
  const prompts = new PromptSource<RunTask>({
    model,
    reward: source.reward,
    decode: (ids) => tok.decode(ids),
    prompt: (task) => source.promptIds(task),
    ...stopsOf(tok),
    maxNewTokens: c.maxNew,
    sampling: { temperature: c.temperature, topK: c.topK, topP: c.topP },
    seed,
    ...(c.renormalize ? { recordSupport: true } : {}),
    onProgress,
  });
  return new SampledRollout(prompts, { groups: c.group, pack });
}

/**
 * A single-turn run from a base checkpoint, whatever its update: the task source (arithmetic, or a
 * person's dataset: task-source.ts) with its stream, held-out tasks and reward, the rollout, one
 * sampled, packed and trained batch per `next()`, and evaluation; the models, scheduler, update
 * and resume position are the run base's (grpo-family.ts). GrpoRun and PpoRun (ppo.ts) differ
 * only in how they pack and whether a critic trains. `services.codeGrader` grades a dataset's `code` reward.
 */
export abstract class SingleTurnRun<C extends GrpoConfig> extends GrpoFamilyRun<C, SampledBatch> {
  protected readonly source: TaskSource;
  protected readonly stream: TaskSource['stream'];
  protected readonly rollout: SampledRollout<RunTask>;

  constructor(
    ops: Ops,
    config: C,
    base: LoadedCheckpoint,
    private readonly o: { critic: CriticConfig | null; pack: PackOptions },
    services: KindServices = {},
  ) {
    super(ops, config, base, o.critic, services);
    this.source = taskSourceOf(config, base.tokenizer, base.config.maxSeq, services.codeGrader ?? null);
    this.stream = this.source.stream;
    this.rollout = this.rolloutOn(this.model, 0);
  }

  /** The rollout of batches drawn on `model`: the run's own on its model, a batch's own on a sampler's (seeded by the batch). */
  private rolloutOn(model: Model | Sampler, batch: number): SampledRollout<RunTask> {
    const c = this.config;
    const seed = c.seed * 100_003 + 1;
    return singleTurnRollout(
      model,
      c,
      this.base.tokenizer,
      this.source,
      // A batch sampled ahead does not report: the step under way is another's.
      (finished, rows) =>
        (batch === 0 || batch === this.step) && this.onProgress?.('sampling', finished, rows, 'sequences'),
      this.o.pack,
      batch === 0 ? seed : (seed + Math.imul(batch, 0x9e3779b1)) | 0,
    );
  }

  /** Batch `batch`'s sessions, drawn on `model` under `version` (more batches with dynamic sampling). */
  protected async collect(batch: number, version: number, model: Model | Sampler): Promise<SampledBatch> {
    const c = this.config;
    const rollout = model === this.model ? this.rollout : this.rolloutOn(model, batch);
    const drawn: RunTask[] = [];
    const draw = async () => {
      const tasks = this.source.stream.take(c.prompts);
      this.checkMemory(tasks);
      drawn.push(...tasks);
      if (batch === this.step) this.onProgress?.('sampling', 0, c.prompts * c.group, 'sequences');
      return punishOverlong(await rollout.collect(tasks, version), c.overlong, c.maxNew);
    };
    const filled = c.dynamicSampling ? await fillBatch(c.prompts, c.dynamicSampling, draw) : null;
    const sessions = filled ? filled.sessions : await draw();
    // The tasks of the batch trained on, in the order drawn (dynamic sampling draws more).
    const trained = new Set(sessions.map((s) => s.task));
    return { tasks: drawn.filter((t) => trained.has(t.id)), sessions, filterMetrics: filled?.metrics ?? {} };
  }

  /**
   * Refuses a batch whose step would not fit the wasm memory (hf/memory.ts `wasmStepPlan`), before
   * sampling it, with the plan's parts and the idsPerPass that would fit. Other backends are not
   * planned: a GPU's memory is the device's.
   */
  private checkMemory(tasks: readonly RunTask[]): void {
    if (this.model.ops.backend !== 'wasm' || tasks.length === 0) return;
    const promptIds = Math.max(...tasks.map((t) => this.source.promptIds(t).length));
    const { problem } = wasmStepPlan(this.base.config, this.config, promptIds);
    if (problem) throw new Error(problem);
  }

  /**
   * The next step: P tasks × G completions (sampled under the current weights, or up to s versions
   * before), packed for the update (`packForUpdate`) and trained on.
   */
  async next(): Promise<GrpoStep> {
    const c = this.config;
    const {
      batch: { tasks, sessions, filterMetrics },
      t0,
    } = await this.nextBatch();
    const generated: Generated[] = sessions.map(({ calls: [g] }) => ({
      promptIds: g.promptIds,
      sampledIds: g.sampledIds,
      behaviorLogProbs: g.behaviorLogProbs,
      rawLogProbs: g.rawLogProbs,
      finishReason: g.finishReason,
    }));
    const tSample = performance.now();
    const longest = Math.max(...generated.map((g) => g.promptIds.length)) + c.maxNew;
    // Two chains always fit a row of twice the longest chain.
    const packed = packForUpdate((options) => this.rollout.pack(sessions, 2 * longest, options), c.miniBatches);
    if (!packed.ok) throw new Error(`batch does not pack: ${packed.message}`);
    const trained = await this.train(sessions, packed, t0, tSample, filterMetrics);
    return { step: this.step, tasks, generated, ...trained };
  }

  evaluate(n = this.source.heldOut.length, progress?: EvalProgress): Promise<EvalResult> {
    return this.source.evaluate(this.model, this.source.heldOut.slice(0, n), sampledEvalOf(this.config), progress);
  }
}

/** GRPO (or another outcome estimator) on single-turn prompts: pack gives the advantages. */
export class GrpoRun extends SingleTurnRun<GrpoConfig> {
  constructor(ops: Ops, config: GrpoConfig, base: LoadedCheckpoint, services: KindServices = {}) {
    super(
      ops,
      config,
      base,
      {
        critic: null,
        pack: {
          estimator: config.estimator,
          advantage: config.advantage,
          truncation: config.truncation,
          maskZeroAdvantage: config.maskZeroAdvantage,
        },
      },
      services,
    );
  }
}
