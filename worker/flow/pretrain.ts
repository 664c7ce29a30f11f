/**
 * The flow policy's starting point: a rectified flow trained with the conditional flow-matching
 * loss to carry N(0, I) to a base distribution in the plane, so that RL has a sampler to move.
 * Not the RL trainer (run.ts).
 *
 * Loss (Lipman et al. 2023, arXiv 2210.02747; rectified flow, Liu et al. 2022, arXiv 2209.03003),
 * in the SD3 / Flow-GRPO convention (model.ts): x_0 ~ base, ε ~ N(0, I), t ~ U(0, 1),
 *   x_t = (1 − t)·x_0 + t·ε,   L = mean over rows and coordinates of (v_θ(x_t, t) − (ε − x_0))²
 * with AdamW on the mean, constant learning rate. Seeded: the batches derive from `seed`.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import type { OptimizerConfig } from '../train/optimizer';
import { stepOptions } from '../train/optimizer';
import type { FlowModelConfig } from './config';
import { VelocityField } from './model';
import { normalFrom } from './sde';

export type FlowBase =
  /** Four Gaussian blobs at (±0.4, ±0.4), std 0.08 each, equal weights. */
  | 'blobs'
  /** Uniform on the square [−0.5, 0.5]². */
  | 'square'
  /** N(0, 0.25² I). */
  | 'gaussian';

export const FLOW_BASES: readonly FlowBase[] = ['blobs', 'square', 'gaussian'];

/** N points (N, 2) of `base` from the generator. */
export function sampleBase(base: FlowBase, n: number, rand: () => number): Float32Array {
  const normal = normalFrom(rand);
  const out = new Float32Array(2 * n);
  for (let i = 0; i < n; i++) {
    let x: number;
    let y: number;
    if (base === 'blobs') {
      const m = Math.floor(rand() * 4);
      x = (m & 1 ? 0.4 : -0.4) + 0.08 * normal();
      y = (m & 2 ? 0.4 : -0.4) + 0.08 * normal();
    } else if (base === 'square') {
      x = rand() - 0.5;
      y = rand() - 0.5;
    } else if (base === 'gaussian') {
      x = 0.25 * normal();
      y = 0.25 * normal();
    } else throw new Error(`sampleBase: base = ${JSON.stringify(base)}: expected one of ${FLOW_BASES.join(', ')}`);
    out[2 * i] = x;
    out[2 * i + 1] = y;
  }
  return out;
}

export interface PretrainOptions extends OptimizerConfig {
  base: FlowBase;
  /** Optimizer steps and rows per step. */
  iterations: number;
  batch: number;
  seed: number;
}

/**
 * 2000 steps of 256 rows at lr 5e-3: about 5 s on the wasm backend in Node (one thread), 50 s on
 * the CPU references. The loss sits near 0.65 (the mixture's mean flow) for several hundred steps
 * before the modes separate (to about 0.54).
 */
export const PRETRAIN_DEFAULTS: PretrainOptions = {
  base: 'blobs',
  iterations: 2000,
  batch: 256,
  seed: 7,
  lr: 5e-3,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1,
};

/**
 * Trains `model` (already initialised) with the flow-matching loss; returns the loss of every step.
 * `onStep(i, loss)` is told after each step (progress views).
 */
export async function pretrainFlow(
  model: VelocityField,
  o: PretrainOptions,
  onStep?: (i: number, loss: number) => void,
): Promise<Float64Array> {
  if (model.config.dim !== 2)
    throw new Error(`pretrainFlow: the base distributions are 2-D, the model has dim = ${model.config.dim}`);
  for (const k of ['iterations', 'batch'] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 1) throw new Error(`pretrain.${k} = ${o[k]}: expected an integer ≥ 1`);
  }
  const rand = mulberry32(o.seed);
  const normal = normalFrom(rand);
  const n = o.batch;
  const D = 2;
  const losses = new Float64Array(o.iterations);
  const xt = new Float32Array(n * D);
  const target = new Float64Array(n * D);
  const t = new Float64Array(n);
  const dv = new Float32Array(n * D);
  for (let it = 0; it < o.iterations; it++) {
    const x0 = sampleBase(o.base, n, rand);
    for (let i = 0; i < n; i++) {
      t[i] = rand();
      for (let d = i * D; d < (i + 1) * D; d++) {
        const e = normal();
        xt[d] = (1 - t[i]) * x0[d] + t[i] * e;
        target[d] = e - x0[d];
      }
    }
    const v = await model.forward(xt, t);
    let loss = 0;
    for (let j = 0; j < n * D; j++) {
      const r = v[j] - target[j];
      loss += r * r;
      dv[j] = (2 * r) / (n * D);
    }
    losses[it] = loss / (n * D);
    model.zeroGrad();
    model.backward(dv);
    await model.step(stepOptions(o, model.optimizerSteps + 1));
    onStep?.(it, losses[it]);
  }
  return losses;
}

/**
 * A pretrained base for FlowGrpoRun: a fresh model of `config` initialised from `initSeed`,
 * trained by `pretrainFlow`, its weights read back and its tensors freed.
 */
export async function pretrainBase(
  ops: Ops,
  config: FlowModelConfig,
  o: PretrainOptions = PRETRAIN_DEFAULTS,
  initSeed = 1,
  onStep?: (i: number, loss: number) => void,
): Promise<{ weights: Map<string, Float32Array>; losses: Float64Array }> {
  const model = new VelocityField(ops, config);
  try {
    model.initWeights(initSeed);
    const losses = await pretrainFlow(model, o, onStep);
    return { weights: await model.getWeights(), losses };
  } finally {
    model.dispose();
  }
}
