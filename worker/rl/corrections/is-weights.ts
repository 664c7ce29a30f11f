/**
 * Rollout importance-sampling weights: TIS (upper cap) and IcePop (band), token or sequence
 * level, with optional batch normalisation and verl's IS metrics including the ESS.
 *
 * Reference: verl `rollout_corr_helper.py` (`compute_rollout_correction_weights`,
 * `compute_is_metrics`), docs/rl-formulas.md §7.1. Input is verl's `log_ratio` = training-side log-prob
 * minus rollout (behavior) log-prob. The weights are **constants** (verl detaches them): a policy
 * loss multiplies its per-token loss by them and its gradient by the same numbers; no gradient
 * flows through them. Not a loss, and not the rejection masks (rejection.ts).
 *
 * Deviations: a batch with no mask tokens returns zero weights and no metrics (verl raises); an
 * IcePop band may have `lo = 0` and `hi = ∞` (verl wants `lo > 0`), as limiting cases.
 */
import {
  clampLog,
  checkLogProbs,
  maskCount,
  maxOf,
  mean,
  minOf,
  sequenceSums,
  unbiasedStd,
  verlMaskedMeanOf,
  VERL_MEAN_EPS,
  type SequenceLayout,
} from './sequences';
import { sequenceSpans } from '../table';

/** A number is a TIS cap (verl `rollout_is_threshold: 2.0`); a pair `[lo, hi]` is an IcePop band (verl `"lo_hi"`). */
export type IsThreshold = number | readonly [number, number];

export interface IsWeightsOptions {
  /** `'token'` (verl default `rollout_is: token`) or `'sequence'`: exp of the summed log-ratio of the sequence, broadcast. */
  level?: 'token' | 'sequence';
  /** TIS cap or IcePop band. Default 2.0 (verl `rollout_is_threshold`). `Infinity` gives the raw ratio. */
  threshold?: IsThreshold;
  /** Divide the weights by their batch mean (per-sequence means at sequence level). Default false (verl `rollout_is_batch_normalize`). */
  batchNormalize?: boolean;
  /** Metric-key prefix. Default `'mismatch/'` (verl uses `rollout_corr/`). */
  prefix?: string;
}

export interface IsWeightsInput extends SequenceLayout, IsWeightsOptions {
  /** Training-side log-prob minus behavior log-prob, `[rows, width]` (verl `old_log_prob − rollout_log_prob`). */
  logRatio: ArrayLike<number>;
}

export interface IsWeightsResult {
  /** Applied per-token weights (constants), 0 off the response mask. */
  weights: Float64Array;
  /** The masked raw ratio before the cap or band (`exp(clamp(lr, ±20))`, per token or per sequence). */
  raw: Float64Array;
  /** verl's `rollout_is_*` metrics under `prefix`, with the ESS as `<prefix>ess`. */
  metrics: Record<string, number>;
}

/** Validates a threshold and returns `{ lower, upper, band }`; a cap's lower is verl's 1/C (metrics only). */
export function parseIsThreshold(threshold: IsThreshold): { lower: number; upper: number; band: boolean } {
  if (typeof threshold === 'number') {
    if (!(threshold > 0)) throw new Error(`IS threshold: expected a cap > 0 (Infinity allowed), got ${threshold}`);
    return { lower: 1 / threshold, upper: threshold, band: false };
  }
  const [lo, hi] = threshold;
  if (!(lo >= 0) || !(hi > 0) || !(lo <= hi)) {
    throw new Error(`IS band: expected 0 ≤ lo ≤ hi and hi > 0, got [${lo}, ${hi}]`);
  }
  return { lower: lo, upper: hi, band: true };
}

/**
 * verl's normalised ESS: `1 / masked_mean((w̃ / (masked_mean(w̃) + 1e-8))²)` with `w̃ = clamp(w, 0, cap)`;
 * in (0, 1], and 1 (to 1e-8) for equal weights.
 */
export function effectiveSampleSize(weights: ArrayLike<number>, mask: ArrayLike<number>, cap = Infinity): number {
  const c = (i: number) => Math.min(Math.max(weights[i], 0), cap);
  const mu = verlMaskedMeanOf(mask, c);
  return 1 / verlMaskedMeanOf(mask, (i) => (c(i) / (mu + VERL_MEAN_EPS)) ** 2);
}

