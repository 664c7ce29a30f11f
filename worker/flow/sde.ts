/**
 * Flow-GRPO's SDE sampler for a rectified flow: the reverse-time SDE with the ODE's marginals,
 * discretised with Euler–Maruyama, so each denoising step is a Gaussian transition with a
 * closed-form log-density. Pure float64 functions over row-major (N, D) arrays; not the model.
 *
 * Reference: Flow-GRPO (arXiv 2505.05470, its ODE-to-SDE conversion), yifan123/flow_grpo @
 * ac4c86e8 `flow_grpo/diffusers_patch/sd3_sde_with_logprob.py` `sde_step_with_logprob`, and the KL of
 * `scripts/train_sd3.py`. With t from 1 (noise) to 0 (data), Δ = t_{k+1} − t_k < 0, v = v_θ(x_t, t):
 *
 *   σ_t   = a · sqrt(t / (1 − t))          (t = 1 uses t_1 in the denominator: flow_grpo's sigma_max)
 *   μ     = x·(1 + σ_t²/(2t)·Δ) + v·(1 + σ_t²(1 − t)/(2t))·Δ  = x + [v + σ_t²/(2t)(x + (1 − t)v)]·Δ
 *   x'    = μ + σ_t·sqrt(−Δ)·ε,  ε ~ N(0, I)
 *   log p = mean over the D coordinates of −(x' − μ)²/(2s²) − log s − log √(2π),  s = σ_t·sqrt(−Δ)
 *   KL    = mean over D of (μ − μ_ref)² / (2σ_t²)   (train_sd3.py; the exact Gaussian KL divides by 2s²)
 *
 * The log-density is a per-coordinate mean, as flow_grpo's `log_prob.mean(dim=1..)`. dew's
 * FlowGRPOObjective speaks of "joint transition log densities" and "coordinate-normalized
 * gradients"; the mean (the joint log-density divided by D) is one reading of both, and is flow_grpo’s.
 * Timesteps are linear in k, optionally shifted as SD3's scheduler does (t' = shift·t / (1 +
 * (shift − 1)·t)); shift 1 (none) by default.
 */

export interface FlowSdeOptions {
  /** K, the denoising transitions per trajectory (K + 1 time points; dew FlowRollout steps = K + 1). Flow-GRPO trains with 10. */
  steps: number;
  /** a, the noise level in σ_t = a·sqrt(t/(1 − t)). Flow-GRPO `sample.noise_level` 0.7. */
  noiseLevel: number;
  /** Timestep shift (SD3 scheduler `shift`; 1: linear t_k = 1 − k/K). */
  shift: number;
}

export const FLOW_SDE_DEFAULTS: FlowSdeOptions = { steps: 10, noiseLevel: 0.7, shift: 1 };

/** One transition's coefficients: μ = cx·x + cv·v, x' = μ + std·ε. */
export interface TransitionCoefficients {
  /** t_k and t_{k+1} (< t_k), Δ = t_{k+1} − t_k. */
  t: number;
  tNext: number;
  dt: number;
  /** σ_t, the SDE's diffusion coefficient (the KL divides by it). */
  sigma: number;
  /** s = σ_t·sqrt(−Δ), the transition's standard deviation per coordinate. */
  std: number;
  cx: number;
  cv: number;
}

/** The K + 1 time points, t_0 = 1 > … > t_K = 0. */
export function flowTimesteps(o: FlowSdeOptions): Float64Array {
  checkSdeOptions(o);
  const K = o.steps;
  const t = new Float64Array(K + 1);
  for (let k = 0; k <= K; k++) {
    const s = 1 - k / K;
    t[k] = (o.shift * s) / (1 + (o.shift - 1) * s);
  }
  return t;
}

