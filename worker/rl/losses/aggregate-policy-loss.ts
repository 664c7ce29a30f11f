/**
 * Aggregating a policy-loss result: the first half of an objective. With aggregation weights w
 * (aggregate.ts) and detached behavior-correction weights c (1 when absent):
 *
 *   L    = Σ_t w_t c_t l_t + Σ_aux coefficient · Σ_t v_t l_aux,t      (v: the same mode over the aux mask)
 *   ∂L/∂logp = result.backward(w ⊙ c) + Σ_aux coefficient · v ⊙ g_aux
 *
 * `grpoObjective` (objectives/grpo.ts) adds β × a KL term aggregated on its own (kl.ts, then
 * `aggregate`), sums the `dlogp`s and namespaces the metrics. Not the corrections themselves. Reference: docs/rl-formulas.md §9.1
 * (grad_t = w_agg,t · w_t · g_pg,t + β · w_kl,t · g_kl,t), verl `compute_policy_loss_*` with
 * `rollout_is_weights`.
 */
import { aggregationWeights, weightedSum, type AggregationInput, type AggregationOptions } from '../aggregate';
import { checkFinite, checkTable } from '../table';
import type { PolicyLossResult } from './types';

export interface AggregatedPolicyLoss {
  /** The policy term plus every auxiliary term. */
  loss: number;
  /** Σ w c l, the policy term alone. */
  policyLoss: number;
  /** Each auxiliary term's coefficient × aggregated value, by name (echo: `echo`). */
  auxiliaryLoss: Record<string, number>;
  /** ∂loss/∂logp, `[rows, width]`. */
  dlogp: Float64Array;
  /** w ⊙ c, the effective per-token weight of the policy term. */
  weights: Float64Array;
}

export function aggregatePolicyLoss(
  result: PolicyLossResult,
  input: AggregationInput,
  options: AggregationOptions = {},
  correctionWeights?: ArrayLike<number>,
): AggregatedPolicyLoss {
  const weights = aggregationWeights(input, options);
  if (correctionWeights) {
    checkTable('correctionWeights', correctionWeights, input.rows, input.width);
    checkFinite('correctionWeights', correctionWeights, input.width, input.mask);
    for (let i = 0; i < weights.length; i++) weights[i] *= correctionWeights[i];
  }
  const policyLoss = weightedSum(weights, result.loss);
  const dlogp = result.backward(weights);
  const auxiliaryLoss: Record<string, number> = {};
  let loss = policyLoss;
  for (const term of result.auxiliary) {
    const v = aggregationWeights({ ...input, mask: term.mask }, options);
    const value = term.coefficient * weightedSum(v, term.loss);
    auxiliaryLoss[term.name] = value;
    loss += value;
    for (let i = 0; i < dlogp.length; i++) if (v[i] !== 0) dlogp[i] += term.coefficient * v[i] * term.dlogp[i];
  }
  return { loss, policyLoss, auxiliaryLoss, dlogp, weights };
}
