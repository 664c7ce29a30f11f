/**
 * The high-entropy token mask ("Beyond the 80/20 rule", Wang et al. 2025, arXiv:2506.01939): only the
 * top-ρ quantile of the batch's trainable tokens by policy entropy keep their policy loss.
 *
 * Reference: TRL `GRPOTrainer.get_high_entropy_mask` (huggingface/trl f2cd577,
 * `trl/trainer/grpo_trainer.py`, GRPOConfig `top_entropy_quantile` ρ), docs/rl-formulas.md §5.13:
 *
 *   τ      = quantile({H_t : m_t = 1}, 1 − ρ)      (torch.quantile: linear interpolation between order statistics)
 *   keep_t = m_t · 1[H_t ≥ τ]
 *
 * H is the entropy of the distribution the trainer scores (logits / T, as the sampler's), read from
 * the current forward; the quantile is over every trainable token the objective is given (TRL: the
 * micro-batch gathered across processes). ρ = 1 keeps every token (TRL skips the mask), ρ = 0 only
 * those at the maximum; ties at τ are kept. TRL multiplies the per-token policy loss by the mask
 * before its aggregation, so the objective applies it as a weight on the policy term: the dropped
 * tokens stay in the denominators and in the KL term. No trainable token: nothing kept. A constant
 * (no gradient). Not an entropy bonus.
 */
import { checkFinite, checkTable, type TableLayout } from './table';

export interface EntropyMaskInput extends TableLayout {
  /** Per-token policy entropy, `[rows, width]`. */
  entropy: ArrayLike<number>;
  /** 1 on trainable tokens. */
  mask: ArrayLike<number>;
  /** ρ ∈ [0, 1]: the share of tokens, by entropy from the top, that keep their loss (TRL suggests 0.2). */
  quantile: number;
}

export interface EntropyMask {
  /** 1 kept, 0 dropped (0 off the mask), `[rows, width]`. */
  keep: Float64Array;
  /** τ, the entropy a kept token reaches (NaN without trainable tokens). */
  threshold: number;
  /** `rl/entropy_mask_kept_fraction` (kept / trainable tokens) and `rl/entropy_mask_threshold` (τ). */
  metrics: Record<string, number>;
}

/** torch.quantile's default ('linear'): x sorted ascending, position q·(n − 1), interpolated between its neighbours. */
export function linearQuantile(sorted: ArrayLike<number>, q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function highEntropyMask(input: EntropyMaskInput): EntropyMask {
  const { rows, width, entropy, mask, quantile } = input;
  if (typeof quantile !== 'number' || !(quantile >= 0 && quantile <= 1))
    throw new Error(`highEntropyMask: quantile = ${quantile}: expected a number in [0, 1] (TRL suggests 0.2)`);
  checkTable('entropy', entropy, rows, width);
  checkTable('mask', mask, rows, width);
  checkFinite('entropy', entropy, width, mask);
  const values: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) values.push(entropy[i]);
  const keep = new Float64Array(rows * width);
  if (values.length === 0)
    return { keep, threshold: NaN, metrics: { 'rl/entropy_mask_kept_fraction': 0, 'rl/entropy_mask_threshold': 0 } };
  values.sort((a, b) => a - b);
  const threshold = linearQuantile(values, 1 - quantile);
  let kept = 0;
  for (let i = 0; i < mask.length; i++)
    if (mask[i] && entropy[i] >= threshold) {
      keep[i] = 1;
      kept++;
    }
  return {
    keep,
    threshold,
    metrics: { 'rl/entropy_mask_kept_fraction': kept / values.length, 'rl/entropy_mask_threshold': threshold },
  };
}
