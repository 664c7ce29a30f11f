/**
 * GRPO's pass@k advantage: only each group's best sample learns, by its margin over the runner-up,
 * `a_best = (r_max − r_2nd)/(σ_g + ε)` (or unscaled), every other sample 0.
 *
 * An outcome estimator: one scalar per sequence. Reference: verl `compute_grpo_passk_outcome_advantage`
 * (verl-project/verl 1dda039, `verl/trainer/ppo/core_algos.py`, `adv_estimator=grpo_passk`; Chen et
 * al. 2025, arXiv:2503.19595), docs/rl-formulas.md §3.6. σ is the group's unbiased std (torch.std),
 * ε = 1e-6, the scaling verl's `norm_adv_by_std_in_grpo`. When the top two tie the margin is 0, so
 * which of them torch.topk names does not matter; an all-equal group is exactly 0. Deviation: verl
 * raises on a group of one; here its sample gets 0 (there is no runner-up to beat), since a group
 * shrinks to one when truncation masks its other members. TRL has no such estimator.
 */
import {
  groupScores,
  meanOf,
  outcome,
  stdOf,
  type AdvantageDetails,
  type GroupDetail,
  type OutcomeAdvantages,
} from './groups';

export interface GrpoPasskOptions {
  /** `'group'` divides the margin by the group's std + 1e-6 (verl `norm_adv_by_std_in_grpo=True`), `'none'` not. Default `'group'`. */
  scale?: 'group' | 'none';
}

/** verl's ε (the function's `epsilon=1e-6`, which its trainer does not override). */
const EPSILON = 1e-6;

/** The options with their defaults filled in (what the estimator computes with; the exports compare these). */
export function grpoPasskSettings(options: GrpoPasskOptions = {}) {
  return { scale: options.scale ?? 'group', epsilon: EPSILON };
}

export function grpoPasskAdvantages(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: GrpoPasskOptions = {},
): OutcomeAdvantages {
  const d = grpoPasskDetails(scores, groups, options);
  return outcome(d.advantages, d.grouping);
}

/** `grpoPasskAdvantages` with its working: per group the runner-up's score as the best sample's baseline, and the std divided by. */
export function grpoPasskDetails(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: GrpoPasskOptions = {},
): AdvantageDetails {
  const { scale, epsilon } = grpoPasskSettings(options);
  if (scale !== 'group' && scale !== 'none')
    throw new Error(`grpo_passk: scale = ${JSON.stringify(scale)}: expected "group" or "none"`);
  const g = groupScores(scores, groups);
  const adv = new Float64Array(scores.length);
  const baselines = new Float64Array(scores.length);
  const details: GroupDetail[] = g.members.map((m, k) => {
    if (m.length === 1) {
      baselines[m[0]] = scores[m[0]];
      return { members: m, baseline: null, std: null, divisor: null, zero: true };
    }
    // The first best in input order, and the largest of the others.
    let best = m[0];
    for (const i of m) if (scores[i] > scores[best]) best = i;
    let second = -Infinity;
    for (const i of m) if (i !== best && scores[i] > second) second = scores[i];
    const std = scale === 'group' ? stdOf(scores, m, meanOf(scores, m), 'unbiased') : null;
    for (const i of m) baselines[i] = i === best ? second : scores[i];
    if (!g.zeroStd[k]) {
      const margin = scores[best] - second;
      adv[best] = std === null ? margin : margin / (std + epsilon);
    }
    return { members: m, baseline: null, std, divisor: std === null ? null : std + epsilon, zero: g.zeroStd[k] };
  });
  return { settings: { scale, epsilon }, baselines, groups: details, batch: null, advantages: adv, grouping: g };
}
