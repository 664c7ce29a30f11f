/**
 * Loss aggregation: how per-token losses `l_t` become one scalar `L = Σ_t w_t·l_t`, and the weight
 * `w_t = ∂L/∂l_t` of every token. Every mode is linear in `l`, so the weights depend on the mask
 * (and the layout) only; the objective multiplies them into the per-token gradients.
 *
 * Not a loss and not the corrections: it never reads log-probs. References: verl `agg_loss`
 * (`verl/trainer/ppo/core_algos.py`, current meaning of `seq-mean-token-sum-norm` since b8d91ef8,
 * `token-sum` since #7197, single micro-batch, `dp_size = 1`; the earlier meaning behind
 * `compat: 'verl-legacy'`), TRL `GRPOTrainer._compute_loss` (`grpo`, `dr_grpo`; `bnpo`/`dapo` are
 * token-mean here), dew `session-mean`; docs/rl-formulas.md §4, §11.3.
 *
 * A sequence is a packed chain (a run of equal non-zero `segmentIds` in a row); without
 * `segmentIds` a whole row is one sequence (verl's layout). An empty mask gives loss 0 and zero
 * weights in every mode (verl: NaN from 0/0; dew: zero mass).
 */
import type { Compat, LegacyCompat } from './compat';
import { checkFinite, checkTable, sequenceSpans, type SegmentSpan, type TableLayout } from './table';

export type AggregationMode =
  | 'token-mean'
  | 'token-sum'
  | 'seq-mean-token-mean'
  | 'seq-mean-token-sum'
  | 'seq-mean-token-sum-norm'
  | 'session-mean'
  | 'grpo'
  | 'dr_grpo';

export const AGGREGATION_MODES: readonly AggregationMode[] = [
  'token-mean',
  'token-sum',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
  'session-mean',
  'grpo',
  'dr_grpo',
];

/** verl's epsilon on each sequence's token count in `seq-mean-token-mean`. */
export const SEQ_TOKEN_MEAN_EPS = 1e-8;

/** What the weights are computed from: the layout of a packed `[rows, width]` batch. */
export interface AggregationInput extends TableLayout {
  /** 1 on tokens that carry loss mass, 0 elsewhere; `[rows, width]`. */
  mask: ArrayLike<number>;
  /**
   * `session-mean` only: per token, 1/n_s with n_s its session's count of masked tokens (pack's
   * `sessionWeights`). Normalised by `Σ m·sw` (= the number of sessions S), so any positive
   * per-session scale gives the same weights; recompute them if the mask changes.
   */
  sessionWeights?: ArrayLike<number>;
}

export interface AggregationOptions {
  /** Default `token-mean` (verl `loss_agg_mode` default; TRL `bnpo`/`dapo` on one micro-batch; rLLM PR #779). */
  mode?: AggregationMode;
  /** K of `seq-mean-token-sum-norm` (verl `loss_scale_factor`). Default: the width T (verl: `loss_mask.shape[-1]`). */
  lossScaleFactor?: number;
  /** L_max of `dr_grpo` (TRL `max_completion_length`). Default: the width. */
  maxCompletionLength?: number;
  /**
   * Which verl `seq-mean-token-sum-norm` (the only mode it changes). `'verl'` (default; `'rllm'`,
   * which aggregates through verl, is the same): `Σ_b Σ_t m l / (B′·K)`, B′ the non-empty
   * sequences (verl-project/verl b8d91ef8d9f9ac09f6c885e380f656237a1de698, #5417, 2026-02-26; in
   * v0.7.1 and later). `'verl-legacy'`: `Σ_b Σ_t m l / K`, no division by a sequence count, so B′
   * times larger (verl 6d8f2f6ab98637d5ffe9ce3409220e7eb342133b, #990, through v0.7.0, K
   * configurable since 6e6ae96c6376f5233d526d9b3264f6254b0966e7, #4360). TRL has no such mode (its
   * constant-normaliser form is `dr_grpo`), so `'trl'` is refused with it; every other mode reads
   * the same under each value.
   */
  compat?: Compat | LegacyCompat;
}

const AGGREGATION_COMPATS: readonly (Compat | LegacyCompat)[] = ['verl', 'trl', 'rllm', 'verl-legacy'];

export interface Aggregated {
  /** L = Σ_t w_t·l_t over masked tokens only (NaN/∞ off the mask never propagate, as verl `masked_sum`). */
  loss: number;
  /** w_t = ∂L/∂l_t, `[rows, width]`, 0 off the mask. */
  weights: Float64Array;
}

