/**
 * `sapo`: Soft Adaptive Policy Optimization, a smooth temperature-controlled gate on the ratio in
 * place of PPO's hard clip.
 *
 *   r = exp(clamp(logp − old, ±20))     (TRL: no clamp)
 *   τ = τ_pos where A > 0, τ_neg otherwise
 *   f(r) = σ(τ(r − 1))·4/τ;  l = −A·f(r)
 *   g = −A·4σ(1 − σ)·r,  σ = σ(τ(r − 1))   (0 outside the clamp)
 *
 * At r = 1 the gate's slope is 1, so an on-policy step has PPO's gradient −A; as τ → 0 the gate
 * becomes r + const (the unclipped surrogate); far off-policy the gradient decays like e^{−τ|r−1|}.
 * Not the aggregation: verl forces seq-mean-token-mean, TRL's `loss_type="sapo"` aggregates like its
 * `grpo` (each row's token mean, averaged over all rows); here the objective chooses. TRL can also
 * take r per sequence (`importance_sampling_level="sequence"`); this is the token-level form.
 *
 * References: verl `compute_policy_loss_sapo` (verl-project/verl 1dda039,
 * verl/trainer/ppo/core_algos.py, `@register_policy_loss("sapo")`); TRL `GRPOTrainer._compute_loss`
 * `loss_type == "sapo"` (huggingface/trl f2cd577, trl/trainer/grpo_trainer.py); arXiv 2511.20347.
 * docs/rl-formulas.md §5.10.
 */
import { checkContext, clampedRatio, LOG_RATIO_CLAMP, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface SapoOptions {
  /** τ_pos, the gate's temperature where A > 0 (verl `tau_pos`, TRL `sapo_temperature_pos`). Default 1.0, both. */
  tauPos?: number;
  /** τ_neg, where A ≤ 0 (verl `tau_neg`, TRL `sapo_temperature_neg`). Default 1.05, both. */
  tauNeg?: number;
  /** Default `verl`: logp − old clamped to ±20 before exp; `trl`: no clamp. */
  compat?: 'verl' | 'trl';
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function sapoSettings(o: SapoOptions = {}) {
  const compat = o.compat ?? 'verl';
  return {
    compat,
    tauPos: o.tauPos ?? 1.0,
    tauNeg: o.tauNeg ?? 1.05,
    logRatioClamp: compat === 'trl' ? Infinity : LOG_RATIO_CLAMP,
  };
}

const sigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));

export function sapoLoss(ctx: PolicyLossContext, options: SapoOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'sapo', { old: true });
  const { tauPos, tauNeg, logRatioClamp: limit } = sapoSettings(options);
  for (const [name, tau] of [
    ['tauPos', tauPos],
    ['tauNeg', tauNeg],
  ] as const)
    if (!(tau > 0)) throw new Error(`sapo: ${name} = ${tau}: expected > 0 (the gate divides by τ)`);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const d = c.logp[i] - c.old[i];
    const [r, dr] = clampedRatio(d, limit);
    const tau = a > 0 ? tauPos : tauNeg;
    const s = sigmoid(tau * (r - 1));
    loss[i] = (-a * s * 4) / tau;
    dlogp[i] = -a * 4 * s * (1 - s) * dr;
    negKl[i] = -Math.min(Math.max(d, -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
  }
  // verl reports zero clip fractions (SAPO does not clip) and the clamped ppo_kl.
  return localResult(loss, dlogp, { pg_clipfrac: 0, pg_clipfrac_lower: 0, ppo_kl: verlMean(negKl, c.mask) });
}
