/**
 * Advantage estimators: the outcome (per-sequence) ones, GRPO, RLOO, REINFORCE++-baseline, GPG,
 * GRPO's pass@k and GDPO (on the reward's components), one
 * dispatcher over them for pack; masked GAE for PPO; and the per-token OTB (otb.ts), which needs the
 * trainer's scoring. Each module cites its verl/TRL/rLLM
 * reference; docs/rl-formulas.md §3 has the formulas and §11 the disagreements `compat` selects.
 */
import type { Compat } from '../compat';
import { outcome, type AdvantageDetails, type OutcomeAdvantages } from './groups';
import { gdpoDetails, type GdpoOptions } from './gdpo';
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
export { gdpoAdvantages, gdpoDetails, gdpoSettings, type GdpoOptions } from './gdpo';
export { grpoPasskAdvantages, grpoPasskDetails, grpoPasskSettings, type GrpoPasskOptions } from './grpo-passk';
export { gae, type GaeInput, type GaeOptions, type GaeResult } from './gae';
export { otbAdvantages, otbSettings, OTB_EPSILON, type OtbInput, type OtbOptions, type OtbResult } from './otb';
export { otbPacked, type OtbPackedInput, type OtbPackedResult } from './otb-packed';
export { verlMaskedMean, verlWhitenStats, whitenWith, VERL_EPS, type WhitenStats } from './whiten';

/** The outcome estimators pack can run. */
export type OutcomeEstimator = 'grpo' | 'rloo' | 'reinforce++-baseline' | 'gpg' | 'grpo-passk' | 'gdpo';
export const OUTCOME_ESTIMATORS: readonly OutcomeEstimator[] = [
  'grpo',
  'rloo',
  'reinforce++-baseline',
  'gpg',
  'grpo-passk',
  'gdpo',
];

/**
 * The per-token estimators: OTB aligned by response position (verl optimal_token_baseline) or by
 * action token (tir_optimal_token_baseline). They read the trainer's old log-probs and Σπ², so they
 * run after scoring (worker/train/otb.ts), not in pack.
 */
export type TokenEstimator = 'otb' | 'otb-tir';
export const TOKEN_ESTIMATORS: readonly TokenEstimator[] = ['otb', 'otb-tir'];

/** Every outcome estimator's options in one object; each reads its own fields (and `compat`). */
export type AdvantageOptions = GrpoOptions &
  RlooOptions &
  ReinforcePlusPlusOptions &
  Pick<GdpoOptions, 'weights'> & { compat?: Compat };

/** Per reward component, one value per sequence (`Session.components`): what GDPO reads instead of the scores. */
export type RewardParts = Readonly<Record<string, ArrayLike<number>>>;

/**
 * Runs `estimator` on per-sequence `scores`; `lengths` (trainable tokens per sequence) feeds verl's
 * REINFORCE++-baseline and GDPO's whitening; `parts` (the reward's components) feeds GDPO.
 */
export function outcomeAdvantages(
  estimator: OutcomeEstimator,
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: AdvantageOptions = {},
  parts?: RewardParts,
): OutcomeAdvantages {
  const d = outcomeAdvantageDetails(estimator, scores, groups, lengths, options, parts);
  return outcome(d.advantages, d.grouping);
}

/** `outcomeAdvantages` with the estimator's working (resolved settings, per-group baseline and std, batch normalisation): what a view shows. */
export function outcomeAdvantageDetails(
  estimator: OutcomeEstimator,
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: AdvantageOptions = {},
  parts?: RewardParts,
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
    case 'gdpo':
      if (!parts)
        throw new Error("estimator 'gdpo' reads the reward's components: pass parts, one array per component");
      // GDPO reads `scale` ('group' or 'none'; the run option allows no other), `weights` and `compat`.
      return gdpoDetails(parts, groups, lengths, {
        compat: options.compat,
        scale: options.scale === 'none' ? 'none' : 'group',
        weights: options.weights,
      });
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
