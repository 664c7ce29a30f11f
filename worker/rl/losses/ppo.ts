/**
 * `ppo`: the clipped surrogate with verl's dual clip, per token.
 *
 *   r = exp(clamp(logp − old, ±20));  l1 = −A·min(r, δ);  l2 = −A·clip(r, 1−ε_low, 1+ε_high)
 *   lc = max(l1, l2);  l = A < 0 ? min(−A·c, lc) : lc
 *
 * Gradients follow torch exactly, kinks included (ties split ½/½, clamp passes at its bounds).
 * Not the aggregation and not the behavior corrections (the objective multiplies them in). The
 * reference is verl `compute_policy_loss_vanilla`; TRL `GRPOTrainer._compute_loss` (no dual clip,
 * no ±20 clamp, optional `delta`); rLLM `ppo_clip` (no dual clip). docs/rl-formulas.md §5.1.
 */
import { checkContext, clampedRatio, clip, dclip, dmax, dmin, exactMean, LOG_RATIO_CLAMP, verlMean } from './math';
import type { Compat } from '../compat';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface PpoOptions {
  /** ε_low, the ratio floor 1 − ε_low. Default 0.2 (verl `clip_ratio`, TRL `epsilon`, rLLM `eps_clip`). */
  clipLow?: number;
  /** ε_high, the ratio ceiling 1 + ε_high. Default `clipLow` (verl, TRL and rLLM all fall back to ε). */
  clipHigh?: number;
  /** Dual-clip bound c > 1 for negative advantages. Default 3.0 under `verl` (`clip_ratio_c`); Infinity (none) under `trl`, `rllm`. */
  dualClip?: number;
  /** Bound on |logp − old| before exp. Default 20 under `verl`, `rllm`; Infinity (no clamp) under `trl`. */
  logRatioClamp?: number;
  /** TRL `delta`: r ← min(r, δ) in the unclipped term only. Default none (TRL `delta = None`). */
  delta?: number;
  /** Default `verl`. `trl`: TRL's GRPO surrogate (+ its clip_ratio metrics); `rllm`: rLLM `ppo_clip` (+ its `clip_frac`). */
  compat?: Compat;
}

/** The options with every default filled in under their `compat` (what the loss computes with; the exports compare these). */
export function ppoSettings(o: PpoOptions = {}) {
  const compat = o.compat ?? 'verl';
  const clipLow = o.clipLow ?? 0.2;
  return {
    compat,
    clipLow,
    clipHigh: o.clipHigh ?? clipLow,
    dualClip: o.dualClip ?? (compat === 'verl' ? 3.0 : Infinity),
    logRatioClamp: o.logRatioClamp ?? (compat === 'trl' ? Infinity : LOG_RATIO_CLAMP),
    delta: o.delta ?? Infinity,
  };
}

export function ppoLoss(ctx: PolicyLossContext, options: PpoOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'ppo', { old: true });
  const { compat, clipLow: eLow, clipHigh: eHigh, dualClip: dual, logRatioClamp: limit, delta } = ppoSettings(options);
  if (!(dual > 1)) throw new Error(`ppo: dualClip = ${dual}: expected > 1 (verl asserts clip_ratio_c > 1)`);
  const lo = 1 - eLow;
  const hi = 1 + eHigh;
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const clipped = new Float64Array(c.n); // verl: l2 > l1
  const lower = new Float64Array(c.n); // verl: lc > −A·c with A < 0
  const negKl = new Float64Array(c.n);
  const ratioClipped = new Float64Array(c.n); // rLLM: clip(r) ≠ r
  const lowTrl = new Float64Array(c.n);
  const highTrl = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const d = c.logp[i] - c.old[i];
    const [r, dr] = clampedRatio(d, limit);
    const r1 = Math.min(r, delta);
    const dr1 = r <= delta ? dr : 0;
    const l1 = -a * r1;
    const l2 = -a * clip(r, lo, hi);
    const lc = Math.max(l1, l2);
    const dlc = dmax(l1, l2, -a * dr1, -a * dr * dclip(r, lo, hi));
    if (a < 0) {
      const l3 = -a * dual;
      loss[i] = Math.min(l3, lc);
      dlogp[i] = dmin(l3, lc, 0, dlc);
      lower[i] = lc > l3 ? 1 : 0;
    } else {
      loss[i] = lc;
      dlogp[i] = dlc;
    }
    clipped[i] = l2 > l1 ? 1 : 0;
    negKl[i] = -Math.min(Math.max(d, -limit), limit);
    ratioClipped[i] = clip(r, lo, hi) !== r ? 1 : 0;
    lowTrl[i] = r1 < lo && a < 0 ? 1 : 0;
    highTrl[i] = r1 > hi && a > 0 ? 1 : 0;
  }
  const metrics: Record<string, number> = {
    pg_clipfrac: verlMean(clipped, c.mask),
    pg_clipfrac_lower: verlMean(lower, c.mask),
    ppo_kl: verlMean(negKl, c.mask),
  };
  if (compat === 'rllm') metrics.clip_frac = exactMean(ratioClipped, c.mask);
  if (compat === 'trl') {
    metrics['clip_ratio/low_mean'] = exactMean(lowTrl, c.mask);
    metrics['clip_ratio/high_mean'] = exactMean(highTrl, c.mask);
    metrics['clip_ratio/region_mean'] = metrics['clip_ratio/low_mean'] + metrics['clip_ratio/high_mean'];
  }
  return localResult(loss, dlogp, metrics);
}
