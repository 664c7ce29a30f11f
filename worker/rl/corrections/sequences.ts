/**
 * Shared plumbing for the behavior corrections: the sequence layout of a `[rows, width]` batch,
 * input checks, and verl's masked statistics (`verl/utils/torch_functional.py` `masked_mean`,
 * torch `std`), which the policy losses' metrics and the value loss read too.
 *
 * A *sequence* is what verl calls a row: here a packed chain (a run of equal non-zero
 * `segmentIds` in a row) when `segmentIds` is given, else a whole row (verl's own layout, where
 * every row counts as a sequence even when its mask is empty); `sequenceSpans` (table.ts) lists
 * them. Not a loss: nothing here has a gradient.
 */
import { checkFinite, checkTable, type SegmentSpan, type TableLayout } from '../table';

/** The layout every correction reads. */
export interface SequenceLayout extends TableLayout {
  /** 1 on tokens that carry loss mass, 0 elsewhere; `[rows, width]`. */
  responseMask: ArrayLike<number>;
}

/** verl's `masked_mean` epsilon: `Σ m x / (Σ m + 1e-8)`. */
export const VERL_MEAN_EPS = 1e-8;
/** verl's `SAFETY_BOUND` on log-ratios before `exp`. */
export const SAFETY_BOUND = 20;

export const clampLog = (x: number): number => Math.min(Math.max(x, -SAFETY_BOUND), SAFETY_BOUND);

/** Checks that `a` is `[rows, width]` and finite wherever the mask is 1. */
export function checkLogProbs(name: string, a: ArrayLike<number>, layout: SequenceLayout): void {
  checkTable(name, a, layout.rows, layout.width);
  checkFinite(name, a, layout.width, layout.responseMask);
}

/** Number of mask tokens. */
export function maskCount(mask: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i];
  return n;
}

/** verl `masked_mean` over the whole batch of `f(i)`: `Σ m f / (Σ m + 1e-8)` (the array form with weights is advantages/whiten.ts `verlMaskedMean`). */
export function verlMaskedMeanOf(mask: ArrayLike<number>, f: (i: number) => number): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    s += f(i);
    n += 1;
  }
  return s / (n + VERL_MEAN_EPS);
}

/** Per-sequence masked sum and token count of `f(i)`. */
export function sequenceSums(
  spans: SegmentSpan[],
  mask: ArrayLike<number>,
  f: (i: number) => number,
): { sum: Float64Array; count: Float64Array } {
  const sum = new Float64Array(spans.length);
  const count = new Float64Array(spans.length);
  spans.forEach((sp, k) => {
    for (let i = sp.start; i < sp.end; i++) {
      if (!mask[i]) continue;
      sum[k] += f(i);
      count[k] += 1;
    }
  });
  return { sum, count };
}

/** Mean of an array (NaN when empty). */
export function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** torch's default `std` (unbiased), 0 for fewer than two entries as verl guards it. */
export function unbiasedStd(xs: ArrayLike<number>): number {
  if (xs.length < 2) return 0;
  const mu = mean(xs);
  let v = 0;
  for (let i = 0; i < xs.length; i++) v += (xs[i] - mu) ** 2;
  return Math.sqrt(v / (xs.length - 1));
}

export function maxOf(xs: ArrayLike<number>): number {
  let m = -Infinity;
  for (let i = 0; i < xs.length; i++) if (xs[i] > m) m = xs[i];
  return m;
}

export function minOf(xs: ArrayLike<number>): number {
  let m = Infinity;
  for (let i = 0; i < xs.length; i++) if (xs[i] < m) m = xs[i];
  return m;
}
