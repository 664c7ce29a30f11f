/**
 * GRPO group normalisation: `a_i = (r_i − μ_g) / (σ_g + ε)`, or `r_i − μ_g` without std scaling.
 *
 * An outcome estimator: one scalar per sequence, broadcast over its tokens by the caller. Not a
 * loss. References (docs/rl-formulas.md §3.1): verl `compute_grpo_outcome_advantage` (default), TRL
 * `GRPOTrainer` `scale_rewards`, rLLM `calculate_grpo_advantages_per_group`. Flow-GRPO's
 * `PerPromptStatTracker` (dew FlowRollout) is `{ stdType: 'population', epsilon: 1e-4, singleton:
 * 'zero' }`. Groups whose scores are all equal (≥ 2 members) get exactly 0, where torch would
 * leave an ulp-sized residue of `r − mean`. `grpoDetails` is the same computation with its working
 * (resolved options, each group's μ and the σ divided by), for views; `grpoAdvantages` wraps it.
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

export interface GrpoOptions {
  /** Framework whose conventions fill the options left unset. Default `'verl'`. */
  compat?: Compat;
  /**
   * What the centred score is divided by. `'group'`: the group's std (verl
   * `norm_adv_by_std_in_grpo=True`, TRL `scale_rewards="group"`, rLLM). `'batch'`: the std of all
   * scores, the mean staying per group (TRL `"batch"`). `'none'`: nothing (Dr. GRPO: verl
   * `norm_adv_by_std_in_grpo=False`, TRL `"none"`). Default `'group'` (all three frameworks).
   */
  scale?: 'group' | 'batch' | 'none';
  /** `'unbiased'` (ddof 1: verl torch.std, TRL nanstd) or `'population'` (ddof 0: rLLM np.std). Default: verl/TRL `'unbiased'`, rLLM `'population'`. */
  stdType?: 'unbiased' | 'population';
  /** Added to the std. Default: verl `1e-6`, TRL `1e-4`, rLLM `1e-6`. */
  epsilon?: number;
  /**
   * A group of one member. `'raw'`: μ = 0 and σ = 1, so `a = r/(1+ε)` (or `r` unscaled; verl,
   * rLLM). `'zero'`: μ = r, so `a = 0` (TRL). Default: verl/rLLM `'raw'`, TRL `'zero'`.
   */
  singleton?: 'raw' | 'zero';
}

const PRESETS: Record<Compat, Required<Omit<GrpoOptions, 'compat' | 'scale'>>> = {
  verl: { stdType: 'unbiased', epsilon: 1e-6, singleton: 'raw' },
  trl: { stdType: 'unbiased', epsilon: 1e-4, singleton: 'zero' },
  rllm: { stdType: 'population', epsilon: 1e-6, singleton: 'raw' },
};

/** GRPO advantages of `scores`, grouped by `groups` (one key per score, e.g. `task + group`). */
export function grpoAdvantages(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: GrpoOptions = {},
): OutcomeAdvantages {
  const d = grpoDetails(scores, groups, options);
  return outcome(d.advantages, d.grouping);
}

/** The options with every default filled in under their `compat` (what the estimator computes with; the exports compare these). */
export function grpoSettings(options: GrpoOptions = {}) {
  const compat = options.compat ?? 'verl';
  const preset = PRESETS[compat];
  if (!preset) throw new Error(`grpo: compat = ${JSON.stringify(compat)}: expected "verl", "trl" or "rllm"`);
  return {
    compat,
    scale: options.scale ?? 'group',
    stdType: options.stdType ?? preset.stdType,
    epsilon: options.epsilon ?? preset.epsilon,
    singleton: options.singleton ?? preset.singleton,
  };
}

/** `grpoAdvantages` with its working: the resolved options and, per group, μ and the σ it divided by. */
export function grpoDetails(
  scores: ArrayLike<number>,
  groups: ArrayLike<string | number>,
  options: GrpoOptions = {},
): AdvantageDetails {
  const { compat, scale, stdType, epsilon, singleton } = grpoSettings(options);
  if (!(epsilon >= 0) || !Number.isFinite(epsilon))
    throw new Error(`grpo: epsilon = ${epsilon}: expected a finite number ≥ 0`);
  if (!['group', 'batch', 'none'].includes(scale))
    throw new Error(`grpo: scale = ${JSON.stringify(scale)}: expected "group", "batch" or "none"`);

  const g = groupScores(scores, groups);
  const all = range(scores.length);
  const batchStd = scale === 'batch' ? stdOf(scores, all, meanOf(scores, all), stdType) : 0;
  const adv = new Float64Array(scores.length);
  const baselines = new Float64Array(scores.length);
  const details: GroupDetail[] = g.members.map((m, k) => {
    let mean: number;
    let std: number;
    // A singleton: 'zero' takes μ = r (a = 0 whatever the scale), 'raw' μ = 0 and σ = 1.
    if (m.length === 1) [mean, std] = singleton === 'zero' ? [scores[m[0]], 0] : [0, 1];
    else {
      mean = meanOf(scores, m);
      std = stdOf(scores, m, mean, stdType);
    }
    const used = scale === 'none' ? null : scale === 'batch' ? batchStd : std;
    const zero = m.length > 1 ? g.zeroStd[k] : singleton === 'zero'; // all equal: exactly zero
    for (const i of m) {
      baselines[i] = mean;
      if (zero) continue;
      const c = scores[i] - mean;
      adv[i] = used === null ? c : c / (used + epsilon);
    }
    return { members: m, baseline: mean, std: used, divisor: used === null ? null : used + epsilon, zero };
  });
  return {
    settings: { compat, scale, stdType, epsilon, singleton },
    baselines,
    groups: details,
    batch: null,
    advantages: adv,
    grouping: g,
  };
}
