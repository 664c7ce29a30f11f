/**
 * `cispo`: REINFORCE weighted by a clipped, detached importance ratio; no token loses its gradient.
 *
 *   verl / rLLM: l = −sg(clip(r, 1−ε_low, 1+ε_high))·A·logp,  r = exp(clamp(logp − old, ±20))
 *   TRL:         l = −sg(min(r, cap))·A·logp,                r = exp(logp − old)   (upper cap only)
 *   g = −weight·A
 *
 * The loss value contains logp itself, so it is not a surrogate value. Not the aggregation (TRL
 * aggregates cispo like `dapo`, i.e. token-mean here). References: verl
 * `compute_policy_loss_cispo`, rLLM `cispo`, TRL `GRPOTrainer` `loss_type="cispo"`;
 * docs/rl-formulas.md §5.3, §11.7.
 */
import { checkContext, clampedRatio, clip, exactMean, LOG_RATIO_CLAMP, verlMean } from './math';
import type { Compat } from '../compat';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface CispoOptions {
  /** ε_low (verl, rLLM). Default 0.2 (verl `clip_ratio_low` fallback, rLLM `eps_clip`). */
  clipLow?: number;
  /** ε_high (verl, rLLM). Default `clipLow`. */
  clipHigh?: number;
  /** TRL's absolute cap (`epsilon_high`, not 1 + ε). Default 5.0, TRL's recommended value (TRL itself falls back to `epsilon` = 0.2 when unset). */
  cap?: number;
  /** Default `verl`: two-sided clip with the ±20 clamp; `rllm`: the same (+ rLLM's `clip_frac`); `trl`: upper cap, no clamp (+ TRL's `cispo_clip_ratio`). */
  compat?: Compat;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function cispoSettings(o: CispoOptions = {}) {
  const clipLow = o.clipLow ?? 0.2;
  return { compat: o.compat ?? 'verl', clipLow, clipHigh: o.clipHigh ?? clipLow, cap: o.cap ?? 5.0 };
}

export function cispoLoss(ctx: PolicyLossContext, options: CispoOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'cispo', { old: true });
  const s = cispoSettings(options);
  const trl = s.compat === 'trl';
  const lo = 1 - s.clipLow;
  const hi = 1 + s.clipHigh;
  const cap = s.cap;
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const clipped = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  const trlClipped = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const [r] = clampedRatio(c.det[i] - c.old[i], trl ? Infinity : LOG_RATIO_CLAMP);
    const weight = trl ? Math.min(r, cap) : clip(r, lo, hi);
    loss[i] = -weight * a * c.logp[i];
    dlogp[i] = -weight * a;
    clipped[i] = weight !== r ? 1 : 0;
    negKl[i] = -Math.min(Math.max(c.logp[i] - c.old[i], -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
    trlClipped[i] = r > cap && a > 0 ? 1 : 0;
  }
  const metrics: Record<string, number> = {
    pg_clipfrac: verlMean(clipped, c.mask),
    pg_clipfrac_lower: 0,
    ppo_kl: verlMean(negKl, c.mask),
  };
  if (trl) metrics.cispo_clip_ratio = exactMean(trlClipped, c.mask);
  if (options.compat === 'rllm') metrics.clip_frac = exactMean(clipped, c.mask);
  return localResult(loss, dlogp, metrics);
}
