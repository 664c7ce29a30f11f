/**
 * verl's masked whitening statistics (`verl/utils/torch_functional.py`: `masked_mean`,
 * `masked_var` with `unbiased=True`, `masked_whiten`), over entries that carry a weight: a 0/1
 * token mask, or a per-sequence token count for a value that is constant over its tokens.
 * `masked_whiten(values, mask, shift_mean=True)` is `(x − μ)·rsqrt(var + 1e-8)`; with
 * `shift_mean=False` it adds μ back, `(x − μ)·rsqrt(var + 1e-8) + μ` (unchanged since verl's first
 * commit 30911f1; read at volcengine/verl b178a3c and verl-project/verl 1dda039). No verl estimator
 * passes `shift_mean=False`; here it is the `shiftMean: false` option of the estimators that whiten.
 *
 * Not a normaliser of anything else: the epsilons (1e-8 in the mean's denominator and under the
 * square root) are verl's, and the refusals of an empty or one-token mask are verl's `ValueError`s
 * (docs/rl-formulas.md §2). Callers that want dew's "zero mass for none" check the count first.
 */

/** verl's epsilon in `masked_mean` (`Σ m x / (Σ m + 1e-8)`) and in `masked_whiten` (`rsqrt(var + 1e-8)`). */
export const VERL_EPS = 1e-8;

export interface WhitenStats {
  /** `Σ w x / (Σ w + 1e-8)`. */
  mean: number;
  /** `Σ w (x − mean)² / (Σ w + 1e-8) · N/(N − 1)`, N = Σ w. */
  variance: number;
  /** N = Σ w. */
  count: number;
}

/** verl `masked_mean`: `Σ w x / (Σ w + 1e-8)`, skipping zero-weight entries (so NaN there does not leak). */
export function verlMaskedMean(x: ArrayLike<number>, w: ArrayLike<number>): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < x.length; i++) {
    if (w[i] === 0) continue;
    s += w[i] * x[i];
    n += w[i];
  }
  return s / (n + VERL_EPS);
}

/** verl `masked_mean` and unbiased `masked_var` of `x` under weights `w`; throws when Σ w is 0 or 1. */
export function verlWhitenStats(x: ArrayLike<number>, w: ArrayLike<number>): WhitenStats {
  if (x.length !== w.length) throw new Error(`whiten: ${x.length} values but ${w.length} weights`);
  let count = 0;
  for (let i = 0; i < w.length; i++) count += w[i];
  if (count === 0) throw new Error('whiten: the mask is empty; verl masked_var needs at least one element');
  if (count === 1)
    throw new Error('whiten: the mask holds one element; its unbiased variance divides by zero (verl masked_var)');
  const mean = verlMaskedMean(x, w);
  let ss = 0;
  for (let i = 0; i < x.length; i++) if (w[i] !== 0) ss += w[i] * (x[i] - mean) ** 2;
  const variance = (ss / (count + VERL_EPS)) * (count / (count - 1));
  return { mean, variance, count };
}

/**
 * verl `masked_whiten(x, m, shift_mean)` applied to one value: `(x − mean) · (var + 1e-8)^{-1/2}`,
 * plus `mean` when `shiftMean` is false (the scale changes, the mean stays). Default `true` (verl).
 */
export function whitenWith(x: number, s: WhitenStats, shiftMean = true): number {
  const z = (x - s.mean) / Math.sqrt(s.variance + VERL_EPS);
  return shiftMean ? z : z + s.mean;
}
