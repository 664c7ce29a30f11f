/**
 * CPU reference for one AdamW step: torch.optim.AdamW (amsgrad = false, maximize = false), its
 * single-tensor path (`_single_tensor_adamw` in older releases, `_single_tensor_adam` with
 * decoupled_weight_decay = True in newer ones), followed operation by operation and evaluated in
 * float64 per element:
 *   g      = grad · gradScale                       (the clip_grad_norm_ multiply, done here)
 *   param *= 1 − lr·weightDecay                     (decoupled decay, before the Adam step)
 *   m      = lerp(m, g, 1 − β1)                      = m + (1 − β1)(g − m)
 *   v      = β2·v + (1 − β2)·g²                     (mul_ then addcmul_)
 *   denom  = sqrt(v) / sqrt(1 − β2^t) + eps
 *   param −= (lr / (1 − β1^t)) · m / denom          (addcdiv_ with value −step_size)
 * The only difference from PyTorch is rounding: PyTorch rounds each operation to f32, this
 * reference only the stored results. Not here: amsgrad, maximize, capturable, complex params.
 */

/** Output arrays: f32 in the backends, f64 in checks that need exact arithmetic. */
type RefOut = Float32Array | Float64Array;

export interface AdamWHyper {
  /** Learning rate, ≥ 0. */
  lr: number;
  /** First-moment decay β1 in [0, 1) (PyTorch default 0.9). */
  beta1: number;
  /** Second-moment decay β2 in [0, 1) (PyTorch default 0.999). */
  beta2: number;
  /** Added to the bias-corrected sqrt(v), > 0 (PyTorch default 1e-8). */
  eps: number;
  /** Decoupled weight decay, ≥ 0 (PyTorch AdamW default 0.01; 0 for norms). */
  weightDecay: number;
  /** The step number t, 1-based: the first update uses t = 1. */
  step: number;
}

/** The per-step scalars, in float64, shared by the reference and the GPU wrapper's uniforms. */
interface AdamWScalars {
  decay: number; // 1 − lr·wd
  oneMinusBeta1: number;
  oneMinusBeta2: number;
  stepSize: number; // lr / (1 − β1^t)
  bc2Sqrt: number; // sqrt(1 − β2^t)
}

export function adamwScalars(hp: AdamWHyper): AdamWScalars {
  checkAdamWHyper(hp);
  return {
    decay: 1 - hp.lr * hp.weightDecay,
    oneMinusBeta1: 1 - hp.beta1,
    oneMinusBeta2: 1 - hp.beta2,
    stepSize: hp.lr / (1 - hp.beta1 ** hp.step),
    bc2Sqrt: Math.sqrt(1 - hp.beta2 ** hp.step),
  };
}

/**
 * `gradScale`: a number, or a one-element array holding the scale (the CPU image of the GPU scale
 * tensor that clipScale writes; its value is used as is, non-finite included, as on the GPU).
 */
export function adamwRef(
  param: RefOut,
  grad: ArrayLike<number>,
  m: RefOut,
  v: RefOut,
  n: number,
  hp: AdamWHyper,
  gradScale: number | ArrayLike<number> = 1,
): void {
  checkAdamWSizes('adamwRef', { param: param.length, grad: grad.length, m: m.length, v: v.length }, n);
  const scale = typeof gradScale === 'number' ? checkScaleNumber(gradScale) : scaleFromArray(gradScale);
  const s = adamwScalars(hp);
  for (let i = 0; i < n; i++) {
    const g = grad[i] * scale;
    const p = param[i] * s.decay;
    const mi = m[i] + s.oneMinusBeta1 * (g - m[i]);
    const vi = hp.beta2 * v[i] + s.oneMinusBeta2 * g * g;
    const denom = Math.sqrt(vi) / s.bc2Sqrt + hp.eps;
    param[i] = p - s.stepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
  }
}

/** A number gradScale must be finite: a non-finite one is a caller's bug. */
export function checkScaleNumber(scale: number): number {
  if (!Number.isFinite(scale)) throw new Error(`adamw: gradScale must be a finite number, got ${scale}`);
  return scale;
}

function scaleFromArray(a: ArrayLike<number>): number {
  if (a.length < 1) throw new Error('adamw: the gradScale tensor has 0 elements, needs 1');
  return a[0];
}

/** Throws naming the field and its allowed range. */
function checkAdamWHyper(hp: AdamWHyper): void {
  const bad = (name: string, range: string, value: number) =>
    new Error(`adamw: ${name} must be ${range}, got ${value}`);
  if (!(Number.isFinite(hp.lr) && hp.lr >= 0)) throw bad('lr', 'a finite number ≥ 0', hp.lr);
  if (!(hp.beta1 >= 0 && hp.beta1 < 1)) throw bad('beta1', 'in [0, 1)', hp.beta1);
  if (!(hp.beta2 >= 0 && hp.beta2 < 1)) throw bad('beta2', 'in [0, 1)', hp.beta2);
  if (!(Number.isFinite(hp.eps) && hp.eps > 0)) throw bad('eps', 'a finite number > 0', hp.eps);
  if (!(Number.isFinite(hp.weightDecay) && hp.weightDecay >= 0))
    throw bad('weightDecay', 'a finite number ≥ 0', hp.weightDecay);
  if (!(Number.isInteger(hp.step) && hp.step >= 1)) throw bad('step', 'an integer ≥ 1 (1-based)', hp.step);
}

/** Throws with actual and expected sizes when a buffer holds fewer than n elements. */
export function checkAdamWSizes(op: string, sizes: Record<string, number>, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new Error(`${op}: n must be a non-negative integer, got ${n}`);
  for (const [name, len] of Object.entries(sizes)) {
    if (len < n) throw new Error(`${op}: ${name} has ${len} elements, needs n = ${n}`);
  }
}
