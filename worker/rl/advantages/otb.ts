/**
 * The optimal token baseline (OTB): a per-token estimator whose baseline at response token t is
 * the group's reward-to-go weighted by each member's accumulated path variance,
 *
 *   G_t = Σ_{j ≥ t} r_j m_j                        (reward-to-go; the outcome sits on the last token)
 *   w_t = (1 − 2π_t + Σ_v π_v²) · ρ̄_t²             (π_t = exp(old log-prob); ρ̄ the rollout IS weight, 1 without)
 *   W_t = Σ_{j ≤ t} w_j m_j                        (path-variance proxy up to t)
 *   B_t = Σ_i G_t W_t m_t / (Σ_i W_t m_t + ε)       (over the members i of one prompt group, at index t)
 *   A_t = (G_t − B_t) · m_t
 *
 * A group of one gets B = 0 (A = G). `handleZeroTail`: when one member is strictly the longest,
 * its baseline beyond the second-longest length is 0 (no other member is there to estimate it).
 *
 * Reference: verl `compute_optimal_token_baseline_advantage` (`adv_estimator=optimal_token_baseline`)
 * and `compute_multi_turn_optimal_token_baseline_advantage` (`tir_optimal_token_baseline`),
 * verl-project/verl 1dda039, `verl/trainer/ppo/core_algos.py`; docs/rl-formulas.md §3.8. The two
 * differ only in how members line up: `align: 'position'` (verl's OTB) by the column of the response,
 * masked columns inside it (an environment's observation) still counting; `align: 'token'` (verl's
 * TIR variant) by the index among each row's masked tokens, so the k-th action token of every member
 * shares a baseline, and a row without one joins no group. Layout as verl's: one sequence per row,
 * its response from column 0. Float64 here (verl: the inputs' dtype). Not the packing of Dewpoint's
 * batches into that layout (otb-packed.ts) nor where Σπ² comes from (`Model.score`'s `sumPiSquared`).
 */
import { checkFinite, checkTable } from '../table';

export interface OtbInput {
  rows: number;
  width: number;
  /** `[rows, width]` token rewards (verl `token_level_rewards`); off the mask ignored. */
  tokenRewards: ArrayLike<number>;
  /** `[rows, width]` 1 on the response tokens that train, 0 elsewhere. */
  responseMask: ArrayLike<number>;
  /** `[rows, width]` log-probs of the policy the batch is scored under (verl `old_log_probs`). */
  oldLogp: ArrayLike<number>;
  /** `[rows, width]` Σ_v π_v² of the distribution each token was drawn from (verl `sum_pi_squared`). */
  sumPiSquared: ArrayLike<number>;
  /** `[rows, width]` rollout IS weights ρ̄ (verl `rollout_is_weights`); absent when IS is off. */
  isWeights?: ArrayLike<number>;
  /** One prompt-group key per row (verl `index`, the uid). */
  groups: ArrayLike<string | number>;
}

export interface OtbOptions {
  /** Zero the baseline of a lone longest member past the second-longest length. Default `true` (verl's, which its trainer never overrides). */
  handleZeroTail?: boolean;
  /** `'position'` (verl `optimal_token_baseline`, default) or `'token'` (verl `tir_optimal_token_baseline`). */
  align?: 'position' | 'token';
}

/** verl's ε (`epsilon=1e-8`, not overridden by its trainer). */
export const OTB_EPSILON = 1e-8;

/** The options with their defaults filled in (what the estimator computes with). */
export function otbSettings(o: OtbOptions = {}) {
  return { handleZeroTail: o.handleZeroTail ?? true, align: o.align ?? 'position', epsilon: OTB_EPSILON };
}

export interface OtbResult {
  /** `[rows, width]` A_t, 0 off the mask. */
  advantages: Float64Array;
  /** `[rows, width]` G_t (verl's `returns`), 0 off the mask. */
  returns: Float64Array;
  /** `[rows, width]` B_t as subtracted, 0 off the mask. */
  baselines: Float64Array;
  /** `[rows, width]` W_t, 0 off the mask. */
  pathVariance: Float64Array;
  /** Per group in order of first appearance, its member rows (the rows without a token excluded under `align: 'token'`). */
  members: number[][];
}