export function isWeights(input: IsWeightsInput): IsWeightsResult {
  const { logRatio, level = 'token', threshold = 2, batchNormalize = false, prefix = 'mismatch/' } = input;
  if (level !== 'token' && level !== 'sequence')
    throw new Error(`IS level: expected 'token' or 'sequence', got ${String(level)}`);
  const spans = sequenceSpans(input, input.responseMask, 'responseMask');
  checkLogProbs('logRatio', logRatio, input);
  const { lower, upper, band } = parseIsThreshold(threshold);
  const m = input.responseMask;
  const raw = new Float64Array(m.length);
  const weights = new Float64Array(m.length);
  const seqLog = sequenceSums(spans, m, (i) => logRatio[i]).sum; // unclamped Σ m·lr per sequence
  if (level === 'token') {
    for (let i = 0; i < m.length; i++) raw[i] = m[i] ? Math.exp(clampLog(logRatio[i])) : 0;
  } else {
    spans.forEach((sp, k) => {
      const w = Math.exp(clampLog(seqLog[k]));
      for (let i = sp.start; i < sp.end; i++) raw[i] = m[i] ? w : 0;
    });
  }
  for (let i = 0; i < m.length; i++) {
    weights[i] = band ? (raw[i] >= lower && raw[i] <= upper ? raw[i] : 0) : Math.min(raw[i], upper);
  }
  if (maskCount(m) === 0) return { weights, raw, metrics: {} };

  const metrics: Record<string, number> = {};
  const put = (k: string, v: number) => (metrics[prefix + k] = v);
  put(
    'rollout_is_mean',
    verlMaskedMeanOf(m, (i) => weights[i]),
  );
  if (level === 'sequence') {
    put('rollout_is_max', Math.exp(Math.min(maxOf(seqLog), 20)));
    put('rollout_is_min', Math.exp(minOf(seqLog)));
    put('rollout_is_ratio_fraction_high', mean(seqLog.map((s) => (s > Math.log(upper) ? 1 : 0))));
    put('rollout_is_ratio_fraction_low', mean(seqLog.map((s) => (s < Math.log(lower) ? 1 : 0))));
  } else {
    put(
      'rollout_is_ratio_fraction_high',
      verlMaskedMeanOf(m, (i) => (raw[i] > upper ? 1 : 0)),
    );
    put(
      'rollout_is_ratio_fraction_low',
      verlMaskedMeanOf(m, (i) => (raw[i] < lower ? 1 : 0)),
    );
    let hi = -Infinity;
    let lo = Infinity;
    for (let i = 0; i < m.length; i++) {
      if (!m[i]) continue;
      hi = Math.max(hi, weights[i]);
      lo = Math.min(lo, weights[i]);
    }
    put('rollout_is_max', hi);
    put('rollout_is_min', lo);
  }
  const capped = (i: number) => Math.min(Math.max(weights[i], 0), upper);
  if (maskCount(m) > 1) {
    const mu = verlMaskedMeanOf(m, capped);
    put('rollout_is_std', Math.sqrt(Math.max(verlMaskedMeanOf(m, (i) => capped(i) ** 2) - mu * mu, 0)));
  } else put('rollout_is_std', 0);
  put('ess', effectiveSampleSize(weights, m, upper));

  const seqW = sequenceSums(spans, m, (i) => weights[i]);
  const seqRaw = sequenceSums(spans, m, (i) => raw[i]);
  const seqMean = seqW.sum.map((s, k) => s / (seqW.count[k] + VERL_MEAN_EPS));
  const rawSeqMean = seqRaw.sum.map((s, k) => s / (seqRaw.count[k] + VERL_MEAN_EPS));
  put('rollout_is_seq_mean', mean(seqMean));
  put('rollout_is_seq_std', unbiasedStd(seqMean));
  put('rollout_is_seq_max', maxOf(seqMean));
  put('rollout_is_seq_min', minOf(seqMean));
  put('rollout_is_seq_max_deviation', maxOf(seqMean.map((s) => Math.abs(s - 1))));
  put('rollout_is_seq_fraction_high', mean(rawSeqMean.map((s) => (s > upper ? 1 : 0))));
  put('rollout_is_seq_fraction_low', mean(rawSeqMean.map((s) => (s < lower ? 1 : 0))));
  if (band)
    put(
      'rollout_is_oob_ratio',
      verlMaskedMeanOf(m, (i) => (raw[i] < lower || raw[i] > upper ? 1 : 0)),
    );

  if (batchNormalize) {
    let factor: number;
    if (level === 'token') factor = verlMaskedMeanOf(m, (i) => weights[i]);
    else {
      let s = 0;
      let valid = 0;
      seqMean.forEach((w, k) => {
        if (seqW.count[k] === 0) return;
        s += w;
        valid += 1;
      });
      factor = s / Math.max(valid, 1e-8);
    }
    if (factor > 1e-8) {
      for (let i = 0; i < weights.length; i++) weights[i] /= factor;
      put('rollout_is_batch_norm_factor', factor);
    } else put('rollout_is_batch_norm_factor', 1);
  }
  return { weights, raw, metrics };
}
