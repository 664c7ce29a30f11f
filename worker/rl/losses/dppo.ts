/**
 * `dppo_tv` and `dppo_kl`: REINFORCE with a truncated, detached ratio and a binary trust-region
 * mask that drops a token only when the update moves it away from the old policy too far.
 *
 *   tr = sg(min(r, C)),  r = exp(clamp(logp − old, ±20));  p = e^{sg(logp)}, q = e^{old}
 *   TV: valid = A>0 ? p−q ≤ δ_high : p−q ≥ −δ_low
 *   KL (verl): bkl = q(old − logp) + (1−q)·ln((1−q+1e-8)/(1−p+1e-8));
 *              valid = A>0 ? (bkl ≤ δ_high ∨ p ≤ q) : (bkl ≤ δ_low ∨ p ≥ q)
 *   KL (rLLM): p, q clamped to [1e-6, 1−1e-6], d = q ln(q/p) + (1−q) ln((1−q)/(1−p));
 *              valid = ¬(moving away ∧ d > δ), moving away = A>0 ? p>q : p<q
 *   l = −A·tr·logp·valid,  g = −A·tr·valid
 *
 * Not the aggregation (verl's recipe uses seq-mean-token-sum-norm). References: verl
 * `compute_policy_loss_dppo_tv` / `_dppo_kl`, rLLM `dppo_tv` / `dppo_kl`; docs/rl-formulas.md §5.5, §11.8.
 */
import { checkContext, clampedRatio, exactMean, LOG_RATIO_CLAMP, verlMean } from './math';
import type { Compat } from '../compat';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface DppoOptions {
  /** δ_low. Default 0.2 (verl `clip_ratio_low` fallback; rLLM `delta_low`/`delta`/`eps_clip`). verl's recipe: 0.15 (TV), 0.05 (KL). */
  deltaLow?: number;
  /** δ_high. Default `deltaLow`. rLLM's KL variant has one δ: keep the two equal to match it. */
  deltaHigh?: number;
  /**
   * Truncation C of the detached ratio; Infinity allowed. Default 3.0 under `verl` (the effective
   * `clip_ratio_c`: `ActorConfig` has the field, so `config.get(..., 20.0)` returns 3.0; verl's
   * recipe sets 1e4); Infinity under `rllm` (rLLM drops the truncation).
   */
  truncation?: number;
  /** Default `verl`. `rllm`: C = ∞, rLLM's clamped binary KL (`dppo_kl`), and its `mask_frac` metric. */
  compat?: Compat;
}

/** Whether a token keeps its gradient, from the advantage and the log-probs lp = sg(logp), lq = old. */
type Valid = (a: number, lp: number, lq: number, dLow: number, dHigh: number, rllm: boolean) => boolean;

const tvValid: Valid = (a, lp, lq, dLow, dHigh) => {
  const diff = Math.exp(lp) - Math.exp(lq);
  return a > 0 ? diff <= dHigh : diff >= -dLow;
};

const klValid: Valid = (a, lp, lq, dLow, dHigh, rllm) => {
  const p = Math.exp(lp);
  const q = Math.exp(lq);
  if (rllm) {
    const pc = Math.min(Math.max(p, 1e-6), 1 - 1e-6);
    const qc = Math.min(Math.max(q, 1e-6), 1 - 1e-6);
    const d = qc * Math.log(qc / pc) + (1 - qc) * Math.log((1 - qc) / (1 - pc));
    const away = a > 0 ? pc > qc : pc < qc;
    return !(away && d > (a > 0 ? dHigh : dLow));
  }
  const bkl = q * (lq - lp) + (1 - q) * Math.log((1 - q + 1e-8) / (1 - p + 1e-8));
  return a > 0 ? bkl <= dHigh || p <= q : bkl <= dLow || p >= q;
};

/** dppo's result: the registry's, plus the trust-region mask and the truncated ratio it applied. */
export interface DppoResult extends PolicyLossResult {
  /** Per token 1 where the trust region keeps the token's gradient (verl `valid_mask`), 0 where it drops it and off the mask, `[rows, width]`. */
  valid: Float64Array;
  /** Per token tr = min(r, C), the detached ratio that scales the gradient (verl `truncated_ratio`), `[rows, width]`, 0 off the mask. */
  truncatedRatio: Float64Array;
}

/** The options with every default filled in under their `compat` (what the loss computes with; the exports compare these). */
export function dppoSettings(o: DppoOptions = {}) {
  const compat = o.compat ?? 'verl';
  const deltaLow = o.deltaLow ?? 0.2;
  return {
    compat,
    deltaLow,
    deltaHigh: o.deltaHigh ?? deltaLow,
    truncation: o.truncation ?? (compat === 'rllm' ? Infinity : 3.0),
  };
}

function dppo(name: string, valid: Valid, ctx: PolicyLossContext, options: DppoOptions): DppoResult {
  const c = checkContext(ctx, name, { old: true });
  const { compat, deltaLow: dLow, deltaHigh: dHigh, truncation: C } = dppoSettings(options);
  const rllm = compat === 'rllm';
  if (!(C > 0)) throw new Error(`${name}: truncation = ${C}: expected > 0 (Infinity for none)`);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const dropped = new Float64Array(c.n);
  const truncated = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  const validMask = new Float64Array(c.n);
  const truncatedRatio = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const [r] = clampedRatio(c.det[i] - c.old[i], LOG_RATIO_CLAMP);
    const keep = valid(a, c.det[i], c.old[i], dLow, dHigh, rllm) ? 1 : 0;
    const tr = Math.min(r, C);
    loss[i] = keep ? -a * tr * c.logp[i] : 0;
    dlogp[i] = keep ? -a * tr : 0;
    dropped[i] = 1 - keep;
    validMask[i] = keep;
    truncatedRatio[i] = tr;
    truncated[i] = r > C ? keep : 0;
    negKl[i] = -Math.min(Math.max(c.logp[i] - c.old[i], -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
  }
  const metrics: Record<string, number> = {
    pg_clipfrac: verlMean(dropped, c.mask),
    pg_clipfrac_lower: verlMean(truncated, c.mask),
    ppo_kl: verlMean(negKl, c.mask),
  };
  if (rllm) metrics.mask_frac = exactMean(dropped, c.mask);
  return { ...localResult(loss, dlogp, metrics), valid: validMask, truncatedRatio };
}

export function dppoTvLoss(ctx: PolicyLossContext, options: DppoOptions = {}): DppoResult {
  return dppo('dppo_tv', tvValid, ctx, options);
}

export function dppoKlLoss(ctx: PolicyLossContext, options: DppoOptions = {}): DppoResult {
  return dppo('dppo_kl', klValid, ctx, options);
}
