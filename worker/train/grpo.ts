/**
 * A GRPO run on arithmetic (or a person's prompt dataset, task-source.ts), one sampled batch per
 * call of `next()`: a SampledRollout draws P prompts × G completions under the current weights
 * (KV cache) as one-call Sessions scored with MathReward (or the dataset's reward), pack, rescore
 * with the trainer, evaluate the GRPO objective of the RL core, backward, clip, AdamW; `epochs` × `miniBatches` such optimizer steps per batch (verl
 * `ppo_epochs`, `ppo_mini_batch_size`), one by default. With beta > 0 a frozen copy of the
 * starting weights is the reference. Not the UI loop (worker/runs) nor the CLI: both drive this.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import type { ArithOptions } from '../data/arith';
import type { TextTokenizer } from '../data/tokenizer';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { stopsOf } from '../model/checkpoint';
import { Model } from '../model/model';
import { supportBias } from '../model/packing';
import type { Scored } from '../model/model';
import type { PackedInput } from '../model/packing';
import type { PackedBatch, PackOptions, PackResult } from '../rl/pack-types';
import type {
  AdvantageOptions,
  AggregationOptions,
  GrpoObjectiveOptions,
  GrpoObjectiveOutput,
  IsWeightsOptions,
  KlOptions,
  OutcomeEstimator,
  PolicyLossSpec,
  RejectionThresholds,
  Session,
  Truncation,
} from '../rl/index';
import { grpoObjective, ppoObjective, sessionMeanWeights } from '../rl/index';
import type { PpoObjectiveOutput } from '../rl/index';
import type { DatasetRunOptions, WeightStorage } from '../contract/options';
import type { PhaseReport } from '../contract/records';
import type { KindServices } from '../episodes/kinds';
import type { Generated } from '../rollout/generate';
import { PromptSource } from '../rollout/prompt-source';
import { SampledRollout } from '../rollout/sampled-rollout';
import type { EvalProgress, EvalResult, SampledEval } from './evaluate';
import type { OptimizerConfig } from './optimizer';
import { stepOptions } from './optimizer';
import type { ResumePoint, TrainerPosition } from './resume';
import { restore } from './resume';
import type { DynamicSampling } from './dynamic-sampling';
import { fillBatch } from './dynamic-sampling';
import type { RlSchedule } from './schedule';
import { rlLrAt } from './schedule';
import type { OverlongOptions } from '../rewards/overlong';
import { overlongPenalty } from '../rewards/overlong';
import type { RunTask, TaskSource } from './task-source';
import { taskSourceOf } from './task-source';
import { RolloutScheduler, samplerSlots } from './scheduler';
import { wasmStepPlan } from '../hf/memory';
import type { LoraConfig } from '../model/lora';
import { dropoutSeedOf } from '../model/lora';
import { runModels } from './policy';
import type { SampledSession, Sampler } from '../rollout/prompt-source';

/** A single-turn batch as collected: its tasks (those trained on), sessions and dynamic sampling's figures. */
interface SampledBatch {
  tasks: RunTask[];
  sessions: SampledSession[];
  filterMetrics: Record<string, number>;
}

/** AdamW in GRPO_ARITH: lr 1e-4 constant, (0.9, 0.99), wd 0 (docs/calibration.md "GRPO"). */
export interface GrpoConfig extends OptimizerConfig {
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

/** One optimizer step of a batch: the packed rows it trained on and what it measured. */
export interface GrpoUpdate {
  /** 0-based pass over the batch, and mini-batch within the pass. */
  epoch: number;
  miniBatch: number;
  /** The packed rows it scored and trained on, in that order: filled rows ascending, then padding rows. */
  rows: number[];
  /** Trainable tokens its objective aggregated over (responseMask × the rejection keep). */
  tokens: number;
  /** Its objective's metrics and `opt/grad_norm`. */
  metrics: Record<string, number>;
}

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
}

/** epochs × miniBatches, each checked to be an integer ≥ 1. */
function stepsPerBatch(c: Pick<GrpoConfig, 'epochs' | 'miniBatches'>): number {
  for (const k of ['epochs', 'miniBatches'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 1) throw new Error(`GrpoConfig.${k} = ${c[k]}: expected an integer ≥ 1`);
  }
  return c.epochs * c.miniBatches;
}

