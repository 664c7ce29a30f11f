/**
 * Supervised fine-tuning on arithmetic: a seeded task stream packed into fixed [rows, width]
 * batches, token-mean NLL on completion ids, warmup + cosine learning rate, global-norm clipping,
 * AdamW, and held-out greedy exact-match every `evalEvery` steps. One `step()` call = one
 * optimizer step; the caller (worker API, CLI, tests) owns the loop, so it can pause, stop and
 * checkpoint between steps.
 */
import type { Ops } from '../../kernels/ops';
import type { ArithOptions, ArithTask, TrainStream } from '../data/arith';
import { encodeExample, heldOut, trainStream } from '../data/arith';
import type { CharTokenizer } from '../data/tokenizer';
import { arithTokenizer } from '../data/tokenizer';
import type { ModelConfig, ModelPresetName } from '../model/config';
import { modelPreset } from '../model/config';
import { Model } from '../model/model';
import type { EvalProgress, EvalResult } from './evaluate';
import { evaluateArith } from './evaluate';
import type { SftRunOptions } from '../contract/options';
import { lrAt } from './schedule';
import { packExamples } from './sft-batch';
import type { SftBatch } from './sft-batch';
import type { OptimizerConfig } from './optimizer';
import { stepOptions } from './optimizer';
import type { ResumePoint, TrainerPosition } from './resume';
import { restore } from './resume';
import { sftLoss } from './sft-loss';

export interface SftConfig extends OptimizerConfig {
  /** Model size preset (worker/model/config.ts). */
  model: ModelPresetName;
  /** Seed of the weight init and of the task stream. */
  seed: number;
  /** Optimizer steps. */
  steps: number;
  /** Examples per step (docs/calibration.md "The SFT base": 64). */
  examples: number;
  /** Packed batch shape: rows × width ids. */
  rows: number;
  width: number;
  /** Warmup steps (docs/calibration.md "The SFT base": 50 to a peak lr of 1e-3) and floor of the cosine (lr / 10). */
  warmup: number;
  minLr: number;
  /** Evaluate held-out accuracy every N steps (0: never) on `evalN` tasks. */
  evalEvery: number;
  evalN: number;
  /** Task options (difficulty, prompt format). */
  task: ArithOptions;
}

export const SFT_ARITH: SftConfig = {
  model: 'small',
  seed: 1,
  steps: 1500,
  examples: 64,
  rows: 32,
  width: 40,
  lr: 1e-3,
  warmup: 50,
  minLr: 1e-4,
  beta1: 0.9,
  beta2: 0.98,
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 5.0,
  evalEvery: 20,
  evalN: 200,
  task: { difficulty: 1, format: 'bare' },
};

export interface SftStepMetrics {
  step: number;
  'loss/sft': number;
  'opt/lr': number;
  'opt/grad_norm': number;
  'perf/tokens_per_s': number;
  'perf/step_ms': number;
  'batch/packing_efficiency': number;
}

/** The tokenizer of an SFT run: the arithmetic vocabulary its task format needs. */
export function sftTokenizer(config: Pick<SftConfig, 'task'>): CharTokenizer {
  return arithTokenizer(config.task.format === 'words' ? 'words' : 'bare');
}

/** What one SFT update needs of its config: the optimizer and the schedule. */
type UpdateConfig = OptimizerConfig & Pick<SftConfig, 'steps' | 'warmup' | 'minLr'>;

/**
 * One SFT optimizer step on a packed batch (token-mean NLL on its loss mask, warmup + cosine lr,
 * AdamW), as optimizer step `step`; its metrics, timed from `t0`. Shared by the arithmetic and the
 * episode SFT runs, which differ only in how they build the batch.
 */
export async function sftUpdate(
  model: Model,
  batch: SftBatch,
  c: UpdateConfig,
  step: number,
  t0: number,
): Promise<SftStepMetrics> {
  const { logp } = await model.score(batch);
  const { loss, dlogp } = sftLoss(logp, batch.lossMask);
  model.zeroGrad();
  await model.backward(dlogp);
  const lr = lrAt(step, { lr: c.lr, warmup: c.warmup, total: c.steps, minLr: c.minLr });
  const gradNorm = await model.step(stepOptions(c, step, lr));
  const ms = performance.now() - t0;
  return {
    step,
    'loss/sft': loss,
    'opt/lr': lr,
    'opt/grad_norm': gradNorm,
    'perf/tokens_per_s': (batch.efficiency * batch.rows * batch.width) / (ms / 1000),
    'perf/step_ms': ms,
    'batch/packing_efficiency': batch.efficiency,
  };
}

export class SftRun {
  readonly tok: CharTokenizer;
  readonly model: Model;
  readonly modelConfig: ModelConfig;
  private readonly stream: TrainStream;
  private readonly heldOutTasks: ArithTask[];
  step = 0;

  constructor(
    ops: Ops,
    readonly config: SftConfig,
  ) {
    this.tok = sftTokenizer(config);
    this.modelConfig = {
      ...modelPreset(config.model, this.tok.size),
      maxSeq: Math.max(config.width, modelPreset(config.model, this.tok.size).maxSeq),
    };
    this.model = new Model(ops, this.modelConfig);
    this.model.initWeights(config.seed);
    this.stream = trainStream(config.seed, config.task);
    this.heldOutTasks = heldOut(config.evalN, config.task);
  }

  /** One optimizer step on the next `examples` training tasks. */
  async next(): Promise<SftStepMetrics> {
    const c = this.config;
    const t0 = performance.now();
    const tasks = this.stream.take(c.examples);
    const packed = packExamples(
      tasks.map((t) => encodeExample(this.tok, t)),
      c.rows,
      c.width,
    );
    if (!packed.ok)
      throw new Error(`SFT batch does not fit: ${packed.reason} (raise rows or width, or lower examples)`);
    this.step++;
    return sftUpdate(this.model, packed.batch, c, this.step, t0);
  }

  /** Held-out exact-match accuracy with greedy decoding. */
  evaluate(n = this.heldOutTasks.length, progress?: EvalProgress): Promise<EvalResult> {
    return evaluateArith(this.model, this.tok, this.heldOutTasks.slice(0, n), 16, 64, undefined, progress);
  }

  /** Where this run stands between steps, for an exact continuation (worker/train/resume.ts). */
  position(): TrainerPosition {
    return { step: this.step, tasksDrawn: this.stream.position };
  }

  /** Continues a freshly constructed run from a stored position, weights and AdamW state. */
  resumeAt(from: ResumePoint): void {
    restore(this.model, this.stream, from);
    this.step = from.position.step;
  }
}

/** sft-arith's options onto `base` (SFT_ARITH: the model, batch shape and schedule are the config's alone), and its defaults as options. */
export function sftConfigOf(o: SftRunOptions, base: SftConfig): SftConfig {
  return { ...base, steps: o.steps, lr: o.lr, seed: o.seed, evalEvery: o.evalEvery, evalN: o.evalN };
}

export function sftOptionsOf(c: SftConfig, run: { evalN: number; checkpointEvery: number }): SftRunOptions {
  return { preset: 'sft-arith', steps: c.steps, lr: c.lr, seed: c.seed, evalEvery: c.evalEvery, ...run };
}
