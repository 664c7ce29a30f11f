/**
 * `reinforce`: the plain policy gradient, l = −A·logp and g = −A. Any importance weight is a
 * behavior correction the objective multiplies in (verl's bypass `loss_type="reinforce"`:
 * −A·logp·w). Not the aggregation. References: verl `compute_policy_loss_gpg` (`gpg`) and
 * `compute_policy_loss_reinforce`, rLLM `reinforce`; docs/rl-formulas.md §5.4.
 */
import { checkContext, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

/** No options: verl `gpg` and rLLM `reinforce` agree (TRL has no such loss). */
export type ReinforceOptions = Record<string, never>;

export function reinforceLoss(ctx: PolicyLossContext, _options: ReinforceOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'reinforce');
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    loss[i] = -c.adv[i] * c.logp[i];
    dlogp[i] = -c.adv[i];
    negKl[i] = c.old[i] - c.logp[i];
  }
  // verl `compute_policy_loss_reinforce` reports ppo_kl = masked_mean(old − logp), unclamped; `gpg` reports nothing.
  return localResult(loss, dlogp, ctx.oldLogp ? { ppo_kl: verlMean(negKl, c.mask) } : {});
}