/**
 * The rows each optimizer step trains on: per epoch, a partition of the batch's `rows` packed rows
 * into `miniBatches` groups of rows / miniBatches (pack pads `rows` to a multiple). The filled rows
 * (pack fills 0 … rowsNeeded−1) are shuffled once per epoch (verl shuffles its mini-batches per
 * epoch) and dealt round-robin, so mini-batches differ by at most one filled row; padding rows make
 * up the size. One mini-batch: every row, in order. A session's chains never leave their rows, and
 * the advantages come from pack over whole groups, so a mini-batch needs no whole groups.
 */
function miniBatchRows(
  rows: number,
  rowsNeeded: number,
  epochs: number,
  miniBatches: number,
  rand: () => number,
): number[][][] {
  const size = rows / miniBatches;
  if (!Number.isInteger(size) || rowsNeeded > rows)
    throw new Error(`miniBatchRows: ${rows} rows (${rowsNeeded} filled) do not split into ${miniBatches} mini-batches`);
  const all = Array.from({ length: rows }, (_, r) => r);
  if (miniBatches === 1) return Array.from({ length: epochs }, () => [all]);
  return Array.from({ length: epochs }, () => {
    const filled = all.slice(0, rowsNeeded);
    for (let i = filled.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [filled[i], filled[j]] = [filled[j], filled[i]];
    }
    const groups: number[][] = Array.from({ length: miniBatches }, () => []);
    filled.forEach((r, i) => groups[i % miniBatches].push(r));
    const padding = all.slice(rowsNeeded);
    return groups.map((g) => [...g.sort((a, b) => a - b), ...padding.splice(0, size - g.length)]);
  });
}

type Table = Float32Array | Float64Array | Int32Array;

/** Rows `rows` of a `[*, width]` table, stacked in that order. */
function takeRows<T extends Table>(a: T, rows: readonly number[], width: number): T {
  const out = new (a.constructor as new (n: number) => T)(rows.length * width);
  rows.forEach((r, i) => out.set(a.subarray(r * width, (r + 1) * width), i * width));
  return out;
}

/** Writes a mini-batch's `[rows.length, width]` table back at its rows of `dst`. */
function putRows(dst: Float64Array, src: ArrayLike<number>, rows: readonly number[], width: number): void {
  rows.forEach((r, i) => {
    for (let t = 0; t < width; t++) dst[r * width + t] = src[i * width + t];
  });
}

/**
 * Packs a batch for `updateOnBatch`: only the sessions that carry loss mass (include 'carried': a
 * zero-advantage group masked by maskZeroAdvantage costs no rows), in as many rows as needed
 * rounded up to a multiple of `miniBatches` (at least one each), so every mini-batch has the same
 * shape. `packWith` is pack with the caller's sessions, width and options, plus these.
 */
export function packForUpdate(
  packWith: (options: Pick<PackOptions, 'include' | 'rows'>) => PackResult,
  miniBatches: number,
): PackResult {
  const roundUp = (rows: number) => Math.max(1, Math.ceil(rows / miniBatches)) * miniBatches;
  const packed = packWith({ include: 'carried' });
  return packed.ok && packed.rows !== roundUp(packed.rows)
    ? packWith({ include: 'carried', rows: roundUp(packed.rows) })
    : packed;
}

/** One mini-batch of a packed batch, as the model and the objective read it. */
interface MiniBatch extends PackedInput {
  segmentIds: Int32Array;
  advantages: Float64Array;
  responseMask: Float64Array;
  behaviorLogp: Float64Array;
  sessionWeights: Float64Array;
  sessionIds: Int32Array;
  /** The same rows of any other `[rows, width]` table of the batch. */
  take<T extends Table>(a: T): T;
}

