import { describe, expect, it } from 'vitest';
import { offPolicyMetrics } from './off-policy-metrics';

const E = Math.exp;
// 3×2 table; row 2 has no mask tokens. log-ratios on the mask: 0.5, −1, 0.
const rows = 3;
const width = 2;
const responseMask = [1, 1, 1, 0, 0, 0];
const logp = [-1, -2, -0.5, Number.NaN, 0, 0];
const behaviorLogp = [-1.5, -1, -0.5, -Infinity, 0, 0];
const base = { rows, width, responseMask, logp, behaviorLogp };
const N = 3 + 1e-8;

describe('offPolicyMetrics, verl', () => {
  const m = offPolicyMetrics(base);
  it('kl, k3_kl, chi2 and ratio stats match hand values', () => {
    expect(m['mismatch/kl']).toBeCloseTo((-0.5 + 1 + 0) / N, 12);
    expect(m['mismatch/k3_kl']).toBeCloseTo((E(0.5) - 1.5 + E(-1)) / N, 12);
    expect(m['mismatch/chi2_token']).toBeCloseTo((E(1) + E(-2) + 1) / N - 1, 12);
    // rows: Σlr = −0.5, 0, and 0 for the empty row (verl averages over every row)
    expect(m['mismatch/chi2_seq']).toBeCloseTo((E(-1) + 1 + 1) / 3 - 1, 12);
    expect(m['mismatch/ratio/mean']).toBeCloseTo((E(0.5) + E(-1) + 1) / N, 12);
    expect(m['mismatch/ratio/max']).toBeCloseTo(E(0.5), 12);
    expect(m['mismatch/ratio/min']).toBeCloseTo(E(-1), 12);
  });
  it('perplexities average per-row masked means, an empty row contributing exp(0) = 1', () => {
    // training row means: −1.5, −0.5, 0; rollout row means: −1.25, −0.5, 0
    expect(m['mismatch/training_ppl']).toBeCloseTo((E(1.5) + E(0.5) + 1) / 3, 6);
    expect(m['mismatch/training_log_ppl']).toBeCloseTo((1.5 + 0.5) / 3, 6);
    expect(m['mismatch/rollout_ppl']).toBeCloseTo((E(1.25) + E(0.5) + 1) / 3, 6);
    expect(m['mismatch/rollout_log_ppl']).toBeCloseTo((1.25 + 0.5) / 3, 6);
    expect(m['mismatch/log_ppl_diff']).toBeCloseTo(0.25 / 3, 6);
    expect(m['mismatch/log_ppl_abs_diff']).toBeCloseTo(0.25 / 3, 6);
    expect(m['mismatch/log_ppl_diff_max']).toBeCloseTo(0.25, 6);
    expect(m['mismatch/log_ppl_diff_min']).toBeCloseTo(0, 6);
    expect(m['mismatch/ppl_ratio']).toBeCloseTo((E(0.25) + 1 + 1) / 3, 6);
  });
  it('is zero-divergence for identical policies', () => {
    const same = offPolicyMetrics({ ...base, behaviorLogp: logp.map((x, i) => (responseMask[i] ? x : 0)) });
    expect(same['mismatch/kl']).toBe(0);
    expect(same['mismatch/k3_kl']).toBe(0);
    expect(same['mismatch/chi2_seq']).toBeCloseTo(0, 12);
    expect(same['mismatch/chi2_token']).toBeCloseTo(0, 7);
  });
});

describe('offPolicyMetrics, rLLM', () => {
  const m = offPolicyMetrics({ ...base, compat: 'rllm', prefix: 'offpolicy/' });
  it('uses exact means and skips empty sequences', () => {
    expect(m['offpolicy/kl']).toBeCloseTo(0.5 / 3, 14);
    expect(m['offpolicy/k3_kl']).toBeCloseTo((E(0.5) - 1.5 + E(-1)) / 3, 14);
    expect(m['offpolicy/chi2_token']).toBeCloseTo((E(1) + E(-2) + 1) / 3 - 1, 14);
    expect(m['offpolicy/ratio/mean']).toBeCloseTo((E(0.5) + E(-1) + 1) / 3, 14);
    expect(m['offpolicy/training_ppl']).toBeCloseTo((E(1.5) + E(0.5)) / 2, 12);
    expect(m['offpolicy/rollout_ppl']).toBeCloseTo((E(1.25) + E(0.5)) / 2, 12);
    expect(m['offpolicy/chi2_seq']).toBeUndefined();
    expect(m['offpolicy/log_ppl_diff']).toBeUndefined();
  });
});

describe('offPolicyMetrics, edge cases', () => {
  it('returns {} for an empty mask', () => {
    expect(offPolicyMetrics({ ...base, responseMask: [0, 0, 0, 0, 0, 0] })).toEqual({});
  });
  it('reduces per chain when segmentIds are given', () => {
    const packed = offPolicyMetrics({
      rows: 1,
      width: 6,
      responseMask: [1, 1, 1, 0, 0, 0],
      logp,
      behaviorLogp,
      segmentIds: [1, 1, 2, 2, 0, 0],
    });
    // two chains (the empty row is now padding and no sequence): row means −1.5 and −0.5
    expect(packed['mismatch/training_ppl']).toBeCloseTo((E(1.5) + E(0.5)) / 2, 6);
    expect(packed['mismatch/chi2_seq']).toBeCloseTo((E(-1) + 1) / 2 - 1, 12);
  });
  it('refuses a non-finite masked log-prob and a bad compat', () => {
    expect(() => offPolicyMetrics({ ...base, behaviorLogp: [-Infinity, 0, 0, 0, 0, 0] })).toThrow(
      /behaviorLogp\[0, 0\]/,
    );
    expect(() => offPolicyMetrics({ ...base, compat: 'trl' as never })).toThrow(/compat/);
  });
});
