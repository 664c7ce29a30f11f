import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { reinforceKlLoss } from './reinforce-kl';
import type { PolicyLossContext } from './types';

const ctx = table();
const e = Math.E;

describe('reinforce_kl: hand values at t1 (log r = 1, A = −1, logp = −0.5)', () => {
  it('defaults (b = f = 0): IS-weighted REINFORCE, l = −r·A·logp', () => {
    const out = reinforceKlLoss(ctx);
    expect(out.loss[1]).toBeCloseTo(-0.5 * e, 12);
    expect(out.dlogp[1]).toBeCloseTo(e, 12);
  });
  it('klApprox false: KLb = −logp, KLf = sg(r log r)·logp', () => {
    const out = reinforceKlLoss(ctx, { bwdKlCoef: 0.1, fwdKlCoef: 0.2 });
    expect(out.loss[1]).toBeCloseTo(-0.6 * e + 0.05, 12);
    expect(out.dlogp[1]).toBeCloseTo(1.2 * e - 0.1, 12);
  });
  it('klApprox true: Schulman estimators of both KLs', () => {
    const out = reinforceKlLoss(ctx, { bwdKlCoef: 0.1, fwdKlCoef: 0.2, klApprox: true });
    expect(out.loss[1]).toBeCloseTo(-0.4 * e, 12);
    expect(out.dlogp[1]).toBeCloseTo(1.3 * e - 0.1, 12);
  });
  it('ratio clamp bounds the PG weight only', () => {
    const out = reinforceKlLoss(ctx, { ratioClampMax: 2, fwdKlCoef: 0.2 });
    expect(out.dlogp[1]).toBeCloseTo(2 + 0.2 * e, 12);
    expect(out.metrics.clamp_frac).toBe(1 / 5);
  });
  it('metrics: estimator-form KLs and ratio stats (exact means)', () => {
    const m = reinforceKlLoss(ctx).metrics;
    const lr = [0, 1, -0.7, 0, 0.1];
    const mean = (f: (x: number) => number) => lr.map(f).reduce((s, x) => s + x, 0) / 5;
    expect(m.kl_bwd).toBeCloseTo(
      mean((x) => -x + Math.exp(x) - 1),
      12,
    );
    expect(m.kl_fwd).toBeCloseTo(
      mean((x) => Math.exp(x) * x - Math.exp(x) + 1),
      12,
    );
    expect(m.ratio_mean).toBeCloseTo(mean(Math.exp), 12);
    expect(m.ratio_max).toBeCloseTo(e, 12);
    expect(m.ratio_min).toBeCloseTo(Math.exp(-0.7), 12);
    expect(m.clamp_frac).toBe(0);
  });
});

describe('reinforce_kl: gradients against central differences (sg held)', () => {
  for (const klApprox of [false, true]) {
    it(`klApprox ${klApprox}`, () => {
      const [a, n] = gradients(
        (c) => reinforceKlLoss(c, { bwdKlCoef: 0.3, fwdKlCoef: 0.7, klApprox, ratioClampMax: 2 }),
        ctx,
      );
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
  }
  it('klApprox true outside the ±20 clamp: r is constant, log r is not', () => {
    const far = { ...ctx, behaviorLogp: [-26, -1.5, -2, -0.5, -0.3, -0.9] }; // t0: log r = 25
    const fn = (c: PolicyLossContext) => reinforceKlLoss(c, { bwdKlCoef: 0.3, fwdKlCoef: 1e-8, klApprox: true });
    const out = fn(far);
    expect(out.dlogp[0]).toBeCloseTo(-Math.exp(20) * 1 - 0.3 + 1e-8 * Math.exp(20), 3);
    const [a, n] = gradients(fn, far);
    expect(Math.abs(a[0] - n[0]) / Math.abs(a[0])).toBeLessThan(1e-6);
  });
});
