import { describe, expect, it } from 'vitest';
import { cispoLoss } from './cispo';
import { gradients, maxDiff, table } from '../testing/loss-table';

describe('cispo (verl): hand values', () => {
  const out = cispoLoss(table());
  // weights clip(r, .8, 1.2): e^.1, 1.2, ·, .8, 1, 1.2
  const w = [Math.exp(0.1), 1.2, 0, 0.8, 1, 1.2];
  const ctx = table();
  it('l = −sg(clip r)·A·logp and g = −clip(r)·A', () => {
    for (const i of [0, 1, 3, 4, 5]) {
      expect(out.loss[i]).toBeCloseTo(-w[i] * ctx.advantages[i] * ctx.logp[i], 12);
      expect(out.dlogp[i]).toBeCloseTo(-w[i] * ctx.advantages[i], 12);
    }
    expect(out.loss[1]).toBeCloseTo(-0.6, 12); // −1.2·(−1)·(−0.5)
  });
  it('metrics: pg_clipfrac counts every ratio outside the band', () => {
    expect(out.metrics.pg_clipfrac).toBeCloseTo(3 / 5, 8);
    expect(out.metrics.pg_clipfrac_lower).toBe(0);
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.08, 8);
    expect(cispoLoss(table(), { compat: 'rllm' }).metrics.clip_frac).toBeCloseTo(3 / 5, 12);
  });
});

describe('cispo (trl): upper cap only', () => {
  it('cap 1.3: t1 (r = e^.4) capped, t3 (r = e^−.3) keeps its ratio', () => {
    const ctx = table();
    const out = cispoLoss(ctx, { compat: 'trl', cap: 1.3 });
    expect(out.dlogp[1]).toBeCloseTo(1.3, 12);
    expect(out.dlogp[3]).toBeCloseTo(0.5 * Math.exp(-0.3), 12);
    expect(out.metrics.pg_clipfrac).toBeCloseTo(1 / 5, 8);
    expect(out.metrics.cispo_clip_ratio).toBe(0); // TRL counts A > 0 only; t1 has A < 0
  });
  it('default cap 5 leaves these ratios alone', () => {
    const out = cispoLoss(table(), { compat: 'trl' });
    expect(out.dlogp[1]).toBeCloseTo(Math.exp(0.4), 12);
  });
});

describe('cispo: gradients against central differences (sg held)', () => {
  for (const compat of ['verl', 'trl'] as const) {
    it(compat, () => {
      const [a, n] = gradients((ctx) => cispoLoss(ctx, { compat }), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
  }
});