/** w_t = ∂L/∂l_t for the chosen mode (docs/rl-formulas.md §4 table). */
export function aggregationWeights(input: AggregationInput, options: AggregationOptions = {}): Float64Array {
  const { rows, width, mask, sessionWeights } = input;
  const mode = options.mode ?? 'token-mean';
  if (!AGGREGATION_MODES.includes(mode)) {
    throw new Error(`aggregation mode '${mode}' is unknown; expected one of ${AGGREGATION_MODES.join(', ')}`);
  }
  const compat = options.compat ?? 'verl';
  if (!AGGREGATION_COMPATS.includes(compat)) {
    throw new Error(
      `aggregation compat = ${JSON.stringify(compat)}: expected one of ${AGGREGATION_COMPATS.join(', ')}`,
    );
  }
  if (compat === 'trl' && mode === 'seq-mean-token-sum-norm') {
    throw new Error(
      "aggregation 'seq-mean-token-sum-norm': TRL has no such mode (its constant-normaliser form is 'dr_grpo'); use compat 'verl' or 'verl-legacy'",
    );
  }
  const spans = sequenceSpans(input, mask);
  const w = new Float64Array(rows * width);
  const count = (s: SegmentSpan): number => {
    let n = 0;
    for (let i = s.start; i < s.end; i++) n += mask[i];
    return n;
  };
  const fill = (s: SegmentSpan, value: number): void => {
    for (let i = s.start; i < s.end; i++) if (mask[i]) w[i] = value;
  };
  let total = 0;
  for (let i = 0; i < mask.length; i++) total += mask[i];
  if (total === 0) return w;

  if (mode === 'token-mean' || mode === 'token-sum') {
    const value = mode === 'token-mean' ? 1 / total : 1;
    for (let i = 0; i < w.length; i++) if (mask[i]) w[i] = value;
  } else if (mode === 'session-mean') {
    if (!sessionWeights) throw new Error(`aggregation 'session-mean' needs sessionWeights ([rows, width])`);
    checkTable('sessionWeights', sessionWeights, rows, width);
    checkFinite('sessionWeights', sessionWeights, width, mask);
    let sessions = 0;
    for (let i = 0; i < w.length; i++) if (mask[i]) sessions += sessionWeights[i];
    if (!(sessions > 0)) {
      throw new Error(
        `aggregation 'session-mean': Σ mask·sessionWeights = ${sessions} with ${total} masked tokens; expected > 0`,
      );
    }
    for (let i = 0; i < w.length; i++) if (mask[i]) w[i] = sessionWeights[i] / sessions;
  } else if (mode === 'grpo' || mode === 'dr_grpo') {
    const b = spans.length; // TRL: every sequence counts, empty ones included
    const lMax = options.maxCompletionLength ?? width;
    if (mode === 'dr_grpo' && !(lMax > 0)) throw new Error(`maxCompletionLength = ${lMax}: expected > 0`);
    for (const s of spans) fill(s, mode === 'grpo' ? 1 / (Math.max(count(s), 1) * b) : 1 / (b * lMax));
  } else {
    const live = spans.filter((s) => count(s) > 0); // verl: fully masked sequences are excluded (B′)
    const k = mode === 'seq-mean-token-sum-norm' ? (options.lossScaleFactor ?? width) : 1;
    if (!(k > 0)) throw new Error(`lossScaleFactor = ${k}: expected > 0`);
    // verl ≤ v0.7.0: `loss = torch.sum(seq_losses) / loss_scale_factor`, no seq-mean (6d8f2f6 … b8d91ef8).
    const sequences = mode === 'seq-mean-token-sum-norm' && compat === 'verl-legacy' ? 1 : live.length;
    for (const s of live) {
      const per = mode === 'seq-mean-token-mean' ? count(s) + SEQ_TOKEN_MEAN_EPS : 1;
      fill(s, 1 / (per * sequences * k));
    }
  }
  return w;
}

/**
 * `session-mean`'s per-token weights from session ids (pack's `sessionIds`, 0 = none): 1/n_s on each
 * of session s's n_s masked tokens, 0 elsewhere. pack fills `sessionWeights` with it; an objective
 * recomputes it when a rejection mask changed the token mass.
 */
export function sessionMeanWeights(sessionIds: ArrayLike<number>, mask: ArrayLike<number>): Float64Array {
  if (sessionIds.length !== mask.length)
    throw new Error(`sessionIds has ${sessionIds.length} entries, mask ${mask.length}; expected one id per token`);
  const mass = new Map<number, number>();
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] !== 1) continue;
    if (!(sessionIds[t] > 0))
      throw new Error(`sessionIds[${t}] = ${sessionIds[t]} on a masked token: expected a session id ≥ 1`);
    mass.set(sessionIds[t], (mass.get(sessionIds[t]) ?? 0) + 1);
  }
  const w = new Float64Array(mask.length);
  for (let t = 0; t < mask.length; t++) if (mask[t] === 1) w[t] = 1 / mass.get(sessionIds[t])!;
  return w;
}

/** Σ_t w_t·x_t over tokens with w_t ≠ 0. */
export function weightedSum(weights: ArrayLike<number>, x: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) if (weights[i] !== 0) sum += weights[i] * x[i];
  return sum;
}

/** Aggregates per-token losses `loss` ([rows, width]): `{ loss: L, weights: ∂L/∂l }`. */
export function aggregate(
  loss: ArrayLike<number>,
  input: AggregationInput,
  options: AggregationOptions = {},
): Aggregated {
  checkTable('loss', loss, input.rows, input.width);
  const weights = aggregationWeights(input, options);
  return { loss: weightedSum(weights, loss), weights };
}
