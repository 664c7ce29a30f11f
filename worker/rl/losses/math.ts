/**
 * Small pieces the policy losses share: input checks, the clamped ratio, torch's tie rules for
 * `maximum`/`minimum`/`clamp` gradients, and the two metric means (verl `masked_mean` with its
 * 1e-8, from corrections/sequences.ts; rLLM's exact mean over active tokens). Not a loss.
 * Reference: docs/rl-formulas.md §2.
 */
import { maskCount, SAFETY_BOUND, verlMaskedMeanOf } from '../corrections/sequences';
import { checkFinite, checkTable, sequenceSpans, type SegmentSpan } from '../table';
import type { PolicyLossContext } from './types';

/** verl / rLLM bound on |logp − old| before `exp` (the same 20 as verl's rollout-correction `SAFETY_BOUND`). */
export const LOG_RATIO_CLAMP = SAFETY_BOUND;

interface Checked {
  n: number;
  logp: ArrayLike<number>;
  /** sg(logp): `ctx.logpDetached ?? ctx.logp`. */
  det: ArrayLike<number>;
  old: ArrayLike<number>;
  behavior: ArrayLike<number>;
  adv: ArrayLike<number>;
  mask: ArrayLike<number>;
  spans: SegmentSpan[];
}

/** Checks shapes, the 0/1 mask and finiteness on the mask; refuses a missing input the loss needs. */
export function checkContext(
  ctx: PolicyLossContext,
  loss: string,
  needs: { old?: boolean; behavior?: boolean } = {},
): Checked {
  const { rows, width, mask } = ctx;
  const spans = sequenceSpans(ctx, mask);
  const table = (name: string, a: ArrayLike<number> | undefined, required: boolean): ArrayLike<number> => {
    if (!a) {
      if (required) throw new Error(`policy loss '${loss}' needs ${name} ([rows, width])`);
      return new Float64Array(rows * width);
    }
    checkTable(name, a, rows, width);
    checkFinite(name, a, width, mask);
    return a;
  };
  const logp = table('logp', ctx.logp, true);
  return {
    n: rows * width,
    logp,
    det: ctx.logpDetached ? table('logpDetached', ctx.logpDetached, true) : logp,
    old: table('oldLogp', ctx.oldLogp, needs.old ?? false),
    behavior: table('behaviorLogp', ctx.behaviorLogp, needs.behavior ?? false),
    adv: table('advantages', ctx.advantages, true),
    mask,
    spans,
  };
}

/** `[r, dr/dlogp]` with r = exp(clamp(Δ, ±limit)); torch's clamp passes the gradient at its bounds. */
export function clampedRatio(delta: number, limit: number): [number, number] {
  const r = Math.exp(Math.min(Math.max(delta, -limit), limit));
  return [r, Math.abs(delta) <= limit ? r : 0];
}

export const clip = (x: number, lo: number, hi: number): number => Math.min(Math.max(x, lo), hi);
/** ∂clamp(x, lo, hi)/∂x as torch: 1 on [lo, hi] inclusive. */
export const dclip = (x: number, lo: number, hi: number): number => (x >= lo && x <= hi ? 1 : 0);
/** ∂max(a, b) with torch.maximum's tie rule (½ each). */
export const dmax = (a: number, b: number, da: number, db: number): number =>
  a > b ? da : b > a ? db : 0.5 * (da + db);
/** ∂min(a, b) with torch.minimum's tie rule (½ each). */
export const dmin = (a: number, b: number, da: number, db: number): number =>
  a < b ? da : b < a ? db : 0.5 * (da + db);

/** verl `masked_mean`: Σ m x / (Σ m + 1e-8) (the corrections' implementation). */
export const verlMean = (x: ArrayLike<number>, mask: ArrayLike<number>): number => verlMaskedMeanOf(mask, (i) => x[i]);

/** rLLM's mean over active tokens: Σ m x / max(Σ m, 1). */
export function exactMean(x: ArrayLike<number>, mask: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i]) s += x[i];
  return s / Math.max(maskCount(mask), 1);
}

/** `{ min, mean, max }` of x over active tokens, 1 each when there are none (rLLM's `new_ones(1)`). */
export function activeStats(x: ArrayLike<number>, mask: ArrayLike<number>): { min: number; mean: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  let s = 0;
  let n = 0;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    min = Math.min(min, x[i]);
    max = Math.max(max, x[i]);
    s += x[i];
    n += 1;
  }
  return n === 0 ? { min: 1, mean: 1, max: 1 } : { min, mean: s / n, max };
}
