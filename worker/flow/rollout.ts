/**
 * Trajectories of the flow policy: K SDE transitions from x_1 ~ N(0, I) down to t = 0, recording
 * each step's latent, next latent and Gaussian log-prob (Flow-GRPO `pipeline_with_logprob`: all
 * latents, one log-prob per step), and the deterministic Euler ODE sampler for previews. Seeded
 * (mulberry32 + Box–Muller). Not the reward nor the trainer.
 *
 * Latents are stored as float32, the model's input precision, and each log-prob is computed from
 * the stored (rounded) next latent, so rescoring the same weights on the stored rows reproduces the
 * recorded log-probs exactly on the CPU and wasm backends.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { FlowSdeOptions } from './sde';
import { flowSchedule, flowTimesteps, normalFrom, transitionLogProb, transitionMean } from './sde';

/** What the samplers need of a velocity field: a `VelocityField`, or an analytic one in tests. */
export interface Velocity {
  readonly config: { readonly dim: number };
  /** v(x_i, t_i) for N rows: x (N, D), t (N); returns (N, D). */
  forward(x: ArrayLike<number>, t: ArrayLike<number>): Promise<Float32Array>;
}

export interface FlowTrajectories {
  /** N samples of D coordinates, K transitions. */
  n: number;
  dim: number;
  steps: number;
  /** The K + 1 time points, t_0 = 1 … t_K = 0. */
  timesteps: Float64Array;
  /** (N, K + 1, D): x at every time point; transition k goes from latents[:, k] to latents[:, k + 1]. */
  latents: Float32Array;
  /** (N, K): log p(x_{k+1} | x_k) under the sampling weights (the per-coordinate mean, sde.ts). */
  logProbs: Float64Array;
}

/** Standard normal starting points (N, D) from `seed`. */
export function gaussianStarts(n: number, dim: number, seed: number): Float32Array {
  const normal = normalFrom(mulberry32(seed));
  const out = new Float32Array(n * dim);
  for (let i = 0; i < out.length; i++) out[i] = normal();
  return out;
}

/** The final points (N, D) of trajectories: latents[:, K]. */
export function finalPoints(tr: FlowTrajectories): Float32Array {
  const { n, dim: D, steps: K } = tr;
  const out = new Float32Array(n * D);
  for (let i = 0; i < n; i++) out.set(tr.latents.subarray((i * (K + 1) + K) * D, (i * (K + 1) + K + 1) * D), i * D);
  return out;
}

/**
 * Samples N trajectories of the SDE from `starts` (N, D), with the transition noise drawn from
 * `seed` (row-major: step, then sample, then coordinate). One forward (and readback) per step.
 */
export async function sampleSde(
  model: Velocity,
  starts: Float32Array,
  sde: FlowSdeOptions,
  seed: number,
): Promise<FlowTrajectories> {
  const D = model.config.dim;
  const n = starts.length / D;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`sampleSde: starts has ${starts.length} values, expected N·D with D = ${D}, N ≥ 1`);
  const schedule = flowSchedule(sde);
  const K = sde.steps;
  const normal = normalFrom(mulberry32(seed));
  const latents = new Float32Array(n * (K + 1) * D);
  const logProbs = new Float64Array(n * K);
  let x = Float32Array.from(starts);
  const mean = new Float64Array(n * D);
  const next = new Float32Array(n * D);
  const tRow = new Float64Array(n);
  for (let i = 0; i < n; i++) latents.set(x.subarray(i * D, (i + 1) * D), i * (K + 1) * D);
  for (let k = 0; k < K; k++) {
    const c = schedule[k];
    tRow.fill(c.t);
    const v = await model.forward(x, tRow);
    for (let i = 0; i < n; i++) {
      transitionMean(mean, x, v, c, i, D);
      for (let d = i * D; d < (i + 1) * D; d++) next[d] = mean[d] + c.std * normal();
      logProbs[i * K + k] = transitionLogProb(next, mean, c, i, D);
      latents.set(next.subarray(i * D, (i + 1) * D), (i * (K + 1) + k + 1) * D);
    }
    x = Float32Array.from(next);
  }
  return { n, dim: D, steps: K, timesteps: flowTimesteps(sde), latents, logProbs };
}

/** The deterministic sampler: K Euler steps of the ODE x' = x + v·Δ from `starts` (N, D) to t = 0. */
export async function sampleOde(
  model: Velocity,
  starts: Float32Array,
  steps: number,
  shift = 1,
): Promise<Float32Array> {
  const D = model.config.dim;
  const n = starts.length / D;
  const ts = flowTimesteps({ steps, noiseLevel: 1, shift });
  const x = Float32Array.from(starts);
  const tRow = new Float64Array(n);
  for (let k = 0; k < steps; k++) {
    tRow.fill(ts[k]);
    const v = await model.forward(x, tRow);
    const dt = ts[k + 1] - ts[k];
    for (let j = 0; j < x.length; j++) x[j] = x[j] + v[j] * dt;
  }
  return x;
}
