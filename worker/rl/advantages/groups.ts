/**
 * Shared pieces of the outcome (per-sequence) advantage estimators: group indexing by key, the
 * zero-std count and the result type.
 *
 * Not an estimator. Reference: rl-formulas.md §3 (group statistics) and TRL
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
export interface Grouping {
  /** Per group, the indices of its members. */
  members: number[][];
  /** Per group, whether all its scores are exactly equal. */
  zeroStd: boolean[];
}

/** Groups `scores` by `keys`, checking lengths and finiteness (naming the bad index). */
export function groupScores(scores: ArrayLike<number>, keys: ArrayLike<string | number>): Grouping {
  if (scores.length !== keys.length) {
    throw new Error(`scores has ${scores.length} entries but groups has ${keys.length}; expected one group key per score`);
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
export function stdOf(scores: ArrayLike<number>, idx: readonly number[], mean: number, type: 'unbiased' | 'population'): number {
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