/** Rows `rows` of `p`; the batch itself (no copies) when they are every row in order. */
function miniBatchOf(p: PackedBatch, rows: readonly number[]): MiniBatch {
  const whole = rows.length === p.rows && rows.every((r, i) => r === i);
  const take = <T extends Table>(a: T): T => (whole ? a : takeRows(a, rows, p.width));
  const responseMask = take(p.responseMask);
  const sessionIds = take(p.sessionIds);
  return {
    rows: rows.length,
    width: p.width,
    inputIds: take(p.inputIds),
    segmentIds: take(p.segmentIds),
    positions: take(p.positions),
    advantages: take(p.advantages),
    responseMask,
    behaviorLogp: take(p.behaviorLogProbs),
    sessionIds,
    // session-mean over this mini-batch's sessions (the same weights unless a session spans rows).
    sessionWeights: whole ? p.sessionWeights : sessionMeanWeights(sessionIds, responseMask),
    take,
  };
}

/**
 * PPO's critic side of an update (worker/train/ppo.ts): the batch as scored once before its
 * first update (old log-probs and old values, verl `old_log_prob` and `values`), and the GAE
 * return targets. The packed batch's advantages are then GAE's; the objective is `ppoObjective`.
 */
export interface CriticUpdate {
  oldLogp: Float64Array;
  oldValues: Float64Array;
  returns: Float64Array;
  valueCoefficient: number;
  valueClip: number;
}

/** What one batch's update needs: the trainer's model, its frozen reference, the config and the batch's number. */
export interface UpdateContext {
  model: Model;
  reference: Model | null;
  config: Omit<GrpoConfig, 'task'>;
  /** 1-based batch number (AdamW counts (step − 1) · steps + k). */
  step: number;
  onProgress: PhaseReport | null;
  /** PPO: train the value head too, on these targets (the model needs its value head). */
  critic?: CriticUpdate;
}

/** A packed batch after its epochs × miniBatches optimizer steps, with the phases' end times. */
export interface TrainedBatch {
  dlogp: Float64Array;
  /**
   * With behavior-policy corrections on (importance or rejection): per packed id, the IS weight
   * and the rejection keep flag the last epoch's objective applied; else null.
   */
  corrections: { weights: Float64Array; keep: Float64Array } | null;
  /** The trainer's rescoring before the first update (several updates per batch), else null. */
  oldLogp: Float64Array | null;
  updates: GrpoUpdate[];
  last: GrpoObjectiveOutput | PpoObjectiveOutput | null;
  gradNorm: number;
  /**
   * performance.now() at the update's start, after the reference (the start without one), after
   * the old log-probs, after training; the first update's forward (ms).
   */
  tStart: number;
  tRef: number;
  tOld: number;
  tTrain: number;
  tFirstForward: number;
  /** Whether the reference scored the batch (β > 0). */
  referenced: boolean;
  packed: PackedBatch;
}

/**
 * The GRPO update of one packed batch, whatever collected it (single-turn prompts or multi-turn
 * episodes): old log-probs, the reference's, then epochs × miniBatches optimizer steps of the RL
 * core's GRPO objective.
 */
