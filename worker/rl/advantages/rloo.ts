/**
 * RLOO (leave-one-out baseline): `a_i = r_i − mean_{j≠i} r_j = n/(n−1)·(r_i − μ)` for n > 1.
 *
 * An outcome estimator: one scalar per sequence. Not TRL's KL-in-reward penalty (that belongs to
 * the reward, before this). References (docs/rl-formulas.md §3.2): verl `compute_rloo_outcome_advantage`
 * (the loop form, the `rloo` estimator; a singleton keeps its raw score, as in rLLM), verl
 * `compute_rloo_vectorized_outcome_advantage` and TRL `RLOOTrainer` (a singleton gets 0), TRL
 * `normalize_advantages` (batch whitening, unbiased std, + 1e-4).
 */
import type { Compat } from '../compat';
import {
  groupScores,
  meanOf,
  outcome,
  range,
  stdOf,
  type AdvantageDetails,
  type GroupDetail,
  type OutcomeAdvantages,
} from './groups';

export interface RlooOptions {
  /** Framework whose conventions fill the options left unset. Default `'verl'`. */
  compat?: Compat;
  /** A group of one member: `'raw'` keeps `r` (verl loop `rloo`, rLLM), `'zero'` gives 0 (verl `rloo_vectorized`, TRL). Default: verl/rLLM `'raw'`, TRL `'zero'`. */
  singleton?: 'raw' | 'zero';
  /** Whiten over the batch afterwards, `(a − mean)/(std_unbiased + 1e-4)` (TRL `normalize_advantages`). Default `false` (verl, rLLM, TRL's default). */
  normalize?: boolean;
}

/** The options with every default filled in under their `compat` (what the estimator computes with; the exports compare these). */
export function rlooSettings(options: RlooOptions = {}) {
  const compat = options.compat ?? 'verl';
  return {
    compat,
    singleton: options.singleton ?? (compat === 'trl' ? 'zero' : 'raw'),
    normalize: options.normalize ?? false,
  };
}

/** RLOO advantages of `scores`, grouped by `groups`. */
export function rlooAdvantages(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: RlooOptions = {},
): OutcomeAdvantages {
  const d = rlooDetails(scores, groups, options);
  return outcome(d.advantages, d.grouping);
}

/** `rlooAdvantages` with its working: per member the leave-one-out baseline, and the batch whitening if on. */
export function rlooDetails(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: RlooOptions = {},
): AdvantageDetails {
  const { compat, singleton, normalize } = rlooSettings(options);
  if (!['verl', 'trl', 'rllm'].includes(compat))
    throw new Error(`rloo: compat = ${JSON.stringify(compat)}: expected "verl", "trl" or "rllm"`);
  const g = groupScores(scores, groups);
  const adv = new Float64Array(scores.length);
  const baselines = new Float64Array(scores.length);
  const details: GroupDetail[] = g.members.map((m, k) => {
    const n = m.length;
    if (n === 1) {
      // 'raw' keeps r (baseline 0); 'zero' gives 0 (baseline r).
      baselines[m[0]] = singleton === 'raw' ? 0 : scores[m[0]];
      adv[m[0]] = singleton === 'raw' ? scores[m[0]] : 0;
      return { members: m, baseline: baselines[m[0]], std: null, divisor: null, zero: singleton === 'zero' };
    }
    let sum = 0;
    for (const i of m) sum += scores[i];
    for (const i of m) {
      baselines[i] = (sum - scores[i]) / (n - 1);
      if (!g.zeroStd[k]) adv[i] = scores[i] - baselines[i]; // all equal: exactly zero
    }
    return { members: m, baseline: null, std: null, divisor: null, zero: g.zeroStd[k] };
  });
  let batch: AdvantageDetails['batch'] = null;
  if (normalize) {
    const all = range(adv.length);
    const mean = meanOf(adv, all);
    const std = stdOf(adv, all, mean, 'unbiased');
    batch = { mean, std, divisor: std + 1e-4 };
    for (let i = 0; i < adv.length; i++) adv[i] = (adv[i] - mean) / (std + 1e-4);
  }
  return {
    settings: { compat, singleton, normalize },
    baselines,
    groups: details,
    batch,
    advantages: adv,
    grouping: g,
  };
}
