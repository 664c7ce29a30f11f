/**
 * GDPO (Group reward-Decoupled normalization Policy Optimization, Liu et al. 2026, arXiv:2601.05242):
 * each reward component is normalised within its group on its own, the normalised components are
 * summed with weights, and the sum is whitened over the batch. A dominant component no longer
 * drowns a weaker one, as it does when GRPO normalises their sum.
 *
 * An outcome estimator: one scalar per sequence. It reads the components (`Session.components`,
 * e.g. MathReward's boxed / parsed / correct, DAPO shaping's score / overlong), not the reward.
 * References (docs/rl-formulas.md §3.7):
 * - verl `compute_gdpo_outcome_advantage` (verl-project/verl 1dda039, `verl/trainer/ppo/core_algos.py`,
 *   `adv_estimator=gdpo`, keys and weights from `algorithm.gdpo_reward_keys` / `gdpo_reward_weights`):
 *   per component verl's GRPO (`compute_grpo_outcome_advantage`: unbiased σ, ε = 1e-6, a group of one
 *   μ = 0 and σ = 1, `norm_adv_by_std_in_grpo` honoured), `Σ_k w_k·A_k`, then `masked_whiten` over the
 *   response tokens: token-weighted (a sequence counts its length), unbiased, + 1e-8, re-centred.
 *   verl's components are float32; here float64. Default.
 * - TRL `GRPOTrainer` with `multi_objective_aggregation="normalize_then_sum"` (huggingface/trl f2cd577,
 *   `_generate_and_score_completions`), a component being one reward function: per component
 *   `(r − μ)/(σ_unbiased + 1e-4)` (`scale_rewards` is not read there), `Σ_k w_k·A_k`, then over the
 *   sequences `(x − mean)/(σ_unbiased + 1e-4)`: one weight per sequence, not per token. A group of one
 *   gets 0 (its own mean; TRL never groups fewer than `num_generations`). `compat: 'trl'`.
 * A group whose every weighted component is all-equal has a zero per-group step (it still moves with
 * the batch whitening, as in both frameworks). rLLM has no GDPO: `compat: 'rllm'` is refused.
 */
import type { Compat } from '../compat';
import { grpoDetails } from './grpo';
import { meanOf, outcome, range, stdOf, type AdvantageDetails, type OutcomeAdvantages } from './groups';
import { VERL_EPS, verlWhitenStats, whitenWith } from './whiten';

export interface GdpoOptions {
  /** `'verl'` (token-weighted whitening, default) or `'trl'` (normalize_then_sum); `'rllm'` is refused. */
  compat?: Compat;
  /** Per component: divide by the group's σ + ε (`'group'`, default) or not (`'none'`: verl `norm_adv_by_std_in_grpo=False`). */
  scale?: 'group' | 'none';
  /** The components GDPO reads and their weights (verl `gdpo_reward_keys` / `gdpo_reward_weights`, TRL `reward_weights`). At least one. */
  weights?: Readonly<Record<string, number | undefined>>;
}

/** The options with every default filled in (what the estimator computes with; the exports compare these); components by name. */
export function gdpoSettings(options: GdpoOptions = {}) {
  const weights = Object.entries(options.weights ?? {})
    .filter((e): e is [string, number] => e[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { compat: options.compat ?? 'verl', scale: options.scale ?? 'group', weights };
}

/** GDPO advantages from each component's per-sequence values (`parts[name][i]`), grouped by `groups`. */
export function gdpoAdvantages(
  parts: Readonly<Record<string, ArrayLike<number>>>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: GdpoOptions = {},
): OutcomeAdvantages {
  const d = gdpoDetails(parts, groups, lengths, options);
  return outcome(d.advantages, d.grouping);
}

/** `gdpoAdvantages` with its working: the weighted sum's per-group step and the batch whitening. */
export function gdpoDetails(
  parts: Readonly<Record<string, ArrayLike<number>>>,
  groups: ArrayLike<string | number>,
  lengths: ArrayLike<number>,
  options: GdpoOptions = {},
): AdvantageDetails {
  const { compat, scale, weights } = gdpoSettings(options);
  if (compat !== 'verl' && compat !== 'trl')
    throw new Error(`gdpo: compat = ${JSON.stringify(compat)}: expected "verl" or "trl" (rLLM has no GDPO)`);
  if (scale !== 'group' && scale !== 'none')
    throw new Error(`gdpo: scale = ${JSON.stringify(scale)}: expected "group" or "none"`);
  if (weights.length === 0) throw new Error('gdpo: weights names no component; expected at least one');
  const B = groups.length;
  if (lengths.length !== B) throw new Error(`gdpo: lengths has ${lengths.length} entries for ${B} sequences`);
  const per =
    compat === 'verl'
      ? ({ compat: 'verl', scale } as const)
      : ({ stdType: 'unbiased', epsilon: 1e-4, singleton: 'zero', scale } as const);
  const sum = new Float64Array(B);
  let grouping: AdvantageDetails['grouping'] | null = null;
  for (const [name, w] of weights) {
    const values = parts[name];
    if (!values) throw new Error(`gdpo: weights names component "${name}", which parts does not hold`);
    if (values.length !== B)
      throw new Error(`gdpo: component "${name}" has ${values.length} values for ${B} sequences`);
    if (!Number.isFinite(w)) throw new Error(`gdpo: weights.${name} = ${w}: expected a finite number`);
    const d = grpoDetails(values, groups, per);
    for (let i = 0; i < B; i++) sum[i] += w * d.advantages[i];
    // A group's step is zero only when every weighted component is all-equal in it.
    grouping =
      grouping === null
        ? { members: d.grouping.members, zeroStd: d.groups.map((g) => g.zero) }
        : { members: grouping.members, zeroStd: grouping.zeroStd.map((z, k) => z && d.groups[k].zero) };
  }
  const g = grouping!;
  const settings = { compat, scale, weights: weights.map(([k, w]) => `${k} ${w}`).join(', ') };
  const details = g.members.map((m, k) => ({
    members: m,
    baseline: null,
    std: null,
    divisor: null,
    zero: g.zeroStd[k],
  }));
  const done = (advantages: Float64Array, batch: AdvantageDetails['batch']): AdvantageDetails => ({
    settings,
    baselines: new Float64Array(B),
    groups: details,
    batch,
    advantages,
    grouping: g,
  });
  const adv = new Float64Array(B);
  if (compat === 'trl') {
    const all = range(B);
    const mean = meanOf(sum, all);
    const std = stdOf(sum, all, mean, 'unbiased');
    for (let i = 0; i < B; i++) adv[i] = (sum[i] - mean) / (std + 1e-4);
    return done(adv, { mean, std, divisor: std + 1e-4 });
  }
  let tokens = 0;
  for (let i = 0; i < B; i++) {
    if (!Number.isInteger(lengths[i]) || lengths[i] < 0)
      throw new Error(`gdpo: lengths[${i}] = ${lengths[i]}: expected a non-negative integer`);
    tokens += lengths[i];
  }
  if (tokens === 0) return done(adv, null); // no trainable token: zero targets, zero mass (dew)
  if (tokens === 1)
    throw new Error(
      'gdpo: one trainable token in the batch; whitening one token is undefined (verl masked_var raises)',
    );
  const stats = verlWhitenStats(sum, lengths);
  for (let i = 0; i < B; i++) adv[i] = lengths[i] > 0 ? whitenWith(sum[i], stats) : 0;
  return done(adv, { mean: stats.mean, std: Math.sqrt(stats.variance), divisor: Math.sqrt(stats.variance + VERL_EPS) });
}
