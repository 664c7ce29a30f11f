/**
 * RLOO (leave-one-out baseline): `a_i = r_i − mean_{j≠i} r_j = n/(n−1)·(r_i − μ)` for n > 1.
 *
 * An outcome estimator: one scalar per sequence. Not TRL's KL-in-reward penalty (that belongs to
 * the reward, before this). References (rl-formulas.md §3.2): verl `compute_rloo_outcome_advantage`
 * (the loop form, the `rloo` estimator; a singleton keeps its raw score, as in rLLM), verl
 * `compute_rloo_vectorized_outcome_advantage` and TRL `RLOOTrainer` (a singleton gets 0), TRL
 * `normalize_advantages` (batch whitening, unbiased std, + 1e-4).
 */
import type { Compat } from '../compat';
import { groupScores, meanOf, outcome, range, stdOf, type OutcomeAdvantages } from './groups';

export interface RlooOptions {
  /** Framework whose conventions fill the options left unset. Default `'verl'`. */
  compat?: Compat;
  /** A group of one member: `'raw'` keeps `r` (verl loop `rloo`, rLLM), `'zero'` gives 0 (verl `rloo_vectorized`, TRL). Default: verl/rLLM `'raw'`, TRL `'zero'`. */
  singleton?: 'raw' | 'zero';
  /** Whiten over the batch afterwards, `(a − mean)/(std_unbiased + 1e-4)` (TRL `normalize_advantages`). Default `false` (verl, rLLM, TRL's default). */
  normalize?: boolean;
}

/** RLOO advantages of `scores`, grouped by `groups`. */
export function rlooAdvantages(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: RlooOptions = {},
): OutcomeAdvantages {
  const compat = options.compat ?? 'verl';
  if (!['verl', 'trl', 'rllm'].includes(compat)) throw new Error(`rloo: compat = ${JSON.stringify(compat)}: expected "verl", "trl" or "rllm"`);
  const singleton = options.singleton ?? (compat === 'trl' ? 'zero' : 'raw');
  const g = groupScores(scores, groups);
  const adv = new Float64Array(scores.length);
  g.members.forEach((m, k) => {
    const n = m.length;
    if (n === 1) {
      adv[m[0]] = singleton === 'raw' ? scores[m[0]] : 0;
      return;
    }
    if (g.zeroStd[k]) return; // all equal: exactly zero
    let sum = 0;
    for (const i of m) sum += scores[i];
    for (const i of m) adv[i] = scores[i] - (sum - scores[i]) / (n - 1);
  });
  if (options.normalize) {
    const all = range(adv.length);
    const mean = meanOf(adv, all);
    const std = stdOf(adv, all, mean, 'unbiased');
    for (let i = 0; i < adv.length; i++) adv[i] = (adv[i] - mean) / (std + 1e-4);
  }
  return outcome(adv, g);
}
