/**
 * The off-policy sequence mask (OPSM, DeepSeek-V3.2 eq. 9): a sequence whose advantage is negative
 * and whose policy has drifted from the one that sampled it by more than δ loses its policy loss.
 *
 * Reference: TRL `GRPOTrainer.get_off_policy_mask` (huggingface/trl f2cd577,
 * `trl/trainer/grpo_trainer.py`, GRPOConfig `off_policy_mask_threshold`), docs/rl-formulas.md §7.6:
 *
 *   d_s   = Σ_{t∈s} m_t·(samp_t − sg(logp_t)) / max(Σ_{t∈s} m_t, 1)    (mean k1 "forward KL" of sequence s)
 *   keep_t = 1 if A_t ≥ 0 or d_s ≤ δ, else 0
 *
 * `samp` is the sampler's log-probs (TRL: vLLM's `sampling_per_token_logps`, else the old ones,
 * else `sg(logp)`), so the drift counts both the updates since sampling and any sampler/trainer
 * mismatch; `sg(logp)` is the *current* policy, not the proximal one: under several epochs a
 * sequence can become masked mid-batch. No clamp. A sequence is a packed chain (a row without
 * segmentIds). TRL's advantage is one per sequence; here the sign is read per token, which is the
 * same for outcome advantages and extends to GAE's. TRL multiplies the per-token policy loss by
 * keep before the aggregation, so a masked sequence still counts in the aggregation's denominator:
 * the objective applies keep as a correction weight (the policy term only, not the KL term),
 * never as a change of the mask. A constant: no gradient. Not verl's rejection masks
 * (rejection.ts), which ignore the advantage and compare against the proximal policy.
 */
import { sequenceSpans } from '../table';
import { checkLogProbs, type SequenceLayout } from './sequences';

export interface OffPolicySequenceMaskInput extends SequenceLayout {
  /** sg(logp): the current policy's log-probs, `[rows, width]`. */
  logp: ArrayLike<number>;
  /** The sampler's log-probs (or the old ones), `[rows, width]`. */
  samplingLogp: ArrayLike<number>;
  /** Per-token advantages, `[rows, width]`. */
  advantages: ArrayLike<number>;
  /** δ ≥ 0 (TRL `off_policy_mask_threshold`; its docs suggest 0.5). */
  threshold: number;
}

export interface OffPolicySequenceMask {
  /** 1 kept, 0 masked, `[rows, width]` (1 off the mask). */
  keep: Float64Array;
  /** Per token, its sequence's mean drift d_s (0 off the mask). */
  drift: Float64Array;
  /** `rl/opsm_masked_fraction` (masked tokens / mask tokens) and `rl/opsm_seq_masked_fraction` (masked sequences / sequences with tokens). */
  metrics: Record<string, number>;
}

export function offPolicySequenceMask(input: OffPolicySequenceMaskInput): OffPolicySequenceMask {
  const { rows, width, responseMask, logp, samplingLogp, advantages, threshold } = input;
  if (typeof threshold !== 'number' || !(threshold >= 0) || !Number.isFinite(threshold))
    throw new Error(`offPolicySequenceMask: threshold = ${threshold}: expected a finite number ≥ 0 (TRL suggests 0.5)`);
  checkLogProbs('logp', logp, input);
  checkLogProbs('samplingLogp', samplingLogp, input);
  checkLogProbs('advantages', advantages, input);
  const keep = new Float64Array(rows * width).fill(1);
  const drift = new Float64Array(rows * width);
  let tokens = 0;
  let masked = 0;
  let sequences = 0;
  let maskedSequences = 0;
  for (const sp of sequenceSpans(input, responseMask, 'responseMask')) {
    let sum = 0;
    let n = 0;
    for (let i = sp.start; i < sp.end; i++)
      if (responseMask[i]) {
        sum += samplingLogp[i] - logp[i];
        n++;
      }
    if (n === 0) continue;
    const d = sum / Math.max(n, 1);
    let any = false;
    for (let i = sp.start; i < sp.end; i++) {
      if (!responseMask[i]) continue;
      drift[i] = d;
      tokens++;
      if (advantages[i] < 0 && d > threshold) {
        keep[i] = 0;
        masked++;
        any = true;
      }
    }
    sequences++;
    if (any) maskedSequences++;
  }
  return {
    keep,
    drift,
    metrics: {
      'rl/opsm_masked_fraction': tokens > 0 ? masked / tokens : 0,
      'rl/opsm_seq_masked_fraction': sequences > 0 ? maskedSequences / sequences : 0,
    },
  };
}
