/**
 * `dro`: Direct Reward Optimization's token loss, a policy gradient with a quadratic penalty on
 * the log-ratio to the old policy.
 *
 *   d = logp − old (no clamp);  l = −(A·logp − ½β·d²);  g = −A + β·d
 *
 * Like cispo's, the value contains logp itself and is not a surrogate value. Not the aggregation.
 * β has no default: verl refuses a missing or non-positive `dro_beta`, and so does this loss.
 *
 * Reference: verl `compute_policy_loss_dro` (verl-project/verl 1dda039,
 * verl/trainer/ppo/core_algos.py, `@register_policy_loss("dro")`; docs/algo/dro.md there; its test
 * tests/trainer/ppo/test_dynamic_policy_losses_on_cpu.py is reproduced in dro.test.ts). TRL has no
 * such loss_type. docs/rl-formulas.md §5.11.
 */
import { checkContext, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface DroOptions {
  /** β > 0, the weight of ½(logp − old)² (verl `policy_loss.dro_beta`, required there: no default). */
  beta: number;
}

/** The options checked (what the loss computes with; the exports compare these). */
export function droSettings(o: Partial<DroOptions> = {}) {
  const beta = o.beta;
  if (beta === undefined || !(beta > 0))
    throw new Error(`dro: beta = ${beta}: expected a number > 0 (verl: policy_loss.dro_beta must be positive)`);
  return { beta };
}

export function droLoss(ctx: PolicyLossContext, options?: DroOptions): PolicyLossResult {
  const c = checkContext(ctx, 'dro', { old: true });
  const { beta } = droSettings(options);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    const a = c.adv[i];
    const d = c.logp[i] - c.old[i];
    loss[i] = -(a * c.logp[i] - 0.5 * beta * d * d);
    dlogp[i] = -a + beta * d;
    negKl[i] = -d;
  }
  return localResult(loss, dlogp, { ppo_kl: verlMean(negKl, c.mask) });
}
