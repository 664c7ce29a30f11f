/**
 * Behavior correction for one packed batch: IS weights (TIS / IcePop), rejection masks and the
 * off-policy metrics, in verl's decoupled or bypass mode. The output composes with any policy
 * loss: `L = agg(l_t · weights_t, mask)` and `∂L/∂logp_t = w_agg,t · weights_t · g_t`.
 *
 * Reference: verl `compute_rollout_correction_and_rejection_mask` (decoupled: old vs rollout, once
 * per batch) and `compute_policy_loss_bypass_mode` (bypass: no old log-probs, the behavior
 * log-probs stand in as old, and the corrections compare the **detached** current policy with
 * behavior), docs/rl-formulas.md §7 and §9.1. The weights and the mask are constants: no gradient flows
 * through them (verl computes them under `no_grad` / `.detach()`). Not a loss, and it does not
 * decide where the mask is applied (verl applies a decoupled RS mask before advantages too).
 */
import type { Compat } from '../compat';
import { effectiveSampleSize, isWeights, parseIsThreshold, type IsWeightsOptions } from './is-weights';
import { offPolicyMetrics } from './off-policy-metrics';
import { rejectionMask, type RejectionThresholds } from './rejection';
import { sequenceSpans } from '../table';
import { checkLogProbs, clampLog, maskCount, type SequenceLayout } from './sequences';

/**
 * How bypass mode uses the IS weights. `'ppo_clip'` (verl default `loss_type`): computed for the
 * metrics only, not applied (the PPO ratio already is current/behavior). `'reinforce'` (verl
 * `loss_type: reinforce`): applied as computed. `'dew'` (the reference library): an IcePop band
 * only masks (weight 1 inside, 0 outside) and a TIS cap is refused.
 */
export type BypassLossType = 'ppo_clip' | 'reinforce' | 'dew';

export interface RolloutCorrectionInput extends SequenceLayout {
  /** Behavior (sampler) log-probs, `[rows, width]`. */
  behaviorLogp: ArrayLike<number>;
  /** Proximal-policy log-probs. Present: decoupled mode. Absent: bypass mode (verl `bypass_mode`). */
  oldLogp?: ArrayLike<number>;
  /** Current policy log-probs, read as constants. Required in bypass mode; used by `compat: 'rllm'` metrics. */
  logp?: ArrayLike<number>;
  /** IS weights (is-weights.ts). Default: absent, no IS weights (verl `rollout_is: null`). */
  importance?: IsWeightsOptions;
  /** Rejection options (rejection.ts). Default: absent, nothing rejected (verl `rollout_rs: null`). */
  rejection?: RejectionThresholds;
  /** Bypass-mode use of the weights. Default `'ppo_clip'` (verl). Ignored in decoupled mode. */
  bypassLossType?: BypassLossType;
  /** Off-policy metric convention: `'verl'` (default; training side = old, or current in bypass) or `'rllm'` (current vs behavior when `logp` is given). */
  compat?: Exclude<Compat, 'trl'>;
  /** Metric-key prefix. Default `'mismatch/'`. */
  prefix?: string;
}

export interface RolloutCorrectionResult {
  /** Per-token IS multiplier (a constant), 0 off the response mask; 1 on it when no weights apply. */
  weights: Float64Array;
  /** `responseMask × keep`: aggregate the corrected loss over this mask. */
  mask: Float64Array;
  /** Per-token keep flag of the rejection options (all 1 without them). */
  keep: Float64Array;
  mode: 'decoupled' | 'bypass';
  /** IS, rejection and off-policy metrics under `prefix`, always with `ess` and `kl`/`k3_kl` when any token is masked in. */
  metrics: Record<string, number>;
}

export function rolloutCorrection(input: RolloutCorrectionInput): RolloutCorrectionResult {
  const {
    behaviorLogp,
    oldLogp,
    logp,
    importance,
    rejection,
    bypassLossType = 'ppo_clip',
    compat = 'verl',
    prefix = 'mismatch/',
  } = input;
  const layout: SequenceLayout = {
    rows: input.rows,
    width: input.width,
    responseMask: input.responseMask,
    segmentIds: input.segmentIds,
  };
  sequenceSpans(layout, layout.responseMask, 'responseMask'); // checks the layout
  const mode = oldLogp ? 'decoupled' : 'bypass';
  const side = oldLogp ?? logp;
  if (!side)
    throw new Error('rolloutCorrection: bypass mode (no oldLogp) needs logp, the current policy read as a constant');
  if (!['ppo_clip', 'reinforce', 'dew'].includes(bypassLossType))
    throw new Error(`rolloutCorrection: unknown bypassLossType '${bypassLossType}'`);
  checkLogProbs(oldLogp ? 'oldLogp' : 'logp', side, layout);
  checkLogProbs('behaviorLogp', behaviorLogp, layout);
  const m = input.responseMask;
  const n = m.length;
  const logRatio = new Float64Array(n);
  for (let i = 0; i < n; i++) if (m[i]) logRatio[i] = side[i] - behaviorLogp[i];

  const metrics: Record<string, number> = {};
  const weights = Float64Array.from(m);
  if (importance) {
    if (mode === 'bypass' && bypassLossType === 'dew' && !parseIsThreshold(importance.threshold ?? 2).band) {
      throw new Error(
        'rolloutCorrection: a TIS cap is refused in bypass mode (dew): the PPO ratio already is current over behavior; use a band or pass oldLogp',
      );
    }
    const is = isWeights({ ...layout, logRatio, ...importance, prefix });
    Object.assign(metrics, is.metrics);
    if (mode === 'decoupled' || bypassLossType === 'reinforce') weights.set(is.weights);
    else if (bypassLossType === 'dew') for (let i = 0; i < n; i++) weights[i] = is.weights[i] > 0 ? 1 : 0;
    // bypass 'ppo_clip': verl computes the weights for its metrics and does not apply them.
  } else if (maskCount(m) > 0) {
    metrics[`${prefix}ess`] = effectiveSampleSize(
      logRatio.map((lr, i) => (m[i] ? Math.exp(clampLog(lr)) : 0)),
      m,
    );
  }
  const mask = Float64Array.from(m);
  const keep = new Float64Array(n).fill(1);
  if (rejection) {
    const rs = rejectionMask({ ...layout, logRatio, options: rejection, prefix });
    mask.set(rs.mask);
    keep.set(rs.keep);
    Object.assign(metrics, rs.metrics);
  }
  const metricSide = compat === 'rllm' && logp ? logp : side;
  Object.assign(metrics, offPolicyMetrics({ ...layout, logp: metricSide, behaviorLogp, compat, prefix }));
  return { weights, mask, keep, mode, metrics };
}
