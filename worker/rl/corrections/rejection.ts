/**
 * Rejection masks (verl "RS"): drop tokens, or whole sequences, whose divergence statistic
 * between the training side and the behavior policy is out of bounds.
 *
 * Reference: verl `rollout_corr_helper.py` (`compute_rollout_rejection_mask`,
 * `compute_rs_metrics`), docs/rl-formulas.md §7.2. With `lr = clamp(logRatio, ±20)` (training minus
 * behavior): **k1 = −lr** (log π_rollout − log π_train: verl's sign, so a k1 band `[lo, hi]` keeps
 * ρ = π_train/π_rollout ∈ [1/hi, 1/lo]), k2 = ½lr², k3 = e^lr − 1 − lr. k1 options keep
 * `log lo ≤ stat ≤ log hi` (a single number u means `[1/u, u]`); k2/k3 options keep `stat ≤ hi`.
 * Options chain with AND. A sequence is a packed chain, or a row without `segmentIds`.
 * The mask is a constant (no gradient). Not the IS weights (is-weights.ts). verl's `binary_kl`
 * option is not ported.
 */
import {
  clampLog,
  checkLogProbs,
  maskCount,
  maxOf,
  mean,
  minOf,
  sequenceSums,
  verlMaskedMeanOf,
  VERL_MEAN_EPS,
  type SequenceLayout,
} from './sequences';
import { sequenceSpans, type SegmentSpan } from '../table';

export const REJECTION_OPTIONS = [
  'token_k1',
  'token_k2',
  'token_k3',
  'seq_sum_k1',
  'seq_sum_k2',
  'seq_sum_k3',
  'seq_mean_k1',
  'seq_mean_k2',
  'seq_mean_k3',
  'seq_max_k2',
  'seq_max_k3',
] as const;
export type RejectionOption = (typeof REJECTION_OPTIONS)[number];

/**
 * Per option its threshold: k1 options take `[lo, hi]` ratio bounds or one number u (= `[1/u, u]`,
 * verl); k2/k3 options take one upper bound. `Infinity`/`[0, Infinity]` keep everything.
 * verl has no default threshold (`rollout_rs_threshold` is required); neither do we.
 */
export type RejectionThresholds = Partial<Record<RejectionOption, number | readonly [number, number]>>;

export interface RejectionInput extends SequenceLayout {
  /** Training-side log-prob minus behavior log-prob, `[rows, width]`. */
  logRatio: ArrayLike<number>;
  /** The options to apply, each with its threshold. */
  options: RejectionThresholds;
  /** Metric-key prefix. Default `'mismatch/'` (verl uses `rollout_corr/`). */
  prefix?: string;
}

export interface RejectionResult {
  /** `responseMask × keep`: the mask the loss should aggregate over. */
  mask: Float64Array;
  /** 1 where every option keeps the token (sequence options broadcast over the sequence), else 0. */
  keep: Float64Array;
  /** Per option `rollout_rs_<opt>_{masked_fraction,seq_masked_fraction,mean,max,min}`, and overall `rollout_rs_{masked_fraction,seq_masked_fraction}`. */
  metrics: Record<string, number>;
  /**
   * Per option the value compared against its bounds, `[rows, width]`, at every position, as verl
   * computes it (`compute_rollout_rejection_mask` before it multiplies by the response mask): the
   * token's k1/k2/k3 from its clamped log-ratio for `token_*`, its sequence's sum, mean
   * (sum / (n + 1e-8)) or max over the response tokens for `seq_*`, broadcast over the whole
   * sequence (prompt ids included); 0 only where no sequence is (a packed row's padding). The
   * decision (`keep`, `mask`) is taken on the response tokens alone.
   */
  statistics: Partial<Record<RejectionOption, Float64Array>>;
  /** Per option the bounds in the statistic's units: k1 `[log lo, log hi]` (so ρ ∈ [1/hi, 1/lo] is kept), k2/k3 `[−∞, hi]`; kept when lo ≤ stat ≤ hi. */
  bounds: Partial<Record<RejectionOption, { lo: number; hi: number }>>;
}

function bounds(opt: RejectionOption, t: number | readonly [number, number]): { lo: number; hi: number } {
  if (opt.endsWith('k1')) {
    const [lo, hi] = typeof t === 'number' ? [1 / t, t] : t;
    if (!(lo >= 0) || !(hi > 0) || !(lo <= hi))
      throw new Error(`${opt}: expected ratio bounds 0 ≤ lo ≤ hi, hi > 0, got ${String(t)}`);
    return { lo: Math.log(lo), hi: Math.log(hi) };
  }
  if (typeof t !== 'number')
    throw new Error(`${opt}: expected a single upper bound (k2/k3 options take no lower bound), got [${String(t)}]`);
  if (!(t > 0)) throw new Error(`${opt}: expected an upper bound > 0, got ${t}`);
  return { lo: -Infinity, hi: t };
}