export async function updateOnBatch(ctx: UpdateContext, packed: PackedBatch): Promise<TrainedBatch> {
  const c = ctx.config;
  const steps = stepsPerBatch(c);
  const plan = miniBatchRows(
    packed.rows,
    packed.rowsNeeded,
    c.epochs,
    c.miniBatches,
    mulberry32((c.seed * 100_003 + ctx.step) ^ 0x6a09e667),
  );
  // Renormalised over the sampler's support: every scoring of these rows adds the support's logit bias.
  const support = c.renormalize ? packed.support : null;
  if (c.renormalize && !support)
    throw new Error("updateOnBatch: renormalize needs the sampler's support on every call (sample with recordSupport)");
  const V = ctx.model.config.vocab;
  const biasOf = (rows: readonly number[]) =>
    support ? supportBias(support, packed.segmentIds, packed.width, V, rows) : undefined;
  const allRows = Array.from({ length: packed.rows }, (_, r) => r);
  const tStart = performance.now();
  // The reference first: under LoRA it is the policy with its adapters off, and the first update's
  // forward (below) must be the last one the model ran before its backward.
  if (ctx.reference) ctx.onProgress?.('reference log-probs');
  const refLogp = ctx.reference
    ? (
        await ctx.reference.score(packed, biasOf(allRows), {
          temperature: c.temperature > 0 ? c.temperature : 1,
          adapters: false,
        })
      ).logp
    : undefined;
  const tRef = performance.now();
  // Old log-probs. One update per batch: the sampler's raw log-probs (ratio ≡ 1 up to float32,
  // docs/calibration.md "GRPO"), unless some call trails the weights (a batch sampled ahead: `lagging`), when
  // they are the update's own forward, detached: decoupled PPO's proximal policy is the weights
  // the batch trains on, and the behavior corrections weigh π_old / μ with the real lag (verl
  // recomputes old_log_prob). More: the trainer's rescoring under the weights before the first update
  // (verl `old_log_prob`), done in epoch 0's mini-batches last to first, so that the activations
  // left in place are the first update's own forward.
  const lagging = packed.versions.some((v) => v >= 0 && v < ctx.step - 1);
  // LoRA's adapter dropout: each update's forward draws its masks (dropoutSeedOf), no other forward does.
  const dropout = (ctx.model.loraConfig?.dropout ?? 0) > 0;
  let oldLogp = packed.oldLogProbs ?? undefined;
  let rescored: Float64Array | null = null;
  let firstScored: Scored | null = null;
  // One update: this forward is the update's own (its log-probs are the ratio's numerator), so it counts as training.
  let tFirstForward = 0;
  if (ctx.critic) {
    // PPO scored the batch before GAE: those are the old log-probs (and values); no second pass.
    oldLogp = ctx.critic.oldLogp;
    rescored = ctx.critic.oldLogp;
  } else if (steps === 1) {
    ctx.onProgress?.('training', 0, steps, 'updates');
    const t = performance.now();
    firstScored = await ctx.model.score(packed, biasOf(allRows), {
      temperature: c.temperature > 0 ? c.temperature : 1,
      dropoutSeed: dropoutSeedOf(c.seed, ctx.step, 0),
    });
    tFirstForward = performance.now() - t;
    // The sampler's raw log-probs are over the whole vocabulary: renormalised, old is this forward's own, detached (ratio ≡ 1).
    // So under adapter dropout (TRL's one-iteration old_per_token_logps = per_token_logps.detach()): the ratio is not the mask's noise.
    if (support || dropout) oldLogp = Float64Array.from(firstScored.logp);
    // The Batch view's mismatch (old − behavior) is then the lag's.
    if (lagging) rescored = oldLogp = Float64Array.from(firstScored.logp);
  } else {
    ctx.onProgress?.('old log-probs');
    rescored = new Float64Array(packed.rows * packed.width);
    for (let b = c.miniBatches - 1; b >= 0; b--) {
      firstScored = await ctx.model.score(miniBatchOf(packed, plan[0][b]), biasOf(plan[0][b]), {
        temperature: c.temperature > 0 ? c.temperature : 1,
      });
      putRows(rescored, firstScored.logp, plan[0][b], packed.width);
    }
    oldLogp = rescored;
    // Old log-probs are scored without dropout; the first update's forward must draw its masks.
    if (dropout) firstScored = null;
  }
  const tOld = performance.now();
  const options: GrpoObjectiveOptions = {
    policyLoss: c.policyLoss,
    aggregation: c.aggregation,
    beta: c.beta,
    kl: c.kl,
    importance: c.importance,
    rejection: c.rejection,
  };
  const dlogp = new Float64Array(packed.rows * packed.width);
  const corrections =
    c.importance || c.rejection
      ? { weights: new Float64Array(packed.rows * packed.width), keep: new Float64Array(packed.rows * packed.width) }
      : null;
  const updates: GrpoUpdate[] = [];
  let last: GrpoObjectiveOutput | null = null;
  let gradNorm = 0;
  for (let e = 0; e < c.epochs; e++) {
    for (let b = 0; b < c.miniBatches; b++) {
      ctx.onProgress?.('training', updates.length, steps, 'updates');
      const mb = miniBatchOf(packed, plan[e][b]);
      const scored =
        e === 0 && b === 0 && firstScored
          ? firstScored
          : await ctx.model.score(mb, biasOf(plan[e][b]), {
              temperature: c.temperature > 0 ? c.temperature : 1,
              dropoutSeed: dropoutSeedOf(c.seed, ctx.step, updates.length),
            });
      const input = {
        rows: mb.rows,
        width: mb.width,
        logp: scored.logp,
        oldLogp: oldLogp && mb.take(oldLogp),
        behaviorLogp: mb.behaviorLogp,
        refLogp: refLogp && mb.take(refLogp),
        advantages: mb.advantages,
        responseMask: mb.responseMask,
        segmentIds: mb.segmentIds,
        sessionWeights: mb.sessionWeights,
        sessionIds: mb.sessionIds,
        entropy: scored.entropy,
      };
      const critic = ctx.critic;
      let obj: GrpoObjectiveOutput | PpoObjectiveOutput;
      if (critic) {
        if (!scored.values) throw new Error('updateOnBatch: a critic update needs a model with a value head');
        obj = ppoObjective(
          { ...input, values: scored.values, oldValues: mb.take(critic.oldValues), returns: mb.take(critic.returns) },
          { ...options, valueCoefficient: critic.valueCoefficient, valueClip: critic.valueClip },
        );
      } else obj = grpoObjective(input, options);
      ctx.model.zeroGrad();
      await ctx.model.backward(obj.dlogp, 'dvalues' in obj ? obj.dvalues : null);
      // AdamW counts optimizer steps, not batches: batch k's updates are (k−1)·steps + 1 … k·steps.
      gradNorm = await ctx.model.step(
        stepOptions(c, (ctx.step - 1) * steps + updates.length + 1, rlLrAt(ctx.step, c.lr, c.steps, c.lrSchedule)),
      );
      putRows(dlogp, obj.dlogp, plan[e][b], packed.width);
      if (corrections) {
        putRows(corrections.weights, obj.correctionWeights, plan[e][b], packed.width);
        putRows(corrections.keep, obj.keep, plan[e][b], packed.width);
      }
      updates.push({
        epoch: e,
        miniBatch: b,
        rows: plan[e][b],
        tokens: obj.mask.reduce((n, m) => n + m, 0),
        metrics: { ...obj.metrics, 'opt/grad_norm': gradNorm },
      });
      last = obj;
    }
  }
  return {
    dlogp,
    corrections,
    oldLogp: rescored,
    updates,
    last,
    gradNorm,
    tStart,
    tRef,
    tOld,
    tTrain: performance.now(),
    tFirstForward,
    referenced: ctx.reference !== null,
    packed,
  };
}

