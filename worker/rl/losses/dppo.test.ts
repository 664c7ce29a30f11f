import { describe, expect, it } from 'vitest';
import { dppoKlLoss, dppoTvLoss } from './dppo';
import { gradients, maxDiff, table } from '../testing/loss-table';

const ctx = table();
const r = [0.1, 0.4, 0, -0.3, 0, 0.2].map(Math.exp);

describe('dppo_tv: hand values', () => {
  it('δ = 0.2 keeps every token; tr = min(r, 3) = r', () => {
    const out = dppoTvLoss(ctx);
    for (const i of [0, 1, 3, 4, 5]) {
      expect(out.loss[i]).toBeCloseTo(-ctx.advantages[i] * r[i] * ctx.logp[i], 12);
      expect(out.dlogp[i]).toBeCloseTo(-ctx.advantages[i] * r[i], 12);
    }
    expect(out.metrics.pg_clipfrac).toBe(0);
  });
  it('δ = 0.1 drops t3 (A < 0, p − q = −0.105 < −0.1) and keeps t1 (A < 0, p − q = +0.2)', () => {
    const out = dppoTvLoss(ctx, { deltaLow: 0.1 });
    expect(out.loss[3]).toBe(0);
    expect(out.dlogp[3]).toBe(0);
    expect(out.dlogp[1]).toBeCloseTo(r[1], 12);
    expect(out.metrics.pg_clipfrac).toBeCloseTo(1 / 5, 8);
  });
  it('A > 0 past δ_high is dropped: t0 with δ_high = 0.03 (p − q = 0.035)', () => {
    const out = dppoTvLoss(ctx, { deltaLow: 0.2, deltaHigh: 0.03 });
    expect(out.dlogp[0]).toBe(0);
    expect(out.dlogp[5]).toBe(0); // p − q = 0.081 > 0.03 too
    expect(out.dlogp[4]).toBe(-2); // p = q
  });
  it('truncation C = 1.2 caps t1 and t5 and counts them in pg_clipfrac_lower; C = ∞ does not', () => {
    const out = dppoTvLoss(ctx, { truncation: 1.2 });
    expect(out.dlogp[1]).toBeCloseTo(1.2, 12);
    expect(out.dlogp[5]).toBeCloseTo(-0.6, 12);
    expect(out.metrics.pg_clipfrac_lower).toBeCloseTo(2 / 5, 8);
    const inf = dppoTvLoss(ctx, { truncation: Infinity });
    expect(inf.dlogp[1]).toBeCloseTo(r[1], 12);
    expect(inf.metrics.pg_clipfrac_lower).toBe(0);
  });
  it('default C is 3 (verl); rllm compat is C = ∞ and reports mask_frac', () => {
    const big = { ...ctx, logp: [-1.0, 0.8, -2, -1.2, -0.3, -0.8], mask: [1, 1, 0, 1, 1, 1] }; // t1 r = e^1.7 ≈ 5.47
    expect(dppoTvLoss(big).dlogp[1]).toBeCloseTo(3, 12);
    const rl = dppoTvLoss(big, { compat: 'rllm', deltaLow: 10, deltaHigh: 10 });
    expect(rl.dlogp[1]).toBeCloseTo(Math.exp(1.7), 12);
    expect(dppoTvLoss(ctx, { compat: 'rllm', deltaLow: 0.1 }).metrics.mask_frac).toBeCloseTo(1 / 5, 12);
  });
});

describe('dppo_kl: hand values', () => {
  // verl binary KL at t3: q(old − logp) + (1−q) ln((1−q+1e-8)/(1−p+1e-8)) = 0.024973 (p < q, A < 0: moving away)
  it('δ_low = 0.03 keeps t3, δ_low = 0.02 drops it; t1 (p > q, A < 0) is never dropped', () => {
    expect(dppoKlLoss(ctx, { deltaLow: 0.03 }).dlogp[3]).toBeCloseTo(0.5 * r[3], 12);
    const out = dppoKlLoss(ctx, { deltaLow: 0.02, deltaHigh: 0.2 });
    expect(out.dlogp[3]).toBe(0);
    expect(dppoKlLoss(ctx, { deltaLow: 1e-6 }).dlogp[1]).toBeCloseTo(r[1], 12);
  });
  it('A > 0 and p > q past δ_high is dropped: t5 (bkl = 0.01362) with δ_high = 0.013', () => {
    expect(dppoKlLoss(ctx, { deltaHigh: 0.013 }).dlogp[5]).toBe(0);
    expect(dppoKlLoss(ctx, { deltaHigh: 0.014 }).dlogp[5]).toBeCloseTo(-0.5 * r[5], 12);
  });
  it('rllm: the same decisions on this table with its clamped binary KL', () => {
    expect(dppoKlLoss(ctx, { compat: 'rllm', deltaLow: 0.02, deltaHigh: 0.02 }).dlogp[3]).toBe(0);
    expect(dppoKlLoss(ctx, { compat: 'rllm', deltaLow: 0.03, deltaHigh: 0.03 }).dlogp[3]).toBeCloseTo(0.5 * r[3], 12);
  });
});

describe('dppo: the valid mask and truncated ratio it returns', () => {
  // r = e^{logp − old} = e^{0.1}, e^{0.4}, ·, e^{−0.3}, e^0, e^{0.2} = 1.105, 1.492, ·, 0.741, 1, 1.221
  it('tv, δ_low = 0.1: t3 (A < 0, p − q = −0.105) is dropped, the padding token is 0, the rest kept', () => {
    const out = dppoTvLoss(ctx, { deltaLow: 0.1 });
    expect(Array.from(out.valid)).toEqual([1, 1, 0, 0, 1, 1]);
    // the mask and the gradient agree (every masked token has A ≠ 0): dropped ⇔ zero gradient
    for (const i of [0, 1, 3, 4, 5]) expect(out.dlogp[i] === 0, `token ${i}`).toBe(out.valid[i] === 0);
  });
  it('tv, δ_high = 0.03: t0 (p − q = 0.035) and t5 (0.081) with A > 0 are dropped', () => {
    expect(Array.from(dppoTvLoss(ctx, { deltaLow: 0.2, deltaHigh: 0.03 }).valid)).toEqual([0, 1, 0, 1, 1, 0]);
  });
  it('kl, δ_low = 0.02: t3 (bkl = 0.02497, moving away) is dropped', () => {
    expect(Array.from(dppoKlLoss(ctx, { deltaLow: 0.02, deltaHigh: 0.2 }).valid)).toEqual([1, 1, 0, 0, 1, 1]);
  });
  it('truncatedRatio = min(r, C): C = 1.2 caps t1 and t5', () => {
    const tr = dppoTvLoss(ctx, { truncation: 1.2 }).truncatedRatio;
    const expected = [r[0], 1.2, 0, r[3], 1, 1.2];
    for (let i = 0; i < 6; i++) expect(tr[i], `tr ${i}`).toBeCloseTo(expected[i], 15);
  });
});

describe('dppo: gradients against central differences (sg held)', () => {
  for (const [name, fn] of [
    ['tv', dppoTvLoss],
    ['kl', dppoKlLoss],
  ] as const) {
    it(name, () => {
      const [a, n] = gradients((c) => fn(c, { deltaLow: 0.1, truncation: 1.2 }), ctx);
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
  }
  it('refuses C ≤ 0', () => {
    expect(() => dppoTvLoss(ctx, { truncation: 0 })).toThrow(/truncation = 0/);
  });
});
