/**
 * A Flow-GRPO run on 2-D points, one sampled batch per call of `next()`: P groups × G SDE
 * trajectories under the current weights (each group's G samples start from one shared x_1 by
 * default: its "prompt"), scored by the shape reward, GRPO group advantages with Flow-GRPO's
 * statistics, zero-advantage samples dropped, then `epochs` × `miniBatches` optimizer steps of the
 * Flow-GRPO objective over the kept transitions, AdamW with global-norm clipping. With β > 0 a
 * frozen copy of the starting weights is the reference. Deterministic in `seed`: every draw of a
 * batch (starts, SDE noise, shuffles) is seeded by (seed, step), so the step, the weights and
 * AdamW's state are all a run carries from one batch to the next (`position`, `resumeAt`). Not a UI loop.
 *
 * Reference: yifan123/flow_grpo @ ac4c86e8 `scripts/train_sd3.py` (sampling, `PerPromptStatTracker`, the
 * zero-advantage filter, per-epoch shuffling into mini-batches, one optimizer step per
 * mini-batch over all its timesteps); dew `FlowRollout` (population std, ε = 1e-4, the first
 * `train_steps` transitions).
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { grpoAdvantages } from '../rl/index';
import type { OptimizerConfig } from '../train/optimizer';
import { stepOptions } from '../train/optimizer';
import type { Resumable, ResumePoint, TrainerPosition } from '../train/resume';
import type { FlowModelConfig } from './config';
import { FLOW_2D } from './config';
import { VelocityField } from './model';
import { flowGrpoObjective } from './objective';
import type { FlowRewardOptions } from './reward';
import { FLOW_RING, flowReward, validateFlowReward } from './reward';
import { finalPoints, gaussianStarts, sampleOde, sampleSde } from './rollout';
import type { FlowTrajectories } from './rollout';
import type { FlowSdeOptions, TransitionCoefficients } from './sde';
import { checkSdeOptions, flowSchedule, transitionKl, transitionLogProb, transitionMean, velocityGrad } from './sde';

export interface FlowGrpoConfig extends OptimizerConfig {
  /** Seed of the starting points, the SDE noise and the mini-batch shuffles. */
  seed: number;
  /** Batches the run is meant to last (the driver's loop bound). */
  steps: number;
  /** P groups per batch and G samples per group. */
  groups: number;
  group: number;
  /** Each group's samples start from one shared x_1 (the group's condition); false: independent starts. */
  sharedStart: boolean;
  sde: FlowSdeOptions;
  /** Train on the first `trainSteps` transitions of each trajectory (dew FlowRollout `train_steps`); null: all K. */
  trainSteps: number | null;
  /**
   * PPO ratio band 1 ± ε. 0.05 for 2-D points: flow_grpo's 1e-4 suits a log-prob averaged over
   * ~10⁵ image coordinates; over two coordinates it clips ~65% of transitions from the second
   * update on and slows learning, while 0.05 binds on ~2% with 8 updates per batch (objective.ts).
   */
  clipRange: number;
  /** Advantages are clipped to ±advClipMax (flow_grpo 5). */
  advClipMax: number;
  /** KL strength to the frozen starting weights (0: no reference). */
  beta: number;
  /** Advantage std: 'group' (flow_grpo PerPromptStatTracker) or 'batch' (its `global_std`). */
  advantageScale: 'group' | 'batch';
  /** Passes over each batch, and optimizer steps per pass (flow_grpo `num_inner_epochs`, mini-batches). */
  epochs: number;
  miniBatches: number;
  reward: FlowRewardOptions;
  model: FlowModelConfig;
  /** Every `evalEvery` batches (0: never), ODE samples of `evalN` fixed starting points score `eval/*`. */
  evalEvery: number;
  evalN: number;
  /** Batches whose sample clouds `samples(step)` keeps (the most recent). */
  keepSamples: number;
}

/**
 * The 2-D settings: 8 groups × 8 samples, 10 SDE steps at flow_grpo's noise level 0.7, two
 * optimizer steps per batch (flow_grpo's two per epoch), lr 3e-4, clip 0.05, no KL. On the ring
 * the SDE reward climbs from ~0.3 to ~0.9 in about 100 batches (a few seconds on wasm in Node).
 */
