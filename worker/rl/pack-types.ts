/**
 * Options and results of `pack` (pack.ts), kept apart so that readers of a packed batch (the
 * objectives, the store, the batch view) can import the shapes without the packer.
 *
 * Every array is `[rows, width]`, row-major, aligned with `inputIds`: entry t describes id t.
 * Ids, segments, positions, versions, call and session indices are `Int32Array`s; everything
 * real-valued (masks included, so they feed the objectives as they are) is a `Float64Array`.
 * Reference: dew `pack` and `RESPONSE_MASK_KEY`/`OLD_LOG_PROBS_KEY` (docs/rl-core.md "Packing").
 */
import type {
  AdvantageDetails,
  AdvantageOptions,
  GroupDetail,
  OutcomeEstimator,
  TokenEstimator,
} from './advantages/index';
import type { Chain } from './pack-chains';
import type { Status, TerminationReason, Truncation } from './types';

export interface PackOptions {
  /** Row count of the batch: pads to it, and refuses a batch that needs more. Default: exactly the rows needed. */
  rows?: number;
  /**
   * How each trained session's advantage is computed from the rewards of its `(task, group)`:
   * an outcome estimator; `'none'` (all zero, e.g. for GAE on the packed arrays afterwards); or
   * `{ given }`, one advantage per input session computed elsewhere. Default `'grpo'` (dew's
   * `'group'` estimator).
   */
  estimator?: OutcomeEstimator | 'none' | { given: ArrayLike<number> };
  /** Options of the outcome estimator, `compat` included. Default: `{}` (verl's conventions). */
  advantage?: AdvantageOptions;
  /** `'mask'`: truncated sessions carry no loss mass; `'score'`: they train on their reward. Default `'mask'` (dew `pack`; dew SampledRollout passes `'score'`). */
  truncation?: Truncation;
  /**
   * Mask the sessions whose advantage is exactly 0 (all-equal groups under GRPO/RLOO); under
   * estimator `'none'`, the sessions of the groups of two or more whose rewards are all equal (an
   * estimator that runs after packing, OTB, gives them no exact 0). Default `false` (verl, TRL,
   * rLLM keep them in the token mass); Flow-GRPO and dew FlowRollout mask them.
   */
  maskZeroAdvantage?: boolean;
  /**
   * Which sessions are placed. `'trained'`: those whose status trains under `truncation`.
   * `'all'`: every session, the others with zero response mask (to show them). `'carried'`: only
   * those that carry loss mass, so sessions masked for a zero advantage are not packed at all
   * (they add nothing to any loss term, KL included, nor to its token count: training on the
   * batch is the same, with fewer rows to compute). Default `'trained'` (dew).
   */
  include?: 'trained' | 'all' | 'carried';
}

/** How many sessions ended how. Infrastructure failures are the `failed` ones. */
export interface SessionCounts {
  total: number;
  /** Sessions that carry loss mass (after truncation and zero-advantage masking). */
  trained: number;
  byStatus: Record<Status, number>;
  byTermination: Partial<Record<TerminationReason, number>>;
}

/** One chain and where it went. */
export interface ChainPlacement extends Chain {
  row: number;
  offset: number;
  segment: number;
}

export interface PackedBatch {
  ok: true;
  rows: number;
  width: number;
  /** The chains' ids; 0 on padding (tell padding by `segmentIds`, since 0 may be a real id). */
  inputIds: Int32Array;
  /** 1-based per chain within a row, in placement order; 0 = padding. */
  segmentIds: Int32Array;
  /** Restart at 0 at each chain start; 0 on padding. */
  positions: Int32Array;
  /** 1 on sampled ids of sessions that carry loss mass, 0 elsewhere. */
  responseMask: Float64Array;
  /** On sampled ids: the sampler's log-probability; 0 elsewhere. */
  behaviorLogProbs: Float64Array;
  /** On sampled ids: the raw log-probability (the unfiltered model at the temperature); 0 elsewhere. `null` when no call recorded one. */
  oldLogProbs: Float64Array | null;
  /** On sampled ids: the call's policy version; -1 elsewhere. */
  versions: Int32Array;
  /** On sampled ids: the call's index in its session's `calls`; -1 elsewhere. */
  callIndex: Int32Array;
  /** 1 + the session's index in the input, over all its chain tokens; 0 = padding. */
  sessionIds: Int32Array;
  /** The session's advantage repeated over its chain tokens (0 for sessions without loss mass); under GAE or OTB, per id. Losses multiply by `responseMask`. */
  advantages: Float64Array;
  /**
   * Session-mean weights: `1/n_s` on each of session s's `n_s` trainable tokens, 0 elsewhere, so
   * they sum to S, the sessions with ≥ 1 trainable token; the session-mean loss is
   * `Σ sessionWeights·l / S` (aggregate.ts normalises by that sum).
   */
  sessionWeights: Float64Array;
  /** The session's reward on its last trainable id, 0 elsewhere (GAE's token-level rewards). */
  tokenRewards: Float64Array;
  /** Per id, the sampler's kept ids (CSR: id t's are `ids[offsets[t] .. offsets[t+1])`; empty = no filter). `null` when no call recorded one. */
  support: { offsets: Int32Array; ids: Int32Array } | null;
  /** Every placed chain, in placement order. */
  chains: ChainPlacement[];
  /** Per input session: its advantage (0 when it carries no loss mass). */
  sessionAdvantages: Float64Array;
  /** How the estimator reached those advantages, for views; null under estimator `'none'` (until OTB fills it) or `{ given }`. */
  advantageDetails: PackedAdvantageDetails | null;
  /** Rows the chains fill (≤ rows). */
  rowsNeeded: number;
  /** Real (non-padding) ids. */
  realTokens: number;
  /** realTokens / (rows × width); 0 for an empty batch. */
  efficiency: number;
  counts: SessionCounts;
  /** `batch/*`, `sessions/*`, `reward/*` figures for logging, e.g. `reward/frac_reward_zero_std`. */
  metrics: Record<string, number>;
}

/**
 * The outcome estimator's working as pack ran it (`outcomeAdvantageDetails` on the trained
 * sessions, keyed by `(task, group)`, with their sampled-id counts): its resolved settings, per
 * group the baseline and the σ it divided by, any batch normalisation. Indices are the input
 * sessions', so a view needs nothing else to line them up.
 */
export interface PackedAdvantageDetails {
  /** OTB's (a per-token estimator) are written after scoring (worker/train/otb.ts), each group's `baseline` null and each session's its mean B_t. */
  estimator: OutcomeEstimator | TokenEstimator;
  settings: AdvantageDetails['settings'];
  /** Per group in grouping order; `members` are input session indices (trained sessions only). */
  groups: GroupDetail[];
  /** Per input session, the baseline subtracted from its score; 0 for a session in no group (not trained). */
  baselines: Float64Array;
  batch: AdvantageDetails['batch'];
}

/** An expected outcome, not an error: the batch does not fit. */
export interface PackRefusal {
  ok: false;
  /** `'rows'`: more rows needed than `rows`; `'width'`: a chain is longer than `width`. */
  reason: 'rows' | 'width';
  /** Rows the batch would need (a too-long chain counted as one row each). */
  rowsNeeded: number;
  message: string;
}

export type PackResult = PackedBatch | PackRefusal;
