/**
 * The update every GRPO-family run shares, whatever collected its batch (single-turn prompts,
 * multi-turn episodes) and whatever gave its advantages (an outcome estimator in pack, or a
 * critic's GAE: critic.ts): packing for it (`packForUpdate`), the mini-batch plan, `updateOnBatch`
 * (old log-probs, the reference's, then epochs × miniBatches optimizer steps of the RL core's
 * GRPO or PPO objective) and the batch's figures (`batchMetrics`). Not a run: grpo.ts (single
 * turn) and grpo-episodes.ts (episodes) collect the batches, on the base in grpo-family.ts.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Model, Scored } from '../model/model';
import { supportBias } from '../model/packing';
import type { PackedInput } from '../model/packing';
import type { PackedBatch, PackOptions, PackResult } from '../rl/pack-types';
import type {
  GrpoObjectiveOptions,
  GrpoObjectiveOutput,
  IsWeightsOptions,
  PolicyLossSpec,
  PpoObjectiveOutput,
  Session,
} from '../rl/index';
import {
  appliedEntropyCoef,
  grpoObjective,
  initialEntropyState,
  nextEntropyState,
  ppoObjective,
  sessionMeanWeights,
} from '../rl/index';
import type { EntropyBonusOptions, EntropyControllerState } from '../rl/index';
import type { PhaseReport } from '../contract/records';
import type { GrpoFamilyOptions, ImportanceRunOptions } from '../contract/options';
import { dropoutSeedOf } from '../model/lora';
import { stepOptions } from './optimizer';
import { rlLrAt, rlScheduleOf } from './schedule';

/**
 * What of a run's options the update and its figures read: the GRPO-family options of these names
 * (worker/contract/run-options/grpo.ts documents each), as the run was validated. `renormalize` is
 * the single-turn shapes' only (the episode rollout records no support).
 */
export type UpdateConfig = Pick<
  GrpoFamilyOptions,
  | 'seed'
  | 'steps'
  | 'lr'
  | 'beta1'
  | 'beta2'
  | 'eps'
  | 'weightDecay'
  | 'maxGradNorm'
  | 'temperature'
  | 'policyLoss'
  | 'aggregation'
  | 'beta'
  | 'kl'
  | 'importance'
  | 'entropyBonus'
  | 'rejection'
  | 'offPolicyMask'
  | 'topEntropyQuantile'
  | 'epochs'
  | 'miniBatches'
  | 'lrSchedule'
  | 'lrWarmup'
  | 'minLrRatio'
  | 'overlongBuffer'
  | 'samplerBf16'
  | 'samplerTemperature'
> & { renormalize?: boolean };

/** The IS weights the options ask for, as the RL core takes them (corrections/is-weights.ts); undefined when off. */
function isWeightsOf(imp: ImportanceRunOptions): IsWeightsOptions | undefined {
  if (imp.kind === 'off') return undefined;
  const threshold = imp.kind === 'tis' ? imp.cap : ([imp.low, imp.high] as [number, number]);
  return { level: imp.level, threshold, batchNormalize: imp.batchNormalize };
}

/** The RL core's objective options of a run's: the loss by name with its options, the IS weights, rejection only when set. */
export function objectiveOptionsOf(c: UpdateConfig): GrpoObjectiveOptions {
  const { name, ...lossOptions } = c.policyLoss;
  const importance = isWeightsOf(c.importance);
  return {
    policyLoss: (Object.keys(lossOptions).length ? { name, options: lossOptions } : { name }) as PolicyLossSpec,
    aggregation: c.aggregation,
    beta: c.beta,
    kl: c.kl,
    ...(importance ? { importance } : {}),
    ...(Object.keys(c.rejection).length ? { rejection: c.rejection } : {}),
    ...(c.offPolicyMask !== undefined ? { offPolicyMask: c.offPolicyMask } : {}),
    ...(c.topEntropyQuantile !== undefined ? { topEntropyQuantile: c.topEntropyQuantile } : {}),
  };
}

/**
 * The entropy bonus an optimizer step applies: a static one as configured; the adaptive one at
 * its controller's coefficient (TRL's token mean); none when off (and in runs stored before it).
 */
function entropyBonusOf(c: UpdateConfig, controller: EntropyControllerState | null): EntropyBonusOptions | undefined {
  const bonus = c.entropyBonus;
  if (bonus?.kind === 'static') return { coef: bonus.coef, aggregation: bonus.aggregation };
  if (bonus?.kind === 'adaptive') return { coef: appliedEntropyCoef(controller!, bonus), aggregation: 'token-mean' };
  return undefined;
}

/**
 * One scoring of a whole packed batch before its update, reported as 'old log-probs': at the run's
 * temperature, renormalised over the sampler's support when asked; Σπ² too for OTB. The critic's
 * and OTB's advantages come from it (critic.ts, otb.ts).
 */
export async function scoreBeforeUpdate(
  ctx: Pick<UpdateContext, 'model' | 'onProgress'> & { config: Pick<UpdateConfig, 'temperature' | 'renormalize'> },
  packed: PackedBatch,
  sumPiSquared = false,
): Promise<Scored> {
  const c = ctx.config;
  ctx.onProgress?.('old log-probs');
  const rows = Array.from({ length: packed.rows }, (_, r) => r);
  const bias =
    c.renormalize && packed.support
      ? supportBias(packed.support, packed.segmentIds, packed.width, ctx.model.config.vocab, rows)
      : undefined;
  return ctx.model.score(packed, bias, {
    temperature: c.temperature > 0 ? c.temperature : 1,
    ...(sumPiSquared ? { sumPiSquared: true } : {}),
  });
}

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

