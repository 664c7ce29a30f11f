/**
 * Advantage estimators: the outcome (per-sequence) ones, GRPO, RLOO, REINFORCE++-baseline, GPG and
 * GRPO's pass@k, one
 * dispatcher over them for pack, and masked GAE for PPO. Each module cites its verl/TRL/rLLM
 * reference; docs/rl-formulas.md §3 has the formulas and §11 the disagreements `compat` selects.
 */
import type { Compat } from '../compat';
import { outcome, type AdvantageDetails, type OutcomeAdvantages } from './groups';
import { gpgDetails } from './gpg';
import { grpoDetails, type GrpoOptions } from './grpo';
import { grpoPasskDetails } from './grpo-passk';
import { reinforcePlusPlusDetails, type ReinforcePlusPlusOptions } from './reinforce-pp';
import { rlooDetails, type RlooOptions } from './rloo';

export type { AdvantageDetails, GroupDetail, OutcomeAdvantages } from './groups';
export { grpoAdvantages, grpoDetails, grpoSettings, type GrpoOptions } from './grpo';
export { rlooAdvantages, rlooDetails, rlooSettings, type RlooOptions } from './rloo';
export {
  reinforcePlusPlusBaseline,
  reinforcePlusPlusDetails,
  reinforcePlusPlusSettings,
  type ReinforcePlusPlusOptions,
} from './reinforce-pp';
export { gpgAdvantages, gpgDetails } from './gpg';
export { grpoPasskAdvantages, grpoPasskDetails, grpoPasskSettings, type GrpoPasskOptions } from './grpo-passk';
export { gae, type GaeInput, type GaeOptions, type GaeResult } from './gae';
export { verlMaskedMean, verlWhitenStats, whitenWith, VERL_EPS, type WhitenStats } from './whiten';

/** The outcome estimators pack can run. */
export type OutcomeEstimator = 'grpo' | 'rloo' | 'reinforce++-baseline' | 'gpg' | 'grpo-passk';
export const OUTCOME_ESTIMATORS: readonly OutcomeEstimator[] = [
  'grpo',
  'rloo',
  'reinforce++-baseline',
  'gpg',
  'grpo-passk',
];

/** Every outcome estimator's options in one object; each reads its own fields (and `compat`). */
export type AdvantageOptions = GrpoOptions & RlooOptions & ReinforcePlusPlusOptions & { compat?: Compat };

/** Runs `estimator` on per-sequence `scores`; `lengths` (trainable tokens per sequence) feeds verl's REINFORCE++-baseline. */
export function outcomeAdvantages(
  estimator: OutcomeEstimator,
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: AdvantageOptions = {},
): OutcomeAdvantages {
  const d = outcomeAdvantageDetails(estimator, scores, groups, lengths, options);
  return outcome(d.advantages, d.grouping);
}

/** `outcomeAdvantages` with the estimator's working (resolved settings, per-group baseline and std, batch normalisation): what a view shows. */
export function outcomeAdvantageDetails(
  estimator: OutcomeEstimator,
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: AdvantageOptions = {},
): AdvantageDetails {
  switch (estimator) {
    case 'grpo':
      return grpoDetails(scores, groups, options);
    case 'rloo':
      return rlooDetails(scores, groups, options);
    case 'reinforce++-baseline':
      return reinforcePlusPlusDetails(scores, groups, lengths, options);
    case 'gpg':
      return gpgDetails(scores, groups);
    case 'grpo-passk':
      // pass@k reads only `scale` ('group' or 'none'; the run option allows no other).
      return grpoPasskDetails(scores, groups, { scale: options.scale === 'none' ? 'none' : 'group' });
    default:
      throw new Error(`estimator = ${JSON.stringify(estimator)}: expected one of ${OUTCOME_ESTIMATORS.join(', ')}`);
  }
}

/** verl's broadcast of per-sequence advantages in its own layout (one sequence per row): `a_b · m[b, t]`. */
export function broadcastAdvantages(
  perSequence: ArrayLike<number>,
  mask: ArrayLike<number>,
  rows: number,
  width: number,
): Float64Array {
  if (perSequence.length !== rows)
    throw new Error(`broadcastAdvantages: ${perSequence.length} advantages for ${rows} rows`);
  if (mask.length !== rows * width)
    throw new Error(`broadcastAdvantages: mask has ${mask.length} entries, expected ${rows} × ${width}`);
  const out = new Float64Array(rows * width);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < width; c++) out[r * width + c] = perSequence[r] * mask[r * width + c];
  return out;
}
