/**
 * What every RL objective reads and returns (docs/design.md "Conventions"):
 * plain `[rows, width]` row-major tables of a packed batch in, the loss, the per-token gradient
 * seed `dlogp` for the model's backward pass and `group/name` metrics out. Types only.
 *
 * The names map onto pack's output (`PackedBatch`): `oldLogp` ← `oldLogProbs`, `behaviorLogp` ←
 * `behaviorLogProbs`, and `advantages`, `responseMask`, `segmentIds`, `sessionWeights`,
 * `sessionIds` as they are; `logp` is the model's score of each id given its own chain's prefix.
 */
import type { TableLayout } from '../table';

export interface ObjectiveInput extends TableLayout {
  /** log π_θ of each packed id, `[rows, width]`: the differentiable input (dew `packed_log_probs`). */
  logp: ArrayLike<number>;
  /** Proximal-policy log-probs. Present: decoupled mode. Absent: bypass mode, `behaviorLogp` stands in as old (dew `OLD_LOG_PROBS_KEY`). */
  oldLogp?: ArrayLike<number>;
  /** Sampler log-probs. Present: the behavior corrections and the `mismatch/*` metrics run. */
  behaviorLogp?: ArrayLike<number>;
  /** Frozen reference log-probs. Required when `beta > 0`; with β = 0 read only for the `rl/kl` metric. */
  refLogp?: ArrayLike<number>;
  /** Per-token advantages (pack's group advantages, or GAE's). */
  advantages: ArrayLike<number>;
  /** 1 on the sampled ids that carry loss mass, 0 elsewhere. */
  responseMask: ArrayLike<number>;
  /** Packed chain ids (1-based per row, 0 = padding): a sequence (gspo's ratio, the seq-mean modes, the sequence masks) is a chain. */
  segmentIds: ArrayLike<number>;
  /** `session-mean` weights, 1/n_s per trainable token (pack's `sessionWeights`). */
  sessionWeights?: ArrayLike<number>;
  /** pack's `sessionIds` (0 = none): `session-mean` recomputes its weights from them over the tokens a rejection mask keeps. */
  sessionIds?: ArrayLike<number>;
  /** 1 on environment-observation tokens: the `echo` loss's cross-entropy mass. */
  observationMask?: ArrayLike<number>;
  /** Per-token policy entropy: the `rl/entropy` metric, the `topEntropyQuantile` mask and the `entropyBonus` term. */
  entropy?: ArrayLike<number>;
  /** The value every stop-gradient sg(logp) reads; default `logp`. Set only by finite-difference checks. */
  logpDetached?: ArrayLike<number>;
}

export interface ObjectiveOutput {
  /** The scalar loss. */
  loss: number;
  /** ∂loss/∂logp per token, `[rows, width]`: the seed of the model's backward pass. */
  dlogp: Float64Array;
  /** `group/name` metrics (`loss/total`, `rl/pg_clipfrac`, `mismatch/kl`, ...). */
  metrics: Record<string, number>;
}
