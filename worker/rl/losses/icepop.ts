/**
 * `icepop`: REINFORCE weighted by the detached train/sampler ratio inside a band, zero outside.
 *
 *   d = exp(sg(logp) − behavior)   (no clamp; against the sampler, not old)
 *   keep = α ≤ d ≤ β;  l = −A·d·logp·keep;  g = −A·d·keep
 *
 * With an infinite band (α = 0, β = ∞) this is REINFORCE times the IS weight d. Not verl's
 * IcePop, which is a behavior-correction weight on another loss (see the corrections), and not
 * the aggregation. Reference: rLLM `icepop` (arXiv:2510.18855); docs/rl-formulas.md §5.6, §11.10.
 */
import { activeStats, checkContext, exactMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface IcepopOptions {
  /** Lower edge α of the kept band (inclusive). Default 0.5 (rLLM `icepop_alpha`). */
  alpha?: number;
  /** Upper edge β of the kept band (inclusive); Infinity allowed. Default 5.0 (rLLM `icepop_beta`). */
  beta?: number;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function icepopSettings(o: IcepopOptions = {}) {
  return { alpha: o.alpha ?? 0.5, beta: o.beta ?? 5.0 };
}

export function icepopLoss(ctx: PolicyLossContext, options: IcepopOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'icepop', { behavior: true });
  const { alpha, beta } = icepopSettings(options);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const dropped = new Float64Array(c.n);
  const ratio = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const d = Math.exp(c.det[i] - c.behavior[i]);
    const keep = d >= alpha && d <= beta ? 1 : 0;
    loss[i] = keep ? -a * d * c.logp[i] : 0;
    dlogp[i] = keep ? -a * d : 0;
    dropped[i] = 1 - keep;
    ratio[i] = d;
  }
  const stats = activeStats(ratio, c.mask);
  return localResult(loss, dlogp, {
    mask_frac: exactMean(dropped, c.mask),
    ratio_mean: stats.mean,
    ratio_min: stats.min,
    ratio_max: stats.max,
  });
}
