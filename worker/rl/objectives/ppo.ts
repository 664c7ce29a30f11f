/**
 * `ppoObjective`: train a policy and a critic together on one token mass (dew `PPOObjective`,
 * docs/rl-formulas.md §8.1, §9.2): the GRPO composition's policy terms (grpo.ts, same options) plus
 * `valueCoefficient` × verl's clipped value loss over the same mask and aggregation:
 *
 *   L = L_grpo + c_v · 0.5 · agg(max((v − R)², (clip(v, v_old ± ε_v) − R)²), mask')
 *
 * It returns both gradient seeds: `dlogp` for the policy's backward pass and `dvalues` for the
 * value head's. Returns R and the advantages come from `gae` (rollout targets, constants). verl
 * trains its critic with a separate loss and optimizer; the sum here is dew's. Not GAE.
 */
import { aggregationWeights } from '../aggregate';
import { valueLoss } from '../value-loss';
import {
  checkObjectiveInput,
  grpoObjective,
  objectiveMass,
  type GrpoObjectiveOptions,
  type GrpoObjectiveOutput,
} from './grpo';
import type { ObjectiveInput } from './types';

export interface PpoObjectiveInput extends ObjectiveInput {
  /** Critic predictions v of the state before each id (the value head), `[rows, width]`: the second differentiable input. */
  values: ArrayLike<number>;
  /** Critic values recorded at rollout (verl `values`), `[rows, width]`. */
  oldValues: ArrayLike<number>;
  /** Return targets R (`gae(...).returns`), `[rows, width]`. */
  returns: ArrayLike<number>;
}

export interface PpoObjectiveOptions extends GrpoObjectiveOptions {
  /** Weight c_v of the value loss. Default 0.5 (dew `value_coefficient`; verl has none: its critic has its own optimizer). */
  valueCoefficient?: number;
  /** Clip range ε_v around `oldValues`; Infinity for none. Default 0.2 (dew `value_clip`; verl `critic.cliprange_value` is 0.5). */
  valueClip?: number;
}

export interface PpoObjectiveOutput extends GrpoObjectiveOutput {
  /** ∂loss/∂values per token, `[rows, width]`: the seed of the value head's backward pass. */
  dvalues: Float64Array;
}

export function ppoObjective(input: PpoObjectiveInput, options: PpoObjectiveOptions = {}): PpoObjectiveOutput {
  const { valueCoefficient = 0.5, valueClip = 0.2, ...policyOptions } = options;
  if (!(valueCoefficient >= 0) || !Number.isFinite(valueCoefficient)) {
    throw new Error(`ppoObjective: valueCoefficient = ${valueCoefficient}: expected a finite number ≥ 0`);
  }
  checkObjectiveInput(input, { values: input.values, oldValues: input.oldValues, returns: input.returns });
  const policy = grpoObjective(input, policyOptions);
  const weights = aggregationWeights(objectiveMass(input, policy.mask, policyOptions), policyOptions.aggregation);
  const critic = valueLoss({
    rows: input.rows,
    width: input.width,
    values: input.values,
    oldValues: input.oldValues,
    returns: input.returns,
    responseMask: policy.mask,
    clip: valueClip,
    aggWeights: weights,
  });
  const dvalues = critic.dvalues.map((g) => valueCoefficient * g + 0); // + 0 turns −0 into 0
  const loss = policy.loss + valueCoefficient * critic.loss;
  const metrics = {
    ...policy.metrics,
    ...critic.metrics,
    'loss/value': valueCoefficient * critic.loss,
    'loss/total': loss,
  };
  return {
    loss,
    dlogp: policy.dlogp,
    dvalues,
    metrics,
    mask: policy.mask,
    correctionWeights: policy.correctionWeights,
    keep: policy.keep,
    ...(policy.entropy ? { entropy: policy.entropy } : {}),
  };
}
