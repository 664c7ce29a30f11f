/**
 * OTB (otb.ts) on a packed batch: each session's trainable ids, calls in order, become one row of
 * verl's layout (its k-th action id in column k), the estimator runs there, and its per-token
 * advantages go back to the packed positions.
 *
 * A single-turn session's sampled ids are contiguous, so column k is its k-th response token, as in
 * verl's own rows: `align: 'position'` is then verl's `optimal_token_baseline` exactly. An episode's
 * observation ids between actions are not placed, so there only `align: 'token'` (verl's
 * `tir_optimal_token_baseline`, which compacts the response to its masked tokens) is verl's; the
 * run options refuse the other for episodes. `mask` may clear ids inside a session (a rejection
 * mask): they stay in their column, as a masked verl token does. Not the estimator (otb.ts) nor
 * where Σπ² and the old log-probs come from (worker/train/otb.ts). Reference: docs/rl-formulas.md §3.8.
 */
import { checkTable } from '../table';
import type { GroupDetail } from './groups';
import { otbAdvantages, otbSettings, type OtbOptions } from './otb';

export interface OtbPackedInput {
  rows: number;
  width: number;
  /** pack's `sessionIds` (1 + the session's input index; 0 = padding) and `callIndex`. */
  sessionIds: ArrayLike<number>;
  callIndex: ArrayLike<number>;
  /** pack's response mask: the ids a session trains, which fix its columns. */
  responseMask: ArrayLike<number>;
  /** The mask OTB sums over (responseMask × a rejection keep); default responseMask. */
  mask?: ArrayLike<number>;
  tokenRewards: ArrayLike<number>;
  oldLogp: ArrayLike<number>;
  sumPiSquared: ArrayLike<number>;
  isWeights?: ArrayLike<number>;
  /** Per input session, its prompt-group key (pack's `(task, group)`). */
  groupOf: (session: number) => string;
}

export interface OtbPackedResult {
  /** `[rows, width]` A_t at the packed ids, 0 elsewhere. */
  advantages: Float64Array;
  /** Per session in the batch (input index), the mean of its A_t and of its B_t over its masked ids (0 without one). */
  sessionAdvantages: Map<number, number>;
  sessionBaselines: Map<number, number>;
  /** Per prompt group: its member sessions (input indices), the per-token baseline (null: one per token) and whether every A_t is exactly 0. */
  groups: GroupDetail[];
  settings: ReturnType<typeof otbSettings>;
}

export function otbPacked(p: OtbPackedInput, options: OtbOptions = {}): OtbPackedResult {
  const { rows, width, sessionIds, callIndex, responseMask } = p;
  const mask = p.mask ?? responseMask;
  for (const [name, a] of Object.entries({ sessionIds, callIndex, responseMask, mask }))
    checkTable(name, a, rows, width);
  const bySession = new Map<number, number[]>();
  for (let i = 0; i < responseMask.length; i++) {
    if (responseMask[i] !== 1) continue;
    const s = sessionIds[i] - 1;
    if (!Number.isInteger(s) || s < 0)
      throw new Error(
        `otbPacked: sessionIds[${Math.floor(i / width)}, ${i % width}] = ${sessionIds[i]} on a trained id`,
      );
    const list = bySession.get(s);
    if (list) list.push(i);
    else bySession.set(s, [i]);
  }
  // Array.prototype.sort is stable: within a call, row-major order is the order of its ids.
  const sessions = [...bySession.keys()].sort((a, b) => a - b);
  const orders = sessions.map((s) => bySession.get(s)!.sort((a, b) => callIndex[a] - callIndex[b]));
  const R = sessions.length;
  const T = Math.max(0, ...orders.map((o) => o.length));
  const table = (src: ArrayLike<number>) => {
    const out = new Float64Array(R * T);
    orders.forEach((o, row) => o.forEach((i, k) => (out[row * T + k] = src[i])));
    return out;
  };
  const out = otbAdvantages(
    {
      rows: R,
      width: T,
      tokenRewards: table(p.tokenRewards),
      responseMask: table(mask),
      oldLogp: table(p.oldLogp),
      sumPiSquared: table(p.sumPiSquared),
      ...(p.isWeights ? { isWeights: table(p.isWeights) } : {}),
      groups: sessions.map(p.groupOf),
    },
    options,
  );
  const advantages = new Float64Array(rows * width);
  const sessionAdvantages = new Map<number, number>();
  const sessionBaselines = new Map<number, number>();
  orders.forEach((o, row) => {
    let a = 0;
    let b = 0;
    let n = 0;
    o.forEach((i, k) => {
      if (mask[i] !== 1) return;
      advantages[i] = out.advantages[row * T + k];
      a += out.advantages[row * T + k];
      b += out.baselines[row * T + k];
      n++;
    });
    sessionAdvantages.set(sessions[row], n ? a / n : 0);
    sessionBaselines.set(sessions[row], n ? b / n : 0);
  });
  // Groups as the estimator formed them, plus (token alignment) the sessions it left out for having no masked id.
  const grouped = new Set(out.members.flat());
  const alone = sessions.flatMap((s, row) => (grouped.has(row) ? [] : [[row]]));
  const groups = [...out.members, ...alone].map((g) => ({
    members: g.map((row) => sessions[row]),
    baseline: null,
    std: null,
    divisor: null,
    zero: g.every((row) => orders[row].every((i) => advantages[i] === 0)),
  }));
  return { advantages, sessionAdvantages, sessionBaselines, groups, settings: otbSettings(options) };
}
