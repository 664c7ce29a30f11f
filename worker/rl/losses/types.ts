/**
 * The contract every policy loss in the registry follows: the per-token context it reads and the
 * result it returns. Types only, plus the two constructors of results: a local gradient, and one a sequence's tokens share.
 *
 * A loss returns per-token `l_t` and `g_t = ∂l_t/∂logp_t` with the reference's stop-gradients
 * (docs/rl-formulas.md §2, §5): it never aggregates. The objective picks the aggregation weights
 * `w_t` (aggregate.ts), multiplies in any behavior-correction weights `c_t` (detached), and calls
 * `backward(w ⊙ c)` for `∂(Σ_t w_t c_t l_t)/∂logp`; `aggregatePolicyLoss` does exactly that.
 */
import type { TableLayout } from '../table';

/** The inputs of a policy loss; `segmentIds` (absent: each row is a sequence) gives gspo its chains. */
export interface PolicyLossContext extends TableLayout {
  /** log π_θ of each sampled id, `[rows, width]`: the only differentiable input. */
  logp: ArrayLike<number>;
  /**
   * Proximal policy log-probs, the ratio denominator (verl `old_log_prob`, TRL
   * `old_per_token_logps`, rLLM `logp_old`); in bypass mode the objective passes the behavior
   * log-probs here. Needed by ppo, gspo, cispo, dppo_tv, dppo_kl, echo; reinforce reports ppo_kl from it.
   */
  oldLogp?: ArrayLike<number>;
  /** Sampler log-probs (rLLM `logp_rollout`). Needed by icepop and reinforce_kl. */
  behaviorLogp?: ArrayLike<number>;
  /** Per-token advantages, `[rows, width]`. */
  advantages: ArrayLike<number>;
  /** 1 on tokens that carry loss mass (the response mask, after any rejection mask), 0 elsewhere. */
  mask: ArrayLike<number>;
  /** 1 on environment-observation tokens (rLLM `obs_mask`): echo's cross-entropy term. */
  observationMask?: ArrayLike<number>;
  /**
   * The value every stop-gradient sg(logp) reads; default `logp`. Only a finite-difference check
   * sets it: holding it at the base point while `logp` moves reproduces autograd's gradient.
   */
  logpDetached?: ArrayLike<number>;
}

/**
 * An extra term a loss adds with its own mask (echo's observation cross-entropy): the objective
 * adds `coefficient · Σ_t v_t·loss_t` with `v` the same aggregation mode's weights over `mask`,
 * and `coefficient · v_t·dlogp_t` to the gradient. Correction weights never multiply it.
 */
export interface AuxiliaryTerm {
  name: string;
  coefficient: number;
  mask: Float64Array;
  loss: Float64Array;
  dlogp: Float64Array;
}

export interface PolicyLossResult {
  /** Per-token loss l_t, `[rows, width]`, 0 off the mask. */
  loss: Float64Array;
  /** Per-token ∂l_t/∂logp_t (other tokens held fixed), 0 off the mask. */
  dlogp: Float64Array;
  /**
   * True when ∂(Σ w l)/∂logp_t = w_t·dlogp_t for any weights (every loss but gspo with
   * `compat: 'trl'`, whose sequence ratio couples a chain's tokens).
   */
  local: boolean;
  /** ∂(Σ_t weights_t·l_t)/∂logp_t, exact for any per-token (detached) weights, `[rows, width]`. */
  backward(weights: ArrayLike<number>): Float64Array;
  /** Unprefixed metric names of the reference (verl `pg_clipfrac`, `ppo_kl`, ...); the objective namespaces them. */
  metrics: Record<string, number>;
  /** Extra terms with their own masks (echo); empty for most losses. */
  auxiliary: AuxiliaryTerm[];
}

export type PolicyLossFn<O> = (ctx: PolicyLossContext, options?: O) => PolicyLossResult;

/** A result whose gradient is local: `backward(w) = w ⊙ dlogp`. */
export function localResult(
  loss: Float64Array,
  dlogp: Float64Array,
  metrics: Record<string, number>,
  auxiliary: AuxiliaryTerm[] = [],
): PolicyLossResult {
  return {
    loss,
    dlogp,
    local: true,
    backward(weights) {
      const g = new Float64Array(dlogp.length);
      for (let i = 0; i < g.length; i++) if (weights[i] !== 0) g[i] = weights[i] * dlogp[i];
      return g;
    },
    metrics,
    auxiliary,
  };
}

/**
 * A result whose tokens share a sequence factor s_k (geo_mean's ratio, TRL's sequence ratio):
 * l_u depends on logp_t only through s_k for u, t in sequence k, so with a_u = ∂l_u/∂s_k and
 * b_t = ∂s_k/∂logp_t, `backward(w)_t = b_t · Σ_{u∈k} w_u a_u` and `dlogp_t = a_t b_t` (the diagonal).
 * `seqOf[t]` is t's sequence index (−1 off the mask), `count` the number of sequences.
 */
export function coupledResult(
  loss: Float64Array,
  seqOf: Int32Array,
  count: number,
  a: Float64Array,
  b: Float64Array,
  metrics: Record<string, number>,
): PolicyLossResult {
  const dlogp = new Float64Array(loss.length);
  for (let t = 0; t < loss.length; t++) if (seqOf[t] >= 0) dlogp[t] = a[t] * b[t];
  return {
    loss,
    dlogp,
    local: false,
    backward(weights) {
      const shared = new Float64Array(count);
      for (let u = 0; u < loss.length; u++)
        if (seqOf[u] >= 0 && weights[u] !== 0) shared[seqOf[u]] += weights[u] * a[u];
      const g = new Float64Array(loss.length);
      for (let t = 0; t < loss.length; t++) if (seqOf[t] >= 0) g[t] = shared[seqOf[t]] * b[t];
      return g;
    },
    metrics,
    auxiliary: [],
  };
}
