/**
 * `kl_cov`: the unclipped policy-gradient surrogate plus a KL penalty |logp − old| on the few
 * tokens whose advantage and log-probability covary most (KL-Cov, "The Entropy Mechanism of RL
 * for Reasoning LMs", arXiv 2505.22617).
 *
 *   d = logp − old (no clamp);  r = exp(d)
 *   cov_t = (A_t − mean A)·(sg logp_t − mean sg logp)   (exact means over the masked tokens)
 *   K = the k = max(⌊ratio·Σm⌋, 1) masked tokens of largest cov (ties: the earlier token first)
 *   l = −A·r + [t ∈ K]·coef·|d|,   g = −A·r + [t ∈ K]·coef·sign(d)   (torch's |x| has gradient 0 at 0)
 *
 * There is no ratio clip at all (verl's kl_cov keeps only the penalty). cov only selects, so it
 * carries no gradient. The batch is what the objective passes (a mini-batch), as verl's is a micro-batch.
 *
 * Reference: verl `compute_policy_loss_kl_cov` (verl-project/verl 1dda039,
 * verl/trainer/ppo/core_algos.py, `@register_policy_loss("kl_cov")`), after PRIME-RL
 * Entropy-Mechanism-of-RL. TRL has no such loss. docs/rl-formulas.md §5.9.
 */
import { checkContext, exactMean, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface KlCovOptions {
  /** Share of the batch's tokens that get the penalty, at least one (verl `kl_cov_ratio`). Default 2e-4. */
  ratio?: number;
  /** Coefficient of |logp − old| on those tokens (verl `ppo_kl_coef`: 0.1 in its config; the code's fallback is 1). Default 0.1. */
  coef?: number;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function klCovSettings(o: KlCovOptions = {}) {
  return { ratio: o.ratio ?? 2e-4, coef: o.coef ?? 0.1 };
}

export function klCovLoss(ctx: PolicyLossContext, options: KlCovOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'kl_cov', { old: true });
  const { ratio, coef } = klCovSettings(options);
  if (!(ratio > 0)) throw new Error(`kl_cov: ratio = ${ratio}: expected > 0 (verl asserts kl_cov_ratio > 0)`);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const absKl = new Float64Array(c.n);
  const meanA = exactMean(c.adv, c.mask);
  const meanL = exactMean(c.det, c.mask);
  const valid: number[] = [];
  const cov = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const d = c.logp[i] - c.old[i];
    const r = Math.exp(d);
    loss[i] = -c.adv[i] * r;
    dlogp[i] = -c.adv[i] * r;
    absKl[i] = Math.abs(d);
    cov[i] = (c.adv[i] - meanA) * (c.det[i] - meanL);
    valid.push(i);
  }
  if (valid.length > 0) {
    const k = Math.max(1, Math.floor(valid.length * ratio));
    const top = [...valid].sort((x, y) => cov[y] - cov[x] || x - y).slice(0, k);
    for (const i of top) {
      const d = c.logp[i] - c.old[i];
      loss[i] += coef * Math.abs(d);
      dlogp[i] += coef * Math.sign(d);
    }
  }
  // verl reports ppo_kl as the masked mean of |logp − old| for this loss.
  return localResult(loss, dlogp, { ppo_kl: verlMean(absKl, c.mask) });
}