/**
 * A batch's figures: pack's, the last update's objective metrics, rewards, lengths over every
 * call of every session, and verl's timing phases: sampling; the frozen reference (β > 0);
 * rescoring the old log-probs before the first update (only with several updates per batch: with
 * one, they are the sampler's); the updates, their forwards included.
 */
export function batchMetrics(
  c: Omit<GrpoConfig, 'task'>,
  sessions: readonly Session[],
  t: TrainedBatch,
  t0: number,
  tSample: number,
  /** The batch's number (1-based): its scheduled learning rate. */
  step: number,
): Record<string, number> {
  const steps = stepsPerBatch(c);
  const rewards = sessions.map((s) => s.reward ?? 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
  const sampledTokens = sessions.reduce((n, s) => n + s.calls.reduce((m, call) => m + call.sampledIds.length, 0), 0);
  return {
    ...t.packed.metrics,
    ...t.last?.metrics,
    'reward/mean': mean,
    'reward/std': std,
    ...groupSpread(sessions),
    'response/mean_length': sampledTokens / sessions.length,
    'response/truncated_frac': sessions.filter((s) => s.status === 'truncated').length / sessions.length,
    ...(c.overlong ? overlongMetrics(sessions) : {}),
    'opt/lr': rlLrAt(step, c.lr, c.steps, c.lrSchedule),
    'opt/grad_norm': t.gradNorm,
    'opt/steps_per_batch': steps,
    'perf/sample_ms': tSample - t0,
    ...(t.referenced ? { 'perf/ref_ms': t.tRef - t.tStart } : {}),
    ...(t.oldLogp ? { 'perf/old_logprob_ms': t.tOld - t.tRef } : {}),
    'perf/train_ms': t.tTrain - t.tOld + t.tFirstForward,
    'perf/step_ms': t.tTrain - t0,
    'perf/tokens_per_s': (t.packed.realTokens + sampledTokens) / ((t.tTrain - t0) / 1000),
  };
}

/**
 * A session's response length as verl counts it for the overlong buffer (`valid_response_length`):
 * every id after its first prompt, EOS included: a single turn's sampled ids; an episode's actions
 * and the environment's observations between them (its last call's context and ids, less the first prompt).
 */
export function responseLength(s: Session): number {
  const first = s.calls[0];
  const last = s.calls.at(-1);
  return first && last ? last.promptIds.length + last.sampledIds.length - first.promptIds.length : 0;
}

/**
 * The sessions with DAPO's soft overlong penalty (rewards/overlong.ts) added to the reward of each
 * one that has a reward, truncated or not, as verl's DAPO reward manager does; the penalty and the
 * score before it are kept in `components` (`overlong`, `score`). `maxLength` is the response
 * budget: maxNew for one turn, maxNew × maxTurns for an episode (what the verl export writes as
 * `data.max_response_length`). Absent options: the sessions unchanged.
 */
export function punishOverlong<S extends Session>(
  sessions: S[],
  o: OverlongOptions | undefined,
  maxLength: number,
): S[] {
  if (!o) return sessions;
  return sessions.map((s) => {
    if (s.reward === null) return s;
    const penalty = overlongPenalty(responseLength(s), maxLength, o);
    return { ...s, reward: s.reward + penalty, components: { ...s.components, score: s.reward, overlong: penalty } };
  });
}

/** `reward/overlong_penalty` (mean over the punished sessions) and `reward/overlong_frac` (those with a penalty < 0). */
function overlongMetrics(sessions: readonly Session[]): Record<string, number> {
  const penalties = sessions.flatMap((s) => (s.components?.overlong === undefined ? [] : [s.components.overlong]));
  const n = penalties.length || 1;
  return {
    'reward/overlong_penalty': penalties.reduce((a, b) => a + b, 0) / n,
    'reward/overlong_frac': penalties.filter((p) => p < 0).length / n,
  };
}

/**
 * How much the members of each advantage group (sessions of one task and group) differ, averaged
 * over groups: `reward/group_std_mean` the population std of their rewards, `response/distinct_frac`
 * distinct completions (every call's sampled ids) per member. Run health reads both (runs/health.ts).
 */
export function groupSpread(sessions: readonly Session[]): Record<string, number> {
  const groups = new Map<string, Session[]>();
  for (const s of sessions) {
    const key = `${s.task}\u0000${s.group}`;
    const g = groups.get(key);
    if (g) g.push(s);
    else groups.set(key, [s]);
  }
  let std = 0;
  let distinct = 0;
  for (const g of groups.values()) {
    const r = g.map((s) => s.reward ?? 0);
    const m = r.reduce((a, b) => a + b, 0) / r.length;
    std += Math.sqrt(r.reduce((a, b) => a + (b - m) ** 2, 0) / r.length);
    distinct += new Set(g.map((s) => s.calls.map((c) => Array.from(c.sampledIds).join(',')).join('|'))).size / g.length;
  }
  const n = groups.size || 1;
  return { 'reward/group_std_mean': std / n, 'response/distinct_frac': distinct / n };
}

/** The sampled evaluation a config asks for (`evalSamples` > 0): k samples at its training sampler's settings. */
export function sampledEvalOf(
  c: Pick<GrpoConfig, 'evalSamples' | 'temperature' | 'topK' | 'topP'>,
): SampledEval | undefined {
  return c.evalSamples
    ? { k: c.evalSamples, sampling: { temperature: c.temperature, topK: c.topK, topP: c.topP } }
    : undefined;
}

/**
 * The single-turn rollout of GRPO and PPO: G completions per task under `model`, scored by the
 * source's reward (MathReward on arithmetic). Batch `step` (version step − 1) samples with
 * generate seed c.seed · 100_003 + step, so a GRPO and a PPO run of one seed draw the same first batch.
 */
export function singleTurnRollout(
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
 * A single-turn run from a base checkpoint, whatever its update: the model (with a value head for
 * a critic), the frozen reference (β > 0), the task source (arithmetic, or a person's dataset:
 * task-source.ts) with its stream, held-out tasks and reward, the rollout, one sampled and packed
 * batch per `sample()`, evaluation and the resume position. GrpoRun and PpoRun (ppo.ts) differ
 * only in how they pack and update. `services.codeGrader` grades a dataset's `code` reward.
 */
export abstract class ArithRun<C extends GrpoConfig> {
  readonly model: Model;
  protected readonly reference: Model | null;
  protected readonly source: TaskSource;
  protected readonly rollout: SampledRollout<RunTask>;
  /** Launches the batches (ahead of the trainer under a staleness bound: scheduler.ts) and hands each over complete. */
  protected readonly scheduler: RolloutScheduler<SampledBatch>;
  step = 0;
  /** Told where the step under way is (sampling n of N sequences, old log-probs, reference, training). */
  onProgress: PhaseReport | null = null;

  constructor(
    ops: Ops,
    readonly config: C,
    readonly base: LoadedCheckpoint,
    private readonly o: { valueHead: boolean; pack: PackOptions },
    services: KindServices = {},
  ) {
    ({ model: this.model, reference: this.reference } = runModels(ops, base, config, {
      valueHead: o.valueHead,
      reference: config.beta > 0,
    }));
    this.source = taskSourceOf(config, base.tokenizer, base.config.maxSeq, services.codeGrader ?? null);
    this.rollout = this.rolloutOn(this.model, 0);
    this.scheduler = new RolloutScheduler(this.model, {
      staleness: config.staleness ?? 0,
      total: config.steps,
      streamPosition: () => this.source.stream.position,
      launch: (batch, version, policy) => this.collect(batch, version, policy),
      remote: samplerSlots(config, services, base.config),
    });
  }

  get tokenizer() {
    return this.base.tokenizer;
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
  private async collect(batch: number, version: number, model: Model | Sampler): Promise<SampledBatch> {
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

  /** The next batch: P tasks × G completions (sampled under the current weights, or up to s versions before), packed for the update (`packForUpdate`). */
  protected async sample() {
    const c = this.config;
    stepsPerBatch(c);
    this.step++;
    const t0 = performance.now();
    const { tasks, sessions, filterMetrics } = await this.scheduler.take(this.step);
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
    return { tasks, sessions, generated, packed, t0, tSample, filterMetrics };
  }

  /** Lets go of the batches sampled ahead (a run that ended, stopped or failed). */
  close(): void {
    this.scheduler.close();
  }

  evaluate(n = this.source.heldOut.length, progress?: EvalProgress): Promise<EvalResult> {
    return this.source.evaluate(this.model, this.source.heldOut.slice(0, n), sampledEvalOf(this.config), progress);
  }

  /**
   * Where this run stands between steps, for an exact continuation (worker/train/resume.ts): the
   * sampling seeds derive from the step, the frozen reference from the base.
   */
  position(): TrainerPosition {
    // Batches sampled ahead are not part of it: a continued run samples them again under its weights.
    return { step: this.step, tasksDrawn: this.scheduler.streamPositionBefore(this.source.stream.position) };
  }

  /** Continues a freshly constructed run from a stored position, weights (a value head's too) and AdamW state. */
  resumeAt(from: ResumePoint): void {
    restore(this.model, this.source.stream, from);
    this.step = from.position.step;
    this.scheduler.resumeAt(this.step);
  }
}

export class GrpoRun extends ArithRun<GrpoConfig> {
  constructor(ops: Ops, config: GrpoConfig, base: LoadedCheckpoint, services: KindServices = {}) {
    super(
      ops,
      config,
      base,
      {
        valueHead: false,
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

  async next(): Promise<GrpoStep> {
    const c = this.config;
    const { tasks, sessions, generated, packed, t0, tSample, filterMetrics } = await this.sample();
    const trained = await updateOnBatch(
      { model: this.model, reference: this.reference, config: c, step: this.step, onProgress: this.onProgress },
      packed,
    );
    const metrics = {
      ...batchMetrics(c, sessions, trained, t0, tSample, this.step),
      ...filterMetrics,
      ...this.scheduler.metrics(sessions, this.step - 1),
    };
    return {
      step: this.step,
      metrics,
      tasks,
      sessions,
      generated,
      packed,
      dlogp: trained.dlogp,
      corrections: trained.corrections,
      oldLogp: trained.oldLogp,
      updates: trained.updates,
    };
  }
}
