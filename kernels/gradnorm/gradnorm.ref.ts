/**
 * CPU references for global gradient-norm clipping (torch.nn.utils.clip_grad_norm_ with
 * norm_type 2), written from the formulas:
 *   gradNormSquaredRef: out[0] = Σ over every tensor and element of g², in float64, stored once
 *   clipScaleRef:       scale[0] = min(1, maxNorm / (sqrt(normSq[0]) + 1e-6))
 * 1e-6 is PyTorch's epsilon. A non-finite norm behaves as in PyTorch: +∞ → 0, NaN → NaN.
 * The GPU's stage-1 partials scratch has no counterpart here: the CPU sums in one pass.
 */

/** Output arrays: f32 in the backends, f64 in checks that need exact arithmetic. */
type RefOut = Float32Array | Float64Array;

/** One flat tensor (a typed array) or a list of tensors. */
type GradList = Float32Array | Float64Array | readonly ArrayLike<number>[];

/** PyTorch's clip_grad_norm_ epsilon: clip_coef = max_norm / (total_norm + 1e-6). */
export const CLIP_EPS = 1e-6;

export function gradNormSquaredRef(out: RefOut, grads: GradList): void {
  checkOut('gradNormSquaredRef', 'out', out.length);
  const list: readonly ArrayLike<number>[] = ArrayBuffer.isView(grads) ? [grads] : grads;
  let sum = 0;
  for (const g of list) {
    for (let i = 0; i < g.length; i++) sum += g[i] * g[i];
  }
  out[0] = sum;
}

export function clipScaleRef(scale: RefOut, normSq: ArrayLike<number>, maxNorm: number): void {
  checkOut('clipScaleRef', 'scale', scale.length);
  checkOut('clipScaleRef', 'normSq', normSq.length);
  checkMaxNorm(maxNorm);
  const ns = normSq[0];
  if (Number.isNaN(ns)) scale[0] = NaN;
  else scale[0] = Math.min(1, maxNorm / (Math.sqrt(ns) + CLIP_EPS)); // ∞ → maxNorm / ∞ = 0
}

/** maxNorm must be finite and > 0 (to disable clipping, pass gradScale 1 to adamw instead). */
export function checkMaxNorm(maxNorm: number): void {
  if (!(Number.isFinite(maxNorm) && maxNorm > 0)) {
    throw new Error(
      `clipScale: maxNorm must be a finite number > 0, got ${maxNorm} (to disable clipping, pass gradScale 1 to adamw)`,
    );
  }
}

export function checkOut(op: string, name: string, length: number): void {
  if (length < 1) throw new Error(`${op}: ${name} has ${length} elements, needs 1`);
}