/** Coefficients of every transition k = 0 … K − 1. */
export function flowSchedule(o: FlowSdeOptions): TransitionCoefficients[] {
  const ts = flowTimesteps(o);
  const tMax = ts[1]; // flow_grpo: sigma_max = sigmas[1], used where t = 1
  const out: TransitionCoefficients[] = [];
  for (let k = 0; k < o.steps; k++) {
    const t = ts[k];
    const tNext = ts[k + 1];
    const dt = tNext - t;
    const sigma = o.noiseLevel * Math.sqrt(t / (1 - (t === 1 ? tMax : t)));
    const std = sigma * Math.sqrt(-dt);
    const cx = 1 + ((sigma * sigma) / (2 * t)) * dt;
    const cv = (1 + (sigma * sigma * (1 - t)) / (2 * t)) * dt;
    out.push({ t, tNext, dt, sigma, std, cx, cv });
  }
  return out;
}

export function checkSdeOptions(o: FlowSdeOptions): void {
  if (!Number.isInteger(o.steps) || o.steps < 2 || o.steps > 1000)
    throw new Error(`sde.steps = ${o.steps}: expected an integer in [2, 1000]`);
  if (!(o.noiseLevel > 0) || !Number.isFinite(o.noiseLevel))
    throw new Error(
      `sde.noiseLevel = ${o.noiseLevel}: expected a finite number > 0 (0 is the ODE, which has no log-density)`,
    );
  if (!(o.shift > 0) || !Number.isFinite(o.shift))
    throw new Error(`sde.shift = ${o.shift}: expected a finite number > 0`);
}

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/** μ of row i: D values from x and v at offset i·D, written to `mean` at the same offset. */
export function transitionMean(
  mean: Float64Array,
  x: ArrayLike<number>,
  v: ArrayLike<number>,
  c: TransitionCoefficients,
  i: number,
  D: number,
): void {
  for (let d = i * D; d < (i + 1) * D; d++) mean[d] = c.cx * x[d] + c.cv * v[d];
}

/** log p(x' | x) of row i (the per-coordinate mean), from its μ. */
export function transitionLogProb(
  next: ArrayLike<number>,
  mean: ArrayLike<number>,
  c: TransitionCoefficients,
  i: number,
  D: number,
): number {
  let s = 0;
  for (let d = i * D; d < (i + 1) * D; d++) {
    const z = next[d] - mean[d];
    s += (-z * z) / (2 * c.std * c.std);
  }
  return s / D - Math.log(c.std) - LOG_SQRT_2PI;
}

/** Flow-GRPO's KL term of row i: mean over D of (μ − μ_ref)² / (2σ_t²). */
export function transitionKl(
  mean: ArrayLike<number>,
  refMean: ArrayLike<number>,
  c: TransitionCoefficients,
  i: number,
  D: number,
): number {
  let s = 0;
  for (let d = i * D; d < (i + 1) * D; d++) s += (mean[d] - refMean[d]) ** 2;
  return s / (D * 2 * c.sigma * c.sigma);
}

/**
 * ∂loss/∂v of row i from the objective's seeds on its log-prob (`gLogp`) and KL (`gKl`):
 *   ∂log p/∂μ_d = (x'_d − μ_d)/(D·s²),  ∂KL/∂μ_d = (μ_d − μ_ref,d)/(D·σ_t²),  ∂μ_d/∂v_d = cv.
 * Added into `dv` at offset i·D. `refMean` may be null when gKl = 0.
 */
export function velocityGrad(
  dv: Float64Array | Float32Array,
  gLogp: number,
  gKl: number,
  next: ArrayLike<number>,
  mean: ArrayLike<number>,
  refMean: ArrayLike<number> | null,
  c: TransitionCoefficients,
  i: number,
  D: number,
): void {
  const a = (gLogp * c.cv) / (D * c.std * c.std);
  const b = (gKl * c.cv) / (D * c.sigma * c.sigma);
  for (let d = i * D; d < (i + 1) * D; d++) {
    let g = a * (next[d] - mean[d]);
    if (gKl !== 0) {
      if (!refMean) throw new Error('velocityGrad: a KL seed needs the reference mean');
      g += b * (mean[d] - refMean[d]);
    }
    dv[d] += g;
  }
}

/** Standard normal draws from a uniform generator on [0, 1) (Box–Muller, one draw per call). */
export function normalFrom(rand: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}