/** epochs × miniBatches, each checked to be an integer ≥ 1. */
export function stepsPerBatch(c: Pick<UpdateConfig, 'epochs' | 'miniBatches'>): number {
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
interface CriticUpdate {
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
  config: UpdateConfig;
  /** 1-based batch number (AdamW counts (step − 1) · steps + k). */
  step: number;
  onProgress: PhaseReport | null;
  /** PPO: train the value head too, on these targets (the model needs its value head). */
  critic?: CriticUpdate;
  /** The batch's log-probs as scored before the update for its advantages (OTB: otb.ts): the old ones, no second pass. */
  oldLogp?: Float64Array;
  /** The adaptive entropy coefficient's controller before this batch (null: its first, or no adaptive bonus). */
  entropy?: EntropyControllerState | null;
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
  /** The adaptive entropy coefficient's controller after the batch's updates; null without an adaptive bonus. */
  entropy: EntropyControllerState | null;
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
  // The mismatch lab's sampler (bf16 weights, its own temperature) is not the trainer's policy either: as for a lag,
  // old is the update's own forward and the corrections weigh π_old / μ with the injected gap.
  const injected = c.samplerBf16 === true || c.samplerTemperature !== undefined;
  const lagging = injected || packed.versions.some((v) => v >= 0 && v < ctx.step - 1);
  // LoRA's adapter dropout: each update's forward draws its masks (dropoutSeedOf), no other forward does.
  const dropout = (ctx.model.loraConfig?.dropout ?? 0) > 0;
  let oldLogp = packed.oldLogProbs ?? undefined;
  let rescored: Float64Array | null = null;
  let firstScored: Scored | null = null;
  // One update: this forward is the update's own (its log-probs are the ratio's numerator), so it counts as training.
  let tFirstForward = 0;
  const scoredBefore = ctx.critic?.oldLogp ?? ctx.oldLogp;
  if (scoredBefore) {
    // PPO scored the batch before GAE (OTB before its baselines): those are the old log-probs; no second pass.
    oldLogp = scoredBefore;
    rescored = scoredBefore;
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
  const options = objectiveOptionsOf(c);
  const bonus = c.entropyBonus;
  let controller = bonus?.kind === 'adaptive' ? (ctx.entropy ?? initialEntropyState(bonus)) : null;
  const dlogp = new Float64Array(packed.rows * packed.width);
  const corrections =
    options.importance || options.rejection
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
      const entropyBonus = entropyBonusOf(c, controller);
      const objective = entropyBonus ? { ...options, entropyBonus } : options;
      let obj: GrpoObjectiveOutput | PpoObjectiveOutput;
      if (critic) {
        if (!scored.values) throw new Error('updateOnBatch: a critic update needs a model with a value head');
        obj = ppoObjective(
          { ...input, values: scored.values, oldValues: mb.take(critic.oldValues), returns: mb.take(critic.returns) },
          { ...objective, valueCoefficient: critic.valueCoefficient, valueClip: critic.valueClip },
        );
      } else obj = grpoObjective(input, objective);
      ctx.model.zeroGrad();
      // A coefficient of 0 (the adaptive bonus before its entropy reaches the target) seeds nothing.
      const dentropy = obj.entropy && entropyBonus?.coef !== 0 ? obj.entropy.dentropy : null;
      await ctx.model.backward(obj.dlogp, 'dvalues' in obj ? obj.dvalues : null, dentropy);
      // AdamW counts optimizer steps, not batches: batch k's updates are (k−1)·steps + 1 … k·steps.
      gradNorm = await ctx.model.step(
        stepOptions(c, (ctx.step - 1) * steps + updates.length + 1, rlLrAt(ctx.step, c.lr, c.steps, rlScheduleOf(c))),
      );
      putRows(dlogp, obj.dlogp, plan[e][b], packed.width);
      if (corrections) {
        putRows(corrections.weights, obj.correctionWeights, plan[e][b], packed.width);
        putRows(corrections.keep, obj.keep, plan[e][b], packed.width);
      }
      const metrics: Record<string, number> = { ...obj.metrics, 'opt/grad_norm': gradNorm };
      if (controller && bonus?.kind === 'adaptive') {
        // TRL: after the optimizer step, the step's token-mean entropy moves the coefficient for the next.
        controller = nextEntropyState(controller, obj.entropy!.tokenMean, bonus);
        metrics['rl/entropy_coef_next'] = controller.coef;
      }
      updates.push({
        epoch: e,
        miniBatch: b,
        rows: plan[e][b],
        tokens: obj.mask.reduce((n, m) => n + m, 0),
        metrics,
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
    entropy: controller,
  };
}

/**
 * A batch's figures: pack's, the last update's objective metrics, rewards, lengths over every
 * call of every session, and verl's timing phases: sampling; the frozen reference (β > 0);
 * rescoring the old log-probs before the first update (only with several updates per batch: with
 * one, they are the sampler's); the updates, their forwards included.
 */
export function batchMetrics(
  c: UpdateConfig,
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
    ...(t.entropy ? { 'rl/entropy_coef_next': t.entropy.coef } : {}),
    'reward/mean': mean,
    'reward/std': std,
    ...groupSpread(sessions),
    'response/mean_length': sampledTokens / sessions.length,
    'response/truncated_frac': sessions.filter((s) => s.status === 'truncated').length / sessions.length,
    ...(c.overlongBuffer !== undefined ? overlongMetrics(sessions) : {}),
    'opt/lr': rlLrAt(step, c.lr, c.steps, rlScheduleOf(c)),
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
function groupSpread(sessions: readonly Session[]): Record<string, number> {
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
