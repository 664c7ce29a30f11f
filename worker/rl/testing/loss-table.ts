/**
 * The 2×3 table the policy-loss and objective tests share, and a finite-difference check of
 * `backward` that holds every stop-gradient at the base point (`logpDetached`). Test support only,
 * not product code.
 *
 *   mask       1     1     0   |  1     1     1
 *   segmentIds 1     1     2   |  1     1     2        chains {0,1}, {2} (empty), {3,4}, {5}
 *   logp      −1.0  −0.5  −2.0 | −1.2  −0.3  −0.8
 *   old       −1.1  −0.9  −2.0 | −0.9  −0.3  −1.0     Δ = 0.1, 0.4, ·, −0.3, 0, 0.2
 *   behavior  −1.0  −1.5  −2.0 | −0.5  −0.3  −0.9     logp − behavior = 0, 1, ·, −0.7, 0, 0.1
 *   A          1    −1     0   | −0.5   2     0.5
 *   obs        0     0     1   |  0     0     0
 *   ref       −1.2  −0.4  −2.0 | −1.0  −0.5  −0.8     logp − ref = 0.2, −0.1, ·, −0.2, 0.2, 0 (objectiveTable)
 */
import { centralDiff } from './finite-diff';
import type { PolicyLossContext, PolicyLossResult } from '../losses/types';
import type { ObjectiveInput } from '../objectives/types';

export function table(): PolicyLossContext {
  return {
    rows: 2,
    width: 3,
    logp: [-1.0, -0.5, -2.0, -1.2, -0.3, -0.8],
    oldLogp: [-1.1, -0.9, -2.0, -0.9, -0.3, -1.0],
    behaviorLogp: [-1.0, -1.5, -2.0, -0.5, -0.3, -0.9],
    advantages: [1, -1, 0, -0.5, 2, 0.5],
    mask: [1, 1, 0, 1, 1, 1],
    segmentIds: [1, 1, 2, 1, 1, 2],
    observationMask: [0, 0, 1, 0, 0, 0],
  };
}

/** The same table as an objective's input (`responseMask` = mask), with the frozen reference `ref`. */
export function objectiveTable(): ObjectiveInput {
  const { mask, segmentIds, ...t } = table();
  return { ...t, responseMask: mask, segmentIds: segmentIds!, refLogp: [-1.2, -0.4, -2.0, -1.0, -0.5, -0.8] };
}

/** Arbitrary fixed per-token weights (an aggregation × correction stand-in). */
export const WEIGHTS = [0.3, 0.7, 0.4, 1.1, 0.2, 0.5];

/**
 * `[analytic, numeric]`: `backward(weights)` at the table's point and the central difference of
 * Σ_t weights_t·l_t with sg(logp) held at that point (`frozen`) or moving with logp (`!frozen`).
 */
export function gradients(
  fn: (ctx: PolicyLossContext) => PolicyLossResult,
  ctx: PolicyLossContext,
  weights: ArrayLike<number> = WEIGHTS,
  frozen = true,
): [Float64Array, Float64Array] {
  const analytic = fn(ctx).backward(weights);
  const numeric = centralDiff((x) => {
    const l = fn({ ...ctx, logp: x, logpDetached: frozen ? ctx.logp : x }).loss;
    let s = 0;
    for (let i = 0; i < l.length; i++) s += weights[i] * l[i];
    return s;
  }, ctx.logp);
  return [analytic, numeric];
}

/** Max |a − b|. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}