export const FLOW_GRPO_2D: FlowGrpoConfig = {
  seed: 1,
  steps: 200,
  groups: 8,
  group: 8,
  sharedStart: true,
  sde: { steps: 10, noiseLevel: 0.7, shift: 1 },
  trainSteps: null,
  clipRange: 0.05,
  advClipMax: 5,
  beta: 0,
  advantageScale: 'group',
  epochs: 1,
  miniBatches: 2,
  lr: 3e-4,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1,
  reward: FLOW_RING,
  model: FLOW_2D,
  evalEvery: 10,
  evalN: 256,
  keepSamples: 1000,
};

/** Problems with a config, one message per bad field (empty: valid). */
export function validateFlowGrpoConfig(c: FlowGrpoConfig): string[] {
  const problems: string[] = [];
  const int = (k: 'groups' | 'group' | 'epochs' | 'miniBatches' | 'evalN' | 'keepSamples' | 'steps', lo: number) => {
    if (!Number.isInteger(c[k]) || c[k] < lo) problems.push(`${k} = ${c[k]}: expected an integer ≥ ${lo}`);
  };
  int('steps', 1);
  int('groups', 1);
  int('group', 1);
  int('epochs', 1);
  int('miniBatches', 1);
  int('evalN', 1);
  int('keepSamples', 0);
  if (!Number.isInteger(c.evalEvery) || c.evalEvery < 0)
    problems.push(`evalEvery = ${c.evalEvery}: expected an integer ≥ 0`);
  if (c.miniBatches > c.groups * c.group)
    problems.push(`miniBatches = ${c.miniBatches}: expected at most groups × group = ${c.groups * c.group}`);
  try {
    checkSdeOptions(c.sde);
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (c.trainSteps !== null && (!Number.isInteger(c.trainSteps) || c.trainSteps < 1 || c.trainSteps > c.sde.steps))
    problems.push(`trainSteps = ${c.trainSteps}: expected null or an integer in [1, sde.steps = ${c.sde.steps}]`);
  if (!(c.clipRange > 0) || !Number.isFinite(c.clipRange))
    problems.push(`clipRange = ${c.clipRange}: expected a finite number > 0`);
  if (!(c.advClipMax > 0)) problems.push(`advClipMax = ${c.advClipMax}: expected > 0`);
  if (!(c.beta >= 0) || !Number.isFinite(c.beta)) problems.push(`beta = ${c.beta}: expected a finite number ≥ 0`);
  if (c.advantageScale !== 'group' && c.advantageScale !== 'batch')
    problems.push(`advantageScale = ${JSON.stringify(c.advantageScale)}: expected "group" or "batch"`);
  if (!(c.lr >= 0)) problems.push(`lr = ${c.lr}: expected ≥ 0`);
  if (c.model.dim !== 2) problems.push(`model.dim = ${c.model.dim}: the shape rewards are 2-D`);
  return [...problems, ...validateFlowReward(c.reward)];
}

/** One batch's sample cloud, for a view. */
export interface FlowSamples {
  /** (N, 2) final points, N = groups × group, group-major. */
  points: Float32Array;
  rewards: Float64Array;
  /** 1 inside the target. */
  inside: Float64Array;
  /** Group index of each point. */
  groups: Int32Array;
  /** Per point, its GRPO advantage (before the ±advClipMax clip); 0: dropped from training. */
  advantages: Float64Array;
}

export interface FlowGrpoUpdate {
  epoch: number;
  miniBatch: number;
  /** Indices (into the batch) of the samples it trained on. */
  samples: number[];
  /** Its objective's metrics and `opt/grad_norm`. */
  metrics: Record<string, number>;
}

export interface FlowGrpoStep extends FlowSamples {
  step: number;
  metrics: Record<string, number>;
  /** (N, K + 1, 2) latents of every trajectory, and the (N, K) sampling log-probs. */
  latents: Float32Array;
  logProbs: Float64Array;
  /**
   * Per (sample, trained transition), (N, K′) with K′ = trainSteps: the ratio r and whether the
   * clipped term won, from the last epoch's update of the sample (0 for samples not trained).
   */
  ratio: Float64Array;
  clipped: Float64Array;
  updates: FlowGrpoUpdate[];
}

/** A 32-bit seed for (run seed, batch, stream). */
function seedFor(seed: number, step: number, stream: number): number {
  let h =
    Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(step + 1, 0xc2b2ae35) ^ Math.imul(stream + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  return (h ^ (h >>> 15)) >>> 0;
}

function mean(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i];
  return s / Math.max(1, a.length);
}

export class FlowGrpoRun implements Resumable {
  readonly model: VelocityField;
  private readonly reference: VelocityField | null;
  private readonly history = new Map<number, FlowSamples>();
  step = 0;

  /**
   * `base`: the starting weights, which the reference (β > 0) keeps frozen; a continued run then
   * loads its trained ones with `resumeAt`.
   */
  constructor(
    ops: Ops,
    readonly config: FlowGrpoConfig,
    base: ReadonlyMap<string, ArrayLike<number>>,
  ) {
    const problems = validateFlowGrpoConfig(config);
    if (problems.length) throw new Error(`invalid Flow-GRPO config: ${problems.join('; ')}`);
    this.model = new VelocityField(ops, config.model);
    this.model.setWeights(base);
    this.reference = config.beta > 0 ? new VelocityField(ops, config.model) : null;
    this.reference?.setWeights(base);
  }

  /** Batches taken (no task stream: `tasksDrawn` is 0). */
  position(): TrainerPosition {
    return { step: this.step, tasksDrawn: 0 };
  }

  /**
   * Continues from a checkpoint: the trained weights, AdamW's state and the batch count (every
   * seed of the next batch derives from it). On a fresh run built from the same starting weights.
   * The sample clouds of earlier batches (`samples`) are not restored: the store keeps them.
   */
  resumeAt(from: ResumePoint): void {
    const { step } = from.position;
    if (!Number.isInteger(step) || step < 0)
      throw new Error(`resumeAt: position.step = ${step}; expected a non-negative integer`);
    if (this.step !== 0)
      throw new Error(`resumeAt: this run has already taken ${this.step} batches; resume a freshly constructed run`);
    this.model.setWeights(from.weights);
    this.model.setOptimizerState(from.optimizer);
    this.step = step;
  }

  /** The sample cloud of batch `step` (1-based), while it is among the last `keepSamples`. */
  samples(step: number): FlowSamples | undefined {
    return this.history.get(step);
  }

  /** `n` ODE samples of the live policy from fixed starting points (seeded by `seed`): a stable preview. */
  async preview(n = this.config.evalN, seed = seedFor(this.config.seed, -1, 9)): Promise<Float32Array> {
    return sampleOde(this.model, gaussianStarts(n, 2, seed), this.config.sde.steps, this.config.sde.shift);
  }

  async next(): Promise<FlowGrpoStep> {
    const c = this.config;
    this.step++;
    const t0 = performance.now();
    const [P, G, D, K] = [c.groups, c.group, 2, c.sde.steps];
    const N = P * G;
    const Kt = c.trainSteps ?? K;
    // Rollout: each group's G samples from one x_1 (sharedStart) or from their own.
    const drawn = gaussianStarts(c.sharedStart ? P : N, D, seedFor(c.seed, this.step, 1));
    const starts = c.sharedStart ? new Float32Array(N * D) : drawn;
    if (c.sharedStart)
      for (let i = 0; i < N; i++) starts.set(drawn.subarray(Math.floor(i / G) * D, (Math.floor(i / G) + 1) * D), i * D);
    const tr = await sampleSde(this.model, starts, c.sde, seedFor(c.seed, this.step, 2));
    const points = finalPoints(tr);
    const { rewards, inside } = flowReward(points, c.reward);
    const groups = Int32Array.from({ length: N }, (_, i) => Math.floor(i / G));
    const adv = grpoAdvantages(rewards, groups, {
      scale: c.advantageScale,
      stdType: 'population',
      epsilon: 1e-4,
      singleton: 'zero',
    });
    const tSample = performance.now();

    // Updates: zero-advantage samples carry no loss (flow_grpo filters them), so they are not packed.
    const carried = Array.from({ length: N }, (_, i) => i).filter((i) => adv.advantages[i] !== 0);
    const rand = mulberry32(seedFor(c.seed, this.step, 3));
    const perBatch = Math.ceil(N / c.miniBatches);
    const rows = perBatch * Kt; // fixed row count: padding rows train nothing
    const schedule = flowSchedule(c.sde);
    const ratio = new Float64Array(N * Kt);
    const clipped = new Float64Array(N * Kt);
    const updates: FlowGrpoUpdate[] = [];
    for (let e = 0; e < c.epochs; e++) {
      const order = carried.slice();
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      for (let b = 0; b < c.miniBatches; b++) {
        const S = order.filter((_, i) => i % c.miniBatches === b).sort((x, y) => x - y);
        if (S.length === 0) continue;
        const u = await this.update(S, tr, adv.advantages, schedule, rows, Kt);
        S.forEach((s, i) => {
          ratio.set(u.ratio.subarray(i * Kt, (i + 1) * Kt), s * Kt);
          clipped.set(u.clipped.subarray(i * Kt, (i + 1) * Kt), s * Kt);
        });
        updates.push({ epoch: e, miniBatch: b, samples: S, metrics: u.metrics });
      }
    }
    const tTrain = performance.now();

    const metrics: Record<string, number> = {};
    // Objective metrics: the mean over the batch's updates (flow_grpo logs the mean over its accumulation).
    for (const u of updates)
      for (const [k, v] of Object.entries(u.metrics)) metrics[k] = (metrics[k] ?? 0) + v / updates.length;
    const rMean = mean(rewards);
    Object.assign(metrics, {
      'reward/mean': rMean,
      'reward/std': Math.sqrt(mean(rewards.map((r) => (r - rMean) ** 2))),
      'reward/inside_frac': mean(inside),
      'rl/frac_reward_zero_std': adv.fracRewardZeroStd,
      'rl/carried_frac': carried.length / N,
      'rl/advantage_abs_mean': mean(adv.advantages.map(Math.abs)),
      'opt/lr': c.lr,
      'opt/steps_per_batch': updates.length,
      'perf/sample_ms': tSample - t0,
      'perf/train_ms': tTrain - tSample,
    });
    if (c.evalEvery > 0 && this.step % c.evalEvery === 0) {
      const ev = flowReward(await this.preview(), c.reward);
      metrics['eval/reward_mean'] = mean(ev.rewards);
      metrics['eval/inside_frac'] = mean(ev.inside);
    }
    metrics['perf/step_ms'] = performance.now() - t0;
    const cloud: FlowSamples = { points, rewards, inside, groups, advantages: adv.advantages };
    if (c.keepSamples > 0) {
      this.history.set(this.step, cloud);
      this.history.delete(this.step - c.keepSamples);
    }
    return { step: this.step, metrics, ...cloud, latents: tr.latents, logProbs: tr.logProbs, ratio, clipped, updates };
  }

  /** One optimizer step on samples `S`: their first Kt transitions, padded to `rows` rows. */
  private async update(
    S: number[],
    tr: FlowTrajectories,
    advantages: Float64Array,
    schedule: TransitionCoefficients[],
    rows: number,
    Kt: number,
  ) {
    const c = this.config;
    const D = 2;
    const K = tr.steps;
    const x = new Float32Array(rows * D);
    const next = new Float32Array(rows * D);
    const t = new Float64Array(rows).fill(1);
    const old = new Float64Array(S.length * Kt);
    S.forEach((s, i) => {
      for (let k = 0; k < Kt; k++) {
        const r = i * Kt + k;
        x.set(tr.latents.subarray((s * (K + 1) + k) * D, (s * (K + 1) + k + 1) * D), r * D);
        next.set(tr.latents.subarray((s * (K + 1) + k + 1) * D, (s * (K + 1) + k + 2) * D), r * D);
        t[r] = schedule[k].t;
        old[r] = tr.logProbs[s * K + k];
      }
    });
    const n = S.length * Kt;
    const v = await this.model.forward(x, t);
    const mu = new Float64Array(rows * D);
    const logp = new Float64Array(n);
    for (let r = 0; r < n; r++) {
      transitionMean(mu, x, v, schedule[r % Kt], r, D);
      logp[r] = transitionLogProb(next, mu, schedule[r % Kt], r, D);
    }
    let refMu: Float64Array | null = null;
    let kl: Float64Array | undefined;
    if (this.reference) {
      const vRef = await this.reference.forward(x, t);
      refMu = new Float64Array(rows * D);
      kl = new Float64Array(n);
      for (let r = 0; r < n; r++) {
        transitionMean(refMu, x, vRef, schedule[r % Kt], r, D);
        kl[r] = transitionKl(mu, refMu, schedule[r % Kt], r, D);
      }
    }
    const obj = flowGrpoObjective(
      {
        rows: S.length,
        width: Kt,
        logp,
        oldLogp: old,
        advantages: S.map((s) => advantages[s]),
        mask: new Float64Array(n).fill(1),
        kl,
      },
      { clipRange: c.clipRange, advClipMax: c.advClipMax, beta: c.beta },
    );
    const dv = new Float32Array(rows * D);
    for (let r = 0; r < n; r++) velocityGrad(dv, obj.dlogp[r], obj.dkl[r], next, mu, refMu, schedule[r % Kt], r, D);
    this.model.zeroGrad();
    this.model.backward(dv);
    const gradNorm = await this.model.step(stepOptions(c, this.model.optimizerSteps + 1));
    return { ratio: obj.ratio, clipped: obj.clipped, metrics: { ...obj.metrics, 'opt/grad_norm': gradNorm } };
  }
}
