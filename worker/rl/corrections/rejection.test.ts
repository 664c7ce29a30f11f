import { describe, expect, it } from 'vitest';
import { rejectionMask } from './rejection';

const ln = Math.log;
// ρ = π_train/π_rollout per token; [0, 2] is padding.
const rows = 2;
const width = 3;
const responseMask = [1, 1, 0, 1, 1, 1];
const logRatio = [ln(1.9), ln(0.3), 42, ln(1.1), ln(0.2), ln(5)];
const base = { rows, width, responseMask, logRatio };
const N = 5 + 1e-8;

describe('rejectionMask', () => {
  it('token_k1 uses verl’s sign: a band [lo, hi] keeps ρ ∈ [1/hi, 1/lo]', () => {
    // [0.5, 4] keeps ρ ∈ [0.25, 2]: ρ = 0.3 is kept (the math doc’s ρ ∈ [lo, hi] would drop it).
    const { mask, keep, metrics } = rejectionMask({ ...base, options: { token_k1: [0.5, 4] } });
    expect(Array.from(mask)).toEqual([1, 1, 0, 1, 0, 0]);
    expect(Array.from(keep)).toEqual([1, 1, 1, 1, 0, 0]);
    expect(metrics['mismatch/rollout_rs_token_k1_masked_fraction']).toBeCloseTo(2 / N, 12);
    expect(metrics['mismatch/rollout_rs_token_k1_seq_masked_fraction']).toBe(0.5);
    expect(metrics['mismatch/rollout_rs_masked_fraction']).toBeCloseTo(2 / N, 12);
    expect(metrics['mismatch/rollout_rs_seq_masked_fraction']).toBe(0.5);
    const k1 = [-ln(1.9), -ln(0.3), -ln(1.1), -ln(0.2), -ln(5)];
    expect(metrics['mismatch/rollout_rs_token_k1_mean']).toBeCloseTo(k1.reduce((a, b) => a + b) / N, 12);
    expect(metrics['mismatch/rollout_rs_token_k1_max']).toBeCloseTo(-ln(0.2), 12);
    expect(metrics['mismatch/rollout_rs_token_k1_min']).toBeCloseTo(-ln(5), 12);
  });

  it('seq_sum_k1 with one number u rejects a whole sequence outside [1/u, u]', () => {
    // sequence ratios: row 0 = 1.9·0.3 = 0.57, row 1 = 1.1·0.2·5 = 1.1
    const { mask, metrics } = rejectionMask({ ...base, options: { seq_sum_k1: 1.25 } });
    expect(Array.from(mask)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(metrics['mismatch/rollout_rs_seq_sum_k1_masked_fraction']).toBeCloseTo(2 / N, 12);
    expect(metrics['mismatch/rollout_rs_seq_sum_k1_max']).toBeCloseTo(-ln(0.57), 12);
    expect(metrics['mismatch/rollout_rs_seq_sum_k1_min']).toBeCloseTo(-ln(1.1), 12);
  });

  it('seq_mean_k1 (geometric) compares the per-token mean', () => {
    // geometric ratios: row 0 = 0.57^(1/2) ≈ 0.755, row 1 = 1.1^(1/3) ≈ 1.032
    const { mask } = rejectionMask({ ...base, options: { seq_mean_k1: [0.8, 1.25] } });
    expect(Array.from(mask)).toEqual([0, 0, 0, 1, 1, 1]);
    // verl's sign again: [0.8, 1.4] keeps geometric ρ ∈ [1/1.4, 1/0.8] ≈ [0.714, 1.25], so row 0 stays
    const wide = rejectionMask({ ...base, options: { seq_mean_k1: [0.8, 1.4] } });
    expect(Array.from(wide.mask)).toEqual([1, 1, 0, 1, 1, 1]);
  });

  it('seq_max_k2 and token_k3 take a single upper bound', () => {
    // max ½lr²: row 0 = ½ln²0.3 ≈ 0.725, row 1 = ½ln²5 ≈ 1.295
    expect(Array.from(rejectionMask({ ...base, options: { seq_max_k2: 1 } }).mask)).toEqual([1, 1, 0, 0, 0, 0]);
    // k3 = ρ − 1 − ln ρ: 0.258, 0.504, 0.005, 0.809, 2.391
    expect(Array.from(rejectionMask({ ...base, options: { token_k3: 0.6 } }).mask)).toEqual([1, 1, 0, 1, 0, 0]);
    // seq_sum_k2: row 0 = ½(ln²1.9 + ln²0.3) ≈ 0.931, row 1 ≈ 0.004 + 1.295 + 1.295 = 2.595
    expect(Array.from(rejectionMask({ ...base, options: { seq_sum_k2: 1 } }).mask)).toEqual([1, 1, 0, 0, 0, 0]);
  });

  it('chains options with AND and reports each one', () => {
    const { mask, metrics } = rejectionMask({ ...base, options: { token_k1: [0.5, 4], seq_max_k2: 1 } });
    expect(Array.from(mask)).toEqual([1, 1, 0, 0, 0, 0]);
    expect(metrics['mismatch/rollout_rs_token_k1_masked_fraction']).toBeCloseTo(2 / N, 12);
    expect(metrics['mismatch/rollout_rs_seq_max_k2_masked_fraction']).toBeCloseTo(3 / N, 12);
    expect(metrics['mismatch/rollout_rs_masked_fraction']).toBeCloseTo(3 / N, 12);
  });

  it('thresholds that keep everything leave the mask unchanged', () => {
    const { mask, metrics } = rejectionMask({
      ...base,
      options: { token_k1: [0, Infinity], seq_sum_k2: Infinity, seq_mean_k3: Infinity, seq_max_k3: Infinity },
    });
    expect(Array.from(mask)).toEqual(responseMask);
    expect(metrics['mismatch/rollout_rs_masked_fraction']).toBe(0);
  });

  it('reduces over packed chains, not rows', () => {
    const packed = rejectionMask({
      rows: 1,
      width: 6,
      responseMask,
      logRatio,
      segmentIds: [1, 1, 1, 2, 2, 2],
      options: { seq_sum_k1: 1.25 },
    });
    expect(Array.from(packed.mask)).toEqual([0, 0, 0, 1, 1, 1]);
  });

  it('returns per option the statistic it compared and the bounds in its units', () => {
    // k1 = −log ρ per token: −ln 1.9, −ln 0.3, ·, −ln 1.1, −ln 0.2, −ln 5
    // seq_sum_k1: row 0 −ln(1.9·0.3) = −ln 0.57 = 0.562; row 1 −ln(1.1·0.2·5) = −ln 1.1 = −0.0953
    // seq_mean_k1: the sums over (n + 1e-8), n = 2 and 3; seq_max_k2: row 0 ½ln²0.3 = 0.725, row 1 ½ln²5 = 1.295
    const out = rejectionMask({
      ...base,
      options: { token_k1: [0.5, 4], seq_sum_k1: 1.25, seq_mean_k1: [0.8, 1.4], seq_max_k2: 1 },
    });
    const close = (a: Float64Array | undefined, e: number[], label: string) => {
      expect(a, label).toBeDefined();
      for (let i = 0; i < 6; i++) expect(a![i], `${label} ${i}`).toBeCloseTo(e[i], 12);
    };
    // At every position, as verl computes them before masking: the padding's log-ratio 42 clamps to
    // 20 (k1 −20), and a sequence's value covers its padding too; the decision uses the response only.
    close(out.statistics.token_k1, [-ln(1.9), -ln(0.3), -20, -ln(1.1), -ln(0.2), -ln(5)], 'token_k1');
    const s0 = -ln(0.57);
    const s1 = -ln(1.1);
    close(out.statistics.seq_sum_k1, [s0, s0, s0, s1, s1, s1], 'seq_sum_k1');
    close(
      out.statistics.seq_mean_k1,
      [s0 / (2 + 1e-8), s0 / (2 + 1e-8), s0 / (2 + 1e-8), s1 / (3 + 1e-8), s1 / (3 + 1e-8), s1 / (3 + 1e-8)],
      'seq_mean_k1',
    );
    const m0 = 0.5 * ln(0.3) ** 2;
    const m1 = 0.5 * ln(5) ** 2;
    close(out.statistics.seq_max_k2, [m0, m0, m0, m1, m1, m1], 'seq_max_k2');
    const packed = rejectionMask({
      ...base,
      rows: 1,
      width: 6,
      segmentIds: [1, 1, 0, 2, 2, 2],
      options: { seq_sum_k1: 1.25 },
    });
    close(packed.statistics.seq_sum_k1, [s0, s0, 0, s1, s1, s1], 'packed seq_sum_k1 (0 on a packed row padding)');
    // u = 1.25 → [log 0.8, log 1.25]; a band [0.5, 4] → [log 0.5, log 4]; k2 → [−∞, 1]
    expect(out.bounds.seq_sum_k1!.lo).toBeCloseTo(ln(0.8), 15);
    expect(out.bounds.seq_sum_k1!.hi).toBeCloseTo(ln(1.25), 15);
    expect(out.bounds.token_k1).toEqual({ lo: ln(0.5), hi: ln(4) });
    expect(out.bounds.seq_max_k2).toEqual({ lo: -Infinity, hi: 1 });
    expect(out.statistics.token_k2).toBeUndefined(); // only the options asked for
    // each keep follows from its statistic and bounds: row 0's seq_sum_k1 0.562 > log 1.25 = 0.223
    expect(out.keep[0]).toBe(0);
  });

  it('refuses bad options and thresholds', () => {
    expect(() => rejectionMask({ ...base, options: {} })).toThrow(/at least one/);
    expect(() => rejectionMask({ ...base, options: { seq_max_k1: 2 } as never })).toThrow(
      /unknown option 'seq_max_k1'/,
    );
    expect(() => rejectionMask({ ...base, options: { token_k2: [0.1, 2] } })).toThrow(/single upper bound/);
    expect(() => rejectionMask({ ...base, options: { token_k1: [2, 1] } })).toThrow(/token_k1/);
    expect(() => rejectionMask({ ...base, options: { seq_sum_k3: 0 } })).toThrow(/> 0/);
    expect(() => rejectionMask({ ...base, logRatio: [0, Infinity, 0, 0, 0, 0], options: { token_k2: 1 } })).toThrow(
      /logRatio\[0, 1\]/,
    );
  });
});
