/**
 * Shared pieces of the outcome (per-sequence) advantage estimators: group indexing by key, the
 * zero-std count and the result type.
 *
 * Not an estimator. Reference: docs/rl-formulas.md §3 (group statistics) and TRL
 * `GRPOTrainer._generate_and_score_completions` (`frac_reward_zero_std`).
 */

/** What every outcome estimator returns. */
export interface OutcomeAdvantages {
  /** One advantage per input sequence, in input order. Token advantages are `a_b · m[b, t]`. */
  advantages: Float64Array;
  /** Number of distinct group keys. */
  groups: number;
  /** Groups whose scores are all exactly equal (singletons included: their spread is zero). */
  zeroStdGroups: number;
  /**
   * Fraction of sequences that sit in a zero-std group (TRL `frac_reward_zero_std`, a per-sample
   * mean; equal to the fraction of groups when groups have equal sizes). 0 for an empty batch.
   */
  fracRewardZeroStd: number;
}

/** Sequences grouped by key, groups in order of first appearance, members in input order. */
interface Grouping {
  /** Per group, the indices of its members. */
  members: number[][];
  /** Per group, whether all its scores are exactly equal. */
  zeroStd: boolean[];
}

/** Groups `scores` by `keys`, checking lengths and finiteness (naming the bad index). */
export function groupScores(scores: ArrayLike<number>, keys: ArrayLike<string | number>): Grouping {
  if (scores.length !== keys.length) {
    throw new Error(
      `scores has ${scores.length} entries but groups has ${keys.length}; expected one group key per score`,
    );
  }
  const byKey = new Map<string | number, number[]>();
  for (let i = 0; i < scores.length; i++) {
    if (!Number.isFinite(scores[i])) throw new Error(`scores[${i}] = ${scores[i]}: expected a finite score`);
    const list = byKey.get(keys[i]);
    if (list) list.push(i);
    else byKey.set(keys[i], [i]);
  }
  const members = [...byKey.values()];
  const zeroStd = members.map((m) => m.every((i) => scores[i] === scores[m[0]]));
  return { members, zeroStd };
}

/** Fills the counting fields of an `OutcomeAdvantages` from a grouping. */
export function outcome(advantages: Float64Array, g: Grouping): OutcomeAdvantages {
  let inZero = 0;
  let zeroStdGroups = 0;
  g.members.forEach((m, k) => {
    if (g.zeroStd[k]) {
      zeroStdGroups++;
      inZero += m.length;
    }
  });
  const n = advantages.length;
  return { advantages, groups: g.members.length, zeroStdGroups, fracRewardZeroStd: n > 0 ? inZero / n : 0 };
}

/** Mean of `scores` over `idx`. */
export function meanOf(scores: ArrayLike<number>, idx: readonly number[]): number {
  let s = 0;
  for (const i of idx) s += scores[i];
  return s / idx.length;
}

/**
 * Standard deviation of `scores` over `idx` about `mean`: `unbiased` divides by n − 1 (torch.std,
 * TRL nanstd), `population` by n (np.std). 0 when n ≤ 1 (TRL's guard for one generation or one row).
 */
export function stdOf(
  scores: ArrayLike<number>,
  idx: readonly number[],
  mean: number,
  type: 'unbiased' | 'population',
): number {
  const n = idx.length;
  if (n <= 1) return 0;
  let ss = 0;
  for (const i of idx) ss += (scores[i] - mean) ** 2;
  return Math.sqrt(ss / (type === 'unbiased' ? n - 1 : n));
}

/** `0, 1, …, n − 1`. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * How an outcome estimator reached its advantages, for views that show the math: per group what
 * it subtracted and divided by, and any batch-level normalisation after that. Each estimator's
 * `*Details` function computes it and its advantages function returns `details.advantages`, so
 * the two cannot disagree.
 */
export interface AdvantageDetails {
  /** The options the estimator read, `compat`'s defaults filled in. */
  settings: Record<string, string | number | boolean>;
  /** Per input sequence, the baseline subtracted from its score (RLOO: the mean of the others). */
  baselines: Float64Array;
  /** Per group, in grouping order. */
  groups: GroupDetail[];
  /**
   * A normalisation over the whole batch after the per-group step, `a = (c − mean) / divisor`
   * (`+ added` when present: verl `masked_whiten(..., shift_mean=False)` adds the mean back); null when none.
   */
  batch: { mean: number; std: number; divisor: number; added?: number } | null;
  advantages: Float64Array;
  grouping: Grouping;
}

export interface GroupDetail {
  /** Indices of its members in the input. */
  members: number[];
  /** The baseline when it is the same for every member (GRPO, REINFORCE++ group mean), else null (RLOO: per member). */
  baseline: number | null;
  /** The std the centred score was divided by, before ε (GRPO: the group's or the batch's); null when not divided per group. */
  std: number | null;
  /** What the centred score was divided by (std + ε); null when not divided per group. */
  divisor: number | null;
  /** Its members' per-group step is exactly 0 (an all-equal group; a singleton the estimator zeroes). */
  zero: boolean;
}
