/**
 * REINFORCE++-baseline: subtract the group mean, then normalise across the whole batch.
 *
 * An outcome estimator: one scalar per sequence (constant over its tokens). The two references
 * differ (rl-formulas.md §3.3, §11.2):
 * - verl `compute_reinforce_plus_plus_baseline_outcome_advantage` (default): `c_i = r_i − μ_g`
 *   (μ = 0 for a singleton), tiled over the tokens and `masked_whiten`ed over all trainable tokens
 *   of the batch, so the statistics are token-weighted (a sequence counts `lengths[i]` times),
 *   unbiased, and the result is re-centred. A sequence with no trainable token gets 0 (× mask).
 *   One trainable token in the batch is refused (verl raises); none gives all zeros (dew).
 * - rLLM: `c_i = r_i − mean(group)` (a singleton gets 0, whatever its docstring says), then
 *   `a_i = c_i / (std_population(all c) + 1e-6)`, sequence-weighted and not re-centred.
 * TRL has no such estimator; `compat: 'trl'` is refused.
 */
import type { Compat } from '../compat';
import { groupScores, meanOf, outcome, range, stdOf, type OutcomeAdvantages } from './groups';
import { verlWhitenStats, whitenWith } from './whiten';

export interface ReinforcePlusPlusOptions {
  /** `'verl'` (token-whitened) or `'rllm'` (sequence-level population std); `'trl'` is refused. Default `'verl'`. */
  compat?: Compat;
}

/**
 * REINFORCE++-baseline advantages. `lengths[i]` is the number of trainable tokens of sequence i
 * (required by the verl form, ignored by rLLM's).
 */
export function reinforcePlusPlusBaseline(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths?: ArrayLike<number>,
  options: ReinforcePlusPlusOptions = {},
): OutcomeAdvantages {
  const compat = options.compat ?? 'verl';
  if (compat === 'trl') throw new Error('reinforce++-baseline: TRL has no REINFORCE++-baseline estimator; use compat "verl" or "rllm"');
  if (compat !== 'verl' && compat !== 'rllm') throw new Error(`reinforce++-baseline: compat = ${JSON.stringify(compat)}: expected "verl" or "rllm"`);
  const g = groupScores(scores, groups);
  const centred = new Float64Array(scores.length);
  g.members.forEach((m, k) => {
    if (m.length === 1) {
      centred[m[0]] = compat === 'verl' ? scores[m[0]] : 0;
      return;
    }
    if (g.zeroStd[k]) return;
    const mean = meanOf(scores, m);
    for (const i of m) centred[i] = scores[i] - mean;
  });

  const adv = new Float64Array(scores.length);
  if (compat === 'rllm') {
    const all = range(scores.length);
    const std = stdOf(centred, all, meanOf(centred, all), 'population');
    for (let i = 0; i < adv.length; i++) adv[i] = centred[i] / (std + 1e-6);
    return outcome(adv, g);
  }

  if (!lengths) throw new Error('reinforce++-baseline (verl): lengths is required, the number of trainable tokens of each sequence');
  if (lengths.length !== scores.length) throw new Error(`reinforce++-baseline: lengths has ${lengths.length} entries for ${scores.length} scores`);
  let tokens = 0;
  for (let i = 0; i < lengths.length; i++) {
    if (!Number.isInteger(lengths[i]) || lengths[i] < 0) throw new Error(`reinforce++-baseline: lengths[${i}] = ${lengths[i]}: expected a non-negative integer`);
    tokens += lengths[i];
  }
  if (tokens === 0) return outcome(adv, g); // no trainable token: zero targets, zero mass (dew)
  if (tokens === 1) {
    const i = Array.prototype.findIndex.call(lengths, (n: number) => n === 1);
    throw new Error(
      `reinforce++-baseline: sequence ${i} holds the batch's only trainable token; whitening one token is undefined (verl masked_var raises)`,
    );
  }
  const stats = verlWhitenStats(centred, lengths);
  for (let i = 0; i < adv.length; i++) adv[i] = lengths[i] > 0 ? whitenWith(centred[i], stats) : 0;
  return outcome(adv, g);
}