/** verl's per-sequence statistic: masked sum, masked sum / (n + 1e-8), or masked max (empty → 0). */
function sequenceStat(opt: RejectionOption, spans: SegmentSpan[], m: ArrayLike<number>, s: Float64Array): Float64Array {
  if (opt.startsWith('seq_max')) {
    return Float64Array.from(spans, (sp) => {
      let mx = -Infinity;
      for (let i = sp.start; i < sp.end; i++) if (m[i]) mx = Math.max(mx, s[i]);
      return mx === -Infinity ? 0 : mx;
    });
  }
  const { sum, count } = sequenceSums(spans, m, (i) => s[i]);
  return opt.startsWith('seq_sum') ? sum : sum.map((v, k) => v / (count[k] + VERL_MEAN_EPS));
}

/** A token statistic at every position (verl computes it before masking): k1 = −lr, k2 = ½lr², k3 = e^lr − 1 − lr of the clamped log-ratio. */
function everywhere(logRatio: ArrayLike<number>, k: 'k1' | 'k2' | 'k3'): Float64Array {
  return Float64Array.from(logRatio, (x) => {
    const lr = clampLog(x);
    return k === 'k1' ? -lr : k === 'k2' ? 0.5 * lr * lr : Math.exp(lr) - 1 - lr;
  });
}

/** Each sequence's statistic over all of its positions; 0 where no sequence is. */
function broadcast(spans: SegmentSpan[], perSequence: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n);
  spans.forEach((sp, k) => out.fill(perSequence[k], sp.start, sp.end));
  return out;
}

export function rejectionMask(input: RejectionInput): RejectionResult {
  const { logRatio, options, prefix = 'mismatch/' } = input;
  const spans = sequenceSpans(input, input.responseMask, 'responseMask');
  checkLogProbs('logRatio', logRatio, input);
  const m = input.responseMask;
  const n = m.length;
  const names = Object.keys(options) as RejectionOption[];
  if (names.length === 0) throw new Error('rejectionMask: expected at least one option');
  const stat = { k1: new Float64Array(n), k2: new Float64Array(n), k3: new Float64Array(n) };
  for (let i = 0; i < n; i++) {
    if (!m[i]) continue;
    const lr = clampLog(logRatio[i]);
    stat.k1[i] = -lr;
    stat.k2[i] = 0.5 * lr * lr;
    stat.k3[i] = Math.exp(lr) - 1 - lr;
  }
  const keep = new Float64Array(n).fill(1);
  const metrics: Record<string, number> = {};
  const statistics: RejectionResult['statistics'] = {};
  const boundsOf: RejectionResult['bounds'] = {};
  const any = maskCount(m) > 0;
  for (const opt of names) {
    if (!REJECTION_OPTIONS.includes(opt))
      throw new Error(`rejectionMask: unknown option '${opt}', expected one of ${REJECTION_OPTIONS.join(', ')}`);
    const { lo, hi } = bounds(opt, options[opt]!);
    boundsOf[opt] = { lo, hi };
    const s = stat[opt.slice(-2) as 'k1' | 'k2' | 'k3'];
    const ok = (v: number) => v >= lo && v <= hi;
    const optKeep = new Float64Array(n).fill(1);
    let perToken: (i: number) => number = (i) => s[i];
    let seqStat: Float64Array | null = null;
    if (opt.startsWith('token')) {
      for (let i = 0; i < n; i++) optKeep[i] = ok(s[i]) ? 1 : 0;
    } else {
      seqStat = sequenceStat(opt, spans, m, s);
      const byToken = new Float64Array(n);
      spans.forEach((sp, k) => {
        const kk = ok(seqStat![k]) ? 1 : 0;
        optKeep.fill(kk, sp.start, sp.end);
        byToken.fill(seqStat![k], sp.start, sp.end);
      });
      perToken = (i) => byToken[i];
    }
    for (let i = 0; i < n; i++) keep[i] *= optKeep[i];
    statistics[opt] = seqStat
      ? broadcast(spans, seqStat, n)
      : everywhere(logRatio, opt.slice(-2) as 'k1' | 'k2' | 'k3');
    if (!any) continue;
    const key = `${prefix}rollout_rs_${opt}`;
    metrics[`${key}_masked_fraction`] = verlMaskedMeanOf(m, (i) => 1 - optKeep[i]);
    const { sum: rejected, count } = sequenceSums(spans, m, (i) => 1 - optKeep[i]);
    const valid = spans.map((_, k) => k).filter((k) => count[k] > 0);
    metrics[`${key}_seq_masked_fraction`] = valid.length ? mean(valid.map((k) => (rejected[k] > 0 ? 1 : 0))) : 0;
    metrics[`${key}_mean`] = verlMaskedMeanOf(m, perToken);
    const vals = seqStat ? valid.map((k) => seqStat![k]) : Array.from(s).filter((_, i) => m[i]);
    metrics[`${key}_max`] = maxOf(vals);
    metrics[`${key}_min`] = minOf(vals);
  }
  const mask = new Float64Array(n);
  for (let i = 0; i < n; i++) mask[i] = m[i] * keep[i];
  if (any) {
    metrics[`${prefix}rollout_rs_masked_fraction`] = verlMaskedMeanOf(m, (i) => 1 - keep[i]);
    const { sum: rejected } = sequenceSums(spans, m, (i) => 1 - keep[i]);
    metrics[`${prefix}rollout_rs_seq_masked_fraction`] = spans.length ? mean(rejected.map((r) => (r > 0 ? 1 : 0))) : 0;
  }
  return { mask, keep, metrics, statistics, bounds: boundsOf };
}
