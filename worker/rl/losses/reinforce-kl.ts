/**
 * `reinforce_kl`: IS-weighted REINFORCE plus backward/forward KL to the sampler (not a reference).
 *
 *   log_r = logp − behavior;  r = exp(clamp(log_r, ±20));  w = sg(r), optionally clamped
 *   l = −w·A·logp + b·KLb + f·KLf
 *   klApprox false: KLb = −logp, KLf = sg(r·log_r)·logp        → g = −wA − b + f·r·log_r
 *   klApprox true:  KLb = −log_r + r − 1, KLf = r·log_r − r + 1  → g = −wA + b(r′ − 1) + f(r′·log_r + r − r′)
 *                   with r′ = ∂r/∂logp = r·1[|log_r| ≤ 20]; inside the clamp g = −wA + b(r − 1) + f·r·log_r
 *
 * Not the aggregation (both KL terms share the policy term's). Reference: rLLM `reinforce_kl`
 * (PR #767 loss registry); docs/rl-formulas.md §5.7.
 */
import { activeStats, checkContext, clampedRatio, exactMean, LOG_RATIO_CLAMP } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface ReinforceKlOptions {
  /** b, the backward-KL coefficient. Default 0 (rLLM `bwd_kl_coef`). */
  bwdKlCoef?: number;
  /** f, the forward-KL coefficient. Default 0 (rLLM `fwd_kl_coef`). */
  fwdKlCoef?: number;
  /** Use Schulman's value estimators as the KL terms. Default false (rLLM `kl_approx`): score-function forms. */
  klApprox?: boolean;
  /** Lower bound of the detached PG weight. Default none (rLLM `ratio_clamp_min`). */
  ratioClampMin?: number;
  /** Upper bound of the detached PG weight. Default none (rLLM `ratio_clamp_max`). */
  ratioClampMax?: number;
}

export function reinforceKlLoss(ctx: PolicyLossContext, options: ReinforceKlOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'reinforce_kl', { behavior: true });
  const b = options.bwdKlCoef ?? 0;
  const f = options.fwdKlCoef ?? 0;
  const lo = options.ratioClampMin ?? -Infinity;
  const hi = options.ratioClampMax ?? Infinity;
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const bwd = new Float64Array(c.n);
  const fwd = new Float64Array(c.n);
  const ratio = new Float64Array(c.n);
  const clamped = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const [rDet] = clampedRatio(c.det[i] - c.behavior[i], LOG_RATIO_CLAMP);
    const logRDet = c.det[i] - c.behavior[i];
    const w = Math.min(Math.max(rDet, lo), hi);
    let value = -w * a * c.logp[i];
    let grad = -w * a;
    if (options.klApprox) {
      const logR = c.logp[i] - c.behavior[i];
      const [r, dr] = clampedRatio(logR, LOG_RATIO_CLAMP);
      value += b * (-logR + r - 1) + f * (r * logR - r + 1);
      grad += b * (dr - 1) + f * (dr * logR + r - dr);
    } else {
      value += -b * c.logp[i] + f * rDet * logRDet * c.logp[i];
      grad += -b + f * rDet * logRDet;
    }
    loss[i] = value;
    dlogp[i] = grad;
    bwd[i] = -logRDet + rDet - 1;
    fwd[i] = rDet * logRDet - rDet + 1;
    ratio[i] = rDet;
    clamped[i] = w !== rDet ? 1 : 0;
  }
  const stats = activeStats(ratio, c.mask);
  return localResult(loss, dlogp, {
    kl_bwd: exactMean(bwd, c.mask),
    kl_fwd: exactMean(fwd, c.mask),
    ratio_mean: exactMean(ratio, c.mask),
    ratio_min: stats.min,
    ratio_max: stats.max,
    clamp_frac: exactMean(clamped, c.mask),
  });
}
