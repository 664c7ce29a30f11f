/**
 * The entropy bonus: the objective rewards the policy's per-token entropy H_t (of the distribution
 * the trainer scores, logits / T), L' = L − c · E, with E the entropy aggregated one of two ways:
 *
 *   'loss'        E = agg(H, mask', the policy loss's aggregation)      verl `actor.entropy_coeff`
 *   'token-mean'  E = Σ H_t m_t / max(Σ m_t, 1), m = mask' × keep       TRL `entropy_coef`, SkyRL `entropy_loss_coef`
 *
 * ∂L'/∂H_t = −c · w_t, w the aggregation's weights: the seed `Ops.logprobBackward` takes as
 * `dentropy`, so the gradient reaches every logit of the position (ops.ts).
 *
 * References:
 * - verl (verl-project/verl 1dda039, `verl/workers/actor/dp_actor.py` `update_policy`):
 *   `entropy_agg = agg_loss(entropy, response_mask, loss_agg_mode)`; `policy_loss -= entropy_agg * entropy_coeff`.
 * - TRL (huggingface/trl f2cd577, `trl/trainer/grpo_trainer.py` `_compute_loss`): the mean per-token
 *   entropy over the optimizer step's tokens, on `mask × entropy_mask` when `top_entropy_quantile` < 1,
 *   whatever the loss type ("L = L_policy − coef · H"). An optimizer step here is one mini-batch.
 * - SkyRL (NovaSky-AI/SkyRL a956457, `workers/worker.py`): `masked_mean(entropy, loss_mask) ·
 *   entropy_loss_coef` subtracted, per micro-batch (one mini-batch here).
 *
 * docs/rl-formulas.md §5.14. Not the coefficient's controller (adaptive-entropy.ts) nor the mask
 * of high-entropy tokens (entropy-mask.ts).
 */
import { aggregate, type AggregationInput, type AggregationOptions } from './aggregate';
import { checkFinite } from './table';

/** How the bonus aggregates the entropy: as the policy loss does (verl), or a token mean over the step (TRL, SkyRL). */
export type EntropyAggregation = 'loss' | 'token-mean';
export const ENTROPY_AGGREGATIONS: readonly EntropyAggregation[] = ['loss', 'token-mean'];

export interface EntropyBonusOptions {
  /** c: the bonus's coefficient (a negative c penalises entropy). */
  coef: number;
  aggregation: EntropyAggregation;
}

export interface EntropyBonus {
  /** −c · E: what the bonus adds to the loss (`loss/entropy`). */
  loss: number;
  /** E: the entropy as the bonus aggregates it. */
  entropy: number;
  /**
   * The token mean of H over mask' × keep (the tokens the bonus acts on), whatever the aggregation:
   * what TRL's adaptive controller measures (adaptive-entropy.ts); NaN without such tokens.
   */
  tokenMean: number;
  /** ∂loss/∂H_t = −c · w_t, `[rows, width]`. */
  dentropy: Float64Array;
}

/**
 * The bonus over `mass` (the objective's mask' and layout), `aggregation` the policy loss's; `keep`
 * (the high-entropy mask's, when set) narrows the token mean to the tokens that keep their loss, as TRL does.
 */
export function entropyBonus(
  entropy: ArrayLike<number>,
  mass: AggregationInput,
  aggregation: AggregationOptions | undefined,
  options: EntropyBonusOptions,
  keep?: ArrayLike<number>,
): EntropyBonus {
  const { coef } = options;
  if (!Number.isFinite(coef)) throw new Error(`entropyBonus: coef = ${coef}: expected a finite number`);
  if (!ENTROPY_AGGREGATIONS.includes(options.aggregation))
    throw new Error(
      `entropyBonus: aggregation = ${String(options.aggregation)}: expected one of ${ENTROPY_AGGREGATIONS.join(', ')}`,
    );
  checkFinite('entropy', entropy, mass.width, mass.mask);
  const active = Float64Array.from(mass.mask, (m, i) => m * (keep ? keep[i] : 1));
  let tokens = 0;
  let sum = 0;
  for (let i = 0; i < active.length; i++) {
    tokens += active[i];
    sum += active[i] * entropy[i];
  }
  const tokenMean = tokens > 0 ? sum / tokens : NaN;
  const agg =
    options.aggregation === 'loss'
      ? aggregate(entropy, mass, aggregation)
      : aggregate(entropy, { ...mass, mask: active }, { mode: 'token-mean' });
  const dentropy = new Float64Array(agg.weights.length);
  for (let i = 0; i < dentropy.length; i++) if (agg.weights[i] !== 0) dentropy[i] = -coef * agg.weights[i];
  return { loss: -coef * agg.loss + 0, entropy: agg.loss, tokenMean, dentropy };
}