export function otbAdvantages(input: OtbInput, options: OtbOptions = {}): OtbResult {
  const { rows, width, tokenRewards: r, responseMask: m, oldLogp, sumPiSquared, isWeights, groups } = input;
  const { handleZeroTail, align, epsilon } = otbSettings(options);
  if (align !== 'position' && align !== 'token')
    throw new Error(`otb: align = ${JSON.stringify(align)}: expected "position" or "token"`);
  const tables = { tokenRewards: r, responseMask: m, oldLogp, sumPiSquared, ...(isWeights ? { isWeights } : {}) };
  for (const [name, a] of Object.entries(tables)) checkTable(name, a, rows, width);
  for (const [name, a] of Object.entries(tables)) checkFinite(name, a, width, m);
  if (groups.length !== rows)
    throw new Error(`otb: ${groups.length} group keys for ${rows} rows; expected one per row`);
  for (let i = 0; i < m.length; i++)
    if (m[i] !== 0 && m[i] !== 1)
      throw new Error(`otb: responseMask[${Math.floor(i / width)}, ${i % width}] = ${m[i]}: expected 0 or 1`);

  // Per row, the columns it lines up by: every column (position), or its masked ones in order (token).
  const cols = Array.from({ length: rows }, (_, b) => {
    const all = Array.from({ length: width }, (_, t) => t);
    return align === 'position' ? all : all.filter((t) => m[b * width + t] === 1);
  });
  const returns = new Float64Array(rows * width);
  const W = new Float64Array(rows * width);
  for (let b = 0; b < rows; b++) {
    let g = 0;
    for (let t = width - 1; t >= 0; t--) if (m[b * width + t] === 1) returns[b * width + t] = g += r[b * width + t];
    let acc = 0;
    for (let t = 0; t < width; t++) {
      const i = b * width + t;
      if (m[i] !== 1) continue;
      const rho = isWeights ? isWeights[i] : 1;
      W[i] = acc += (1 - 2 * Math.exp(oldLogp[i]) + sumPiSquared[i]) * rho * rho;
    }
  }
  const lengths = Array.from({ length: rows }, (_, b) => cols[b].filter((t) => m[b * width + t] === 1).length);
  const byKey = new Map<string | number, number[]>();
  for (let b = 0; b < rows; b++) {
    if (align === 'token' && lengths[b] === 0) continue; // verl's TIR variant groups only rows with a token
    const list = byKey.get(groups[b]);
    if (list) list.push(b);
    else byKey.set(groups[b], [b]);
  }
  const members = [...byKey.values()];
  const baselines = new Float64Array(rows * width);
  for (const g of members) {
    if (g.length === 1) continue; // a group of one: no baseline
    const span = Math.max(...g.map((b) => cols[b].length));
    const tail = handleZeroTail ? loneLongest(g, lengths) : null;
    for (let k = 0; k < span; k++) {
      let num = 0;
      let den = 0;
      for (const b of g) {
        const t = cols[b][k];
        if (t === undefined || m[b * width + t] !== 1) continue;
        num += returns[b * width + t] * W[b * width + t];
        den += W[b * width + t];
      }
      const base = num / (den + epsilon);
      for (const b of g) {
        const t = cols[b][k];
        if (t === undefined || m[b * width + t] !== 1) continue;
        baselines[b * width + t] = tail && b === tail.row && k >= tail.from ? 0 : base;
      }
    }
  }
  const advantages = new Float64Array(rows * width);
  for (let i = 0; i < advantages.length; i++) if (m[i] === 1) advantages[i] = returns[i] - baselines[i];
  return { advantages, returns, baselines, pathVariance: W, members };
}

/** The member strictly longer than every other (by masked tokens), and the second-longest length; null when the longest ties. */
function loneLongest(g: readonly number[], lengths: readonly number[]): { row: number; from: number } | null {
  const sorted = g.map((b) => lengths[b]).sort((x, y) => x - y);
  const [max, second] = [sorted[sorted.length - 1], sorted[sorted.length - 2]];
  const longest = g.filter((b) => lengths[b] === max);
  return longest.length === 1 && max > second ? { row: longest[0], from: second } : null;
}
