/**
 * A GRPO run on arithmetic, one optimizer step per call of `next()`: sample P prompts × G
 * completions under the current weights (KV cache), score them with MathReward, turn each into a
 * one-call Session, pack, rescore with the trainer, evaluate the GRPO objective of the RL core,
 * backward, clip, AdamW. With beta > 0 a frozen copy of the starting weights is the reference.
 * Not the UI loop (worker/runs) nor the CLI: both drive this.
 */
import type { Ops } from '../../kernels/ops';
import type { ArithOptions, ArithTask, TrainStream } from '../data/arith';
import { encodeExample, heldOut, trainStream } from '../data/arith';
import type { LoadedCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { mathReward } from '../rewards/math-reward';
import type { PackedBatch } from '../rl/pack-types';
import type { AggregationOptions, PolicyLossSpec, Session } from '../rl/index';
import { grpoObjective, pack } from '../rl/index';
import type { Generated } from '../rollout/generate';
import { generate } from '../rollout/generate';
import type { EvalResult } from './evaluate';
import { evaluateArith } from './evaluate';
import type { OptimizerConfig } from './optimizer';
import { stepOptions } from './optimizer';

/** AdamW in GRPO_ARITH: lr 1e-4 constant, (0.9, 0.99), wd 0 (calibration.md). */
export interface GrpoConfig extends OptimizerConfig {
  /** Seed of the task stream and of the samplers. */
  seed: number;
  steps: number;
  /** Prompts per step (P) and completions per prompt (G): calibration.md P = 16, G = 8. */
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
  /** Mask sessions of all-equal groups (calibration.md skipped them). */
  maskZeroAdvantage: boolean;
  evalEvery: number;
  evalN: number;
  task: ArithOptions;
}

export const GRPO_ARITH: GrpoConfig = {
  seed: 1, steps: 150, prompts: 16, group: 8, temperature: 1, topK: 0, topP: 1, maxNew: 16,
  lr: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0, maxGradNorm: 1.0,
  policyLoss: { name: 'ppo' }, aggregation: { mode: 'token-mean' }, beta: 0, maskZeroAdvantage: true,
  evalEvery: 10, evalN: 200, task: { difficulty: 1, format: 'bare' },
};

export interface GrpoStep {
  step: number;
  metrics: Record<string, number>;
  tasks: ArithTask[];
  sessions: Session[];
  generated: Generated[];
  packed: PackedBatch;
  dlogp: Float64Array;
}

export class GrpoRun {
  readonly model: Model;
  private readonly reference: Model | null;
  private readonly stream: TrainStream;
  private readonly heldOutTasks: ArithTask[];
  step = 0;

  constructor(ops: Ops, readonly config: GrpoConfig, readonly base: LoadedCheckpoint) {
    this.model = new Model(ops, base.config);
    this.model.setWeights(base.weights);
    this.reference = config.beta > 0 ? new Model(ops, base.config) : null;
    this.reference?.setWeights(base.weights);
    this.stream = trainStream(config.seed, config.task);
    this.heldOutTasks = heldOut(config.evalN, config.task);
  }

  get tokenizer() {
    return this.base.tokenizer;
  }

  async next(): Promise<GrpoStep> {
    const c = this.config;
    const tok = this.base.tokenizer;
    this.step++;
    const version = this.step - 1; // weights after `version` optimizer steps sample this batch
    const t0 = performance.now();
    const tasks = this.stream.take(c.prompts);
    const prompts = tasks.flatMap((t) => Array.from({ length: c.group }, () => encodeExample(tok, t).promptIds));
    const generated = await generate(this.model, prompts, { maxNew: c.maxNew, eos: tok.eos, seed: c.seed * 100_003 + this.step, temperature: c.temperature, topK: c.topK, topP: c.topP });
    const tSample = performance.now();
    const sessions: Session[] = generated.map((g, i) => {
      const task = tasks[Math.floor(i / c.group)];
      const r = mathReward(tok.decode(g.sampledIds), task.answer);
      return {
        task: task.id, group: task.id, sample: i % c.group, attempt: 0,
        calls: [{ promptIds: g.promptIds, sampledIds: g.sampledIds, behaviorLogProbs: g.behaviorLogProbs, rawLogProbs: g.rawLogProbs, finishReason: g.finishReason, version }],
        status: g.finishReason === 'stop' ? 'completed' : 'truncated',
        reward: r.score, components: { ...r.components }, detail: r.detail,
      };
    });
    const longest = Math.max(...prompts.map((p) => p.length)) + c.maxNew;
    // Two chains always fit a row of twice the longest chain: a fixed [rows, width] keeps the
    // model's activations allocated once.
    const packed = pack(sessions, 2 * longest, { rows: Math.ceil((c.prompts * c.group) / 2), estimator: 'grpo', truncation: 'mask', maskZeroAdvantage: c.maskZeroAdvantage });
    if (!packed.ok) throw new Error(`GRPO batch does not pack: ${packed.message}`);
    const scored = await this.model.score(packed);
    const refLogp = this.reference ? (await this.reference.score(packed)).logp : undefined;
    const tScore = performance.now();
    const obj = grpoObjective(
      { rows: packed.rows, width: packed.width, logp: scored.logp, oldLogp: packed.oldLogProbs ?? undefined, behaviorLogp: packed.behaviorLogProbs, refLogp, advantages: packed.advantages, responseMask: packed.responseMask, segmentIds: packed.segmentIds, sessionWeights: packed.sessionWeights, sessionIds: packed.sessionIds, entropy: scored.entropy },
      { policyLoss: c.policyLoss, aggregation: c.aggregation, beta: c.beta },
    );
    this.model.zeroGrad();
    this.model.backward(obj.dlogp);
    const gradNorm = await this.model.step(stepOptions(c, this.step));
    const tTrain = performance.now();
    const rewards = sessions.map((s) => s.reward ?? 0);
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
    const sampledTokens = generated.reduce((n, g) => n + g.sampledIds.length, 0);
    const metrics: Record<string, number> = {
      ...packed.metrics,
      ...obj.metrics,
      'reward/mean': mean,
      'reward/std': std,
      'response/mean_length': sampledTokens / generated.length,
      'response/truncated_frac': generated.filter((g) => g.finishReason === 'length').length / generated.length,
      'opt/lr': c.lr,
      'opt/grad_norm': gradNorm,
      'perf/sample_ms': tSample - t0,
      'perf/score_ms': tScore - tSample,
      'perf/train_ms': tTrain - tScore,
      'perf/step_ms': tTrain - t0,
      'perf/tokens_per_s': (packed.realTokens + sampledTokens) / ((tTrain - t0) / 1000),
    };
    return { step: this.step, metrics, tasks, sessions, generated, packed, dlogp: obj.dlogp };
  }

  evaluate(n = this.heldOutTasks.length): Promise<EvalResult> {
    return evaluateArith(this.model, this.base.tokenizer, this.heldOutTasks.slice(0, n));
  }
}
