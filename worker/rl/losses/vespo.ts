/**
 * `vespo`: Variational Sequence-Level Soft Policy Optimization, REINFORCE weighted by a detached
 * Gamma-shaped function of the sequence's importance ratio, in place of a clip.
 *
 *   log w_i = clamp(Σ_{t∈i} m_t·clamp(sg logp_t − old_t, ±20), ln 1e-8, 20)   (a sum, not a mean)
 *   (k, λ) = (k_pos, λ_pos) where A_t ≥ 0, (k_neg, λ_neg) otherwise;  λ ← max(λ, 1e-4)
 *   φ = exp(λ + k·log w − λ·w)     (φ(1) = 1; 0 where it is not finite)
 *   l = −sg(φ)·A·logp;  g = −φ·A
 *
 * φ rises like w^k below 1 and decays like e^{−λw} above it. The value contains logp itself and is
 * not a surrogate value. Not the aggregation (TRL aggregates vespo like dapo: token-mean here). TRL
 * folds vLLM's token IS ratios into w (and then does not multiply the loss by them); here any
 * behavior correction multiplies per token as for every loss, and w is against `old` only. A
 * sequence is a packed chain; (k, λ) follow each token's advantage (TRL's is one per sequence).
 *
 * Reference: TRL `GRPOTrainer.get_gamma_weights` and `_compute_loss` `loss_type == "vespo"`
 * (huggingface/trl f2cd577, trl/trainer/grpo_trainer.py); arXiv 2602.10693. verl has no such loss.
 * docs/rl-formulas.md §5.12.
 */
import { checkContext, LOG_RATIO_CLAMP, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface VespoOptions {
  /** k for A ≥ 0, the power below w = 1 (TRL `vespo_k_pos`). Default 2. */
  kPos?: number;
  /** λ for A ≥ 0, the decay above w = 1 (TRL `vespo_lambda_pos`). Default 3. */
  lambdaPos?: number;
  /** k for A < 0 (TRL `vespo_k_neg`). Default 3. */
  kNeg?: number;
  /** λ for A < 0 (TRL `vespo_lambda_neg`). Default 2. */
  lambdaNeg?: number;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function vespoSettings(o: VespoOptions = {}) {
  return { kPos: o.kPos ?? 2, lambdaPos: o.lambdaPos ?? 3, kNeg: o.kNeg ?? 3, lambdaNeg: o.lambdaNeg ?? 2 };
}

/** TRL's floor on log w: ln(1e-8), so that w itself is never below 1e-8. */
const LOG_W_MIN = Math.log(1e-8);

/** φ(w) = exp(λ + k·log w − λ·w) from log w, with λ floored at 1e-4 and a non-finite φ taken as 0 (TRL `nan_to_num`). */
export function gammaWeight(logW: number, k: number, lambda: number): number {
  const l = Math.max(lambda, 1e-4);
  const phi = Math.exp(l + k * logW - l * Math.exp(logW));
  return Number.isFinite(phi) ? phi : 0;
}

export function vespoLoss(ctx: PolicyLossContext, options: VespoOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'vespo', { old: true });
  const s = vespoSettings(options);
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const phiSeq = new Float64Array(c.n); // φ on the first masked token of each chain, for the metric
  const first = new Float64Array(c.n);
  for (const span of c.spans) {
    let sum = 0;
    for (let t = span.start; t < span.end; t++) {
      if (c.mask[t]) sum += Math.min(Math.max(c.det[t] - c.old[t], -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
    }
    const logW = Math.min(Math.max(sum, LOG_W_MIN), LOG_RATIO_CLAMP);
    let seen = false;
    for (let t = span.start; t < span.end; t++) {
      if (!c.mask[t]) continue;
      const a = c.adv[t];
      const phi = a >= 0 ? gammaWeight(logW, s.kPos, s.lambdaPos) : gammaWeight(logW, s.kNeg, s.lambdaNeg);
      loss[t] = -phi * a * c.logp[t];
      dlogp[t] = -phi * a;
      if (!seen) [phiSeq[t], first[t], seen] = [phi, 1, true];
    }
  }
  // TRL's `vespo/phi_seq_mean`: the mean of φ over sequences (here chains with a masked token).
  return localResult(loss, dlogp, { phi_seq_mean: verlMean(phiSeq, first) });
}
