/**
 * GPG's advantage (Group Policy Gradient, Chu et al. 2025): the group-centred score scaled up by
 * the share of the batch that scored at all, `a_i = α·(r_i − μ_g)` with `α = B / max(#{j : r_j ≠ 0}, 1)`.
 *
 * An outcome estimator: one scalar per sequence. Reference: verl `compute_gpg_outcome_advantage`
 * (verl-project/verl 1dda039, `verl/trainer/ppo/core_algos.py`, `adv_estimator=gpg`),
 * docs/rl-formulas.md §3.5. B is the number of sequences the estimator is given (verl: the training
 * batch; here pack's trained sessions), the count is of non-zero *scores* (not advantages), μ is the
 * group mean (μ = 0 for a group of one, so it keeps α·r, as verl's GRPO), and there is no std
 * division (verl computes the group std and does not use it), and verl's `f_norm` divisor is left at
 * the 1 its trainer always passes. An all-equal group gets exactly 0. GPG's loss is `reinforce` (verl `gpg`). TRL has no such estimator.
 */
import {
  groupScores,
  meanOf,
  outcome,
  type AdvantageDetails,
  type GroupDetail,
  type OutcomeAdvantages,
} from './groups';

/** GPG has no options (verl's trainer passes none to it). */
export function gpgAdvantages(scores: ArrayLike<number>, groups: ArrayLike<string | number>): OutcomeAdvantages {
  const d = gpgDetails(scores, groups);
  return outcome(d.advantages, d.grouping);
}

/** `gpgAdvantages` with its working: per group μ, and α as the batch step's divisor (a = c / (1/α)). */
export function gpgDetails(scores: ArrayLike<number>, groups: ArrayLike<string | number>): AdvantageDetails {
  const g = groupScores(scores, groups);
  let nonzero = 0;
  for (let i = 0; i < scores.length; i++) if (scores[i] !== 0) nonzero++;
  const alpha = scores.length / Math.max(nonzero, 1);
  const adv = new Float64Array(scores.length);
  const baselines = new Float64Array(scores.length);
  const details: GroupDetail[] = g.members.map((m, k) => {
    const mean = m.length === 1 ? 0 : meanOf(scores, m);
    const zero = m.length > 1 && g.zeroStd[k];
    for (const i of m) {
      baselines[i] = mean;
      if (!zero) adv[i] = alpha * (scores[i] - mean);
    }
    return { members: m, baseline: mean, std: null, divisor: null, zero };
  });
  return {
    settings: { alpha },
    baselines,
    groups: details,
    batch: { mean: 0, std: 0, divisor: 1 / alpha },
    advantages: adv,
    grouping: g,
  };
}
