/**
 * REINFORCE++-baseline: subtract the group mean, then normalise across the whole batch.
 *
 * An outcome estimator: one scalar per sequence (constant over its tokens). The two references
 * differ (docs/rl-formulas.md §3.3, §11.2):
 * - verl `compute_reinforce_plus_plus_baseline_outcome_advantage` (default): `c_i = r_i − μ_g`
 *   (μ = 0 for a singleton), tiled over the tokens and `masked_whiten`ed over all trainable tokens
 *   of the batch, so the statistics are token-weighted (a sequence counts `lengths[i]` times),
 *   unbiased, and the result is re-centred (`shiftMean: false`: verl `shift_mean=False`, the mean
 *   is added back). A sequence with no trainable token gets 0 (× mask).
 *   One trainable token in the batch is refused (verl raises); none gives all zeros (dew).
 * - rLLM: `c_i = r_i − mean(group)` (a singleton gets 0, whatever its docstring says), then
 *   `a_i = c_i / (std_population(all c) + 1e-6)`, sequence-weighted and not re-centred.
 * TRL has no such estimator; `compat: 'trl'` is refused.
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
import { VERL_EPS, verlWhitenStats, whitenWith } from './whiten';

export interface ReinforcePlusPlusOptions {
  /** `'verl'` (token-whitened) or `'rllm'` (sequence-level population std); `'trl'` is refused. Default `'verl'`. */
  compat?: Compat;
  /**
   * verl `masked_whiten`'s `shift_mean`: `true` (default, verl's estimator) re-centres; `false`
   * divides by the std and adds the token-weighted mean back, `(c − μ)/σ + μ`. verl form only:
   * rLLM's never centres, so `false` with `compat: 'rllm'` is refused.
   */
  shiftMean?: boolean;
}

/** The options with every default filled in under their `compat` (what the estimator computes with; the exports compare these). */
export function reinforcePlusPlusSettings(options: ReinforcePlusPlusOptions = {}) {
  return { compat: options.compat ?? 'verl', shiftMean: options.shiftMean ?? true };
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
  const d = reinforcePlusPlusDetails(scores, groups, lengths, options);
  return outcome(d.advantages, d.grouping);
}

/** `reinforcePlusPlusBaseline` with its working: per group the mean subtracted, then the batch whitening. */
export function reinforcePlusPlusDetails(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  lengths?: ArrayLike<number>,
  options: ReinforcePlusPlusOptions = {},
): AdvantageDetails {
  const { compat, shiftMean } = reinforcePlusPlusSettings(options);
  if (compat === 'trl')
    throw new Error('reinforce++-baseline: TRL has no REINFORCE++-baseline estimator; use compat "verl" or "rllm"');
  if (compat !== 'verl' && compat !== 'rllm')
    throw new Error(`reinforce++-baseline: compat = ${JSON.stringify(compat)}: expected "verl" or "rllm"`);
  if (typeof shiftMean !== 'boolean')
    throw new Error(`reinforce++-baseline: shiftMean = ${JSON.stringify(shiftMean)}: expected true or false`);
  if (!shiftMean && compat === 'rllm')
    throw new Error(
      'reinforce++-baseline: shiftMean false is verl masked_whiten\'s shift_mean; rLLM divides by a std without centring, so use compat "verl"',
    );
  const g = groupScores(scores, groups);
  const centred = new Float64Array(scores.length);
  const baselines = new Float64Array(scores.length);
  const details: GroupDetail[] = g.members.map((m, k) => {
    if (m.length === 1) {
      // verl: μ = 0 (c = r); rLLM: c = 0.
      baselines[m[0]] = compat === 'verl' ? 0 : scores[m[0]];
      centred[m[0]] = compat === 'verl' ? scores[m[0]] : 0;
      return { members: m, baseline: baselines[m[0]], std: null, divisor: null, zero: compat !== 'verl' };
    }
    const mean = meanOf(scores, m);
    for (const i of m) {
      baselines[i] = mean;
      if (!g.zeroStd[k]) centred[i] = scores[i] - mean;
    }
    return { members: m, baseline: mean, std: null, divisor: null, zero: g.zeroStd[k] };
  });
  const settings: AdvantageDetails['settings'] = compat === 'verl' ? { compat, shiftMean } : { compat };
  const done = (advantages: Float64Array, batch: AdvantageDetails['batch']): AdvantageDetails => ({
    settings,
    baselines,
    groups: details,
    batch,
    advantages,
    grouping: g,
  });

  const adv = new Float64Array(scores.length);
  if (compat === 'rllm') {
    const all = range(scores.length);
    const std = stdOf(centred, all, meanOf(centred, all), 'population');
    for (let i = 0; i < adv.length; i++) adv[i] = centred[i] / (std + 1e-6);
    return done(adv, { mean: 0, std, divisor: std + 1e-6 });
  }

  if (!lengths)
    throw new Error(
      'reinforce++-baseline (verl): lengths is required, the number of trainable tokens of each sequence',
    );
  if (lengths.length !== scores.length)
    throw new Error(`reinforce++-baseline: lengths has ${lengths.length} entries for ${scores.length} scores`);
  let tokens = 0;
  for (let i = 0; i < lengths.length; i++) {
    if (!Number.isInteger(lengths[i]) || lengths[i] < 0)
      throw new Error(`reinforce++-baseline: lengths[${i}] = ${lengths[i]}: expected a non-negative integer`);
    tokens += lengths[i];
  }
  if (tokens === 0) return done(adv, null); // no trainable token: zero targets, zero mass (dew)
  if (tokens === 1) {
    const i = Array.prototype.findIndex.call(lengths, (n: number) => n === 1);
    throw new Error(
      `reinforce++-baseline: sequence ${i} holds the batch's only trainable token; whitening one token is undefined (verl masked_var raises)`,
    );
  }
  const stats = verlWhitenStats(centred, lengths);
  for (let i = 0; i < adv.length; i++) adv[i] = lengths[i] > 0 ? whitenWith(centred[i], stats, shiftMean) : 0;
  const batch = { mean: stats.mean, std: Math.sqrt(stats.variance), divisor: Math.sqrt(stats.variance + VERL_EPS) };
  return done(adv, shiftMean ? batch : { ...batch, added: stats.mean });
}
