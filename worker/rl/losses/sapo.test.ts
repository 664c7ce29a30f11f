import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { ppoLoss } from './ppo';
import { sapoLoss } from './sapo';

// d = logp − old = .1, .4, ·, −.3, 0, .2;  A = 1, −1, ·, −.5, 2, .5  → τ = 1, 1.05, ·, 1.05, 1, 1
const sig = (x: number) => 1 / (1 + Math.exp(-x));
const d = [0.1, 0.4, 0, -0.3, 0, 0.2];
const A = [1, -1, 0, -0.5, 2, 0.5];
const tau = [1, 1.05, 1, 1.05, 1, 1];

describe('sapo: hand values', () => {
  const out = sapoLoss(table());
  it('l = −A·σ(τ(r − 1))·4/τ, g = −A·4σ(1 − σ)·r', () => {
    for (const i of [0, 1, 3, 4, 5]) {
      const r = Math.exp(d[i]);
      const s = sig(tau[i] * (r - 1));
      expect(out.loss[i], `loss ${i}`).toBeCloseTo((-A[i] * s * 4) / tau[i], 12);
      expect(out.dlogp[i], `dlogp ${i}`).toBeCloseTo(-A[i] * 4 * s * (1 - s) * r, 12);
    }
    expect(out.loss[4]).toBeCloseTo(-4, 12); // r = 1: σ(0)·4/1 = 2, times −A = −2·2
  });
  it('metrics: no clipping, verl ppo_kl', () => {
    expect(out.metrics.pg_clipfrac).toBe(0);
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.08, 8);
  });
  it('verl clamps logp − old at ±20 (value e^20, no gradient); TRL does not', () => {
    // t0: d = 21, A = −1e-9, τ_neg = 1e-9: τ(r − 1) ≈ .485 at verl's r = e^20, ≈ 1.319 at TRL's r = e^21
    const ctx = { ...table(), oldLogp: [-22, -0.9, -2, -0.9, -0.3, -1], advantages: [-1e-9, -1, 0, -0.5, 2, 0.5] };
    const verl = sapoLoss(ctx, { tauNeg: 1e-9 });
    expect(verl.loss[0]).toBeCloseTo(4 * sig(1e-9 * (Math.exp(20) - 1)), 9);
    expect(verl.dlogp[0]).toBe(0);
    const trl = sapoLoss(ctx, { tauNeg: 1e-9, compat: 'trl' });
    const s = sig(1e-9 * (Math.exp(21) - 1));
    expect(trl.loss[0]).toBeCloseTo(4 * s, 9);
    expect(trl.dlogp[0]).toBeCloseTo(1e-9 * 4 * s * (1 - s) * Math.exp(21), 9);
    expect(trl.dlogp[0]).toBeGreaterThan(0.8);
  });
  it('refuses τ ≤ 0', () => {
    expect(() => sapoLoss(table(), { tauNeg: 0 })).toThrow(/tauNeg = 0: expected > 0/);
  });
});

describe('sapo: limiting cases', () => {
  it('on-policy (r = 1) the gradient is PPO’s, −A', () => {
    const ctx = { ...table(), oldLogp: table().logp };
    const s = sapoLoss(ctx, { tauPos: 3, tauNeg: 0.5 });
    expect(maxDiff(s.dlogp, ppoLoss(ctx).dlogp)).toBeLessThan(1e-15);
  });
  it('τ → 0: the gradient of the unclipped surrogate −A·r', () => {
    const s = sapoLoss(table(), { tauPos: 1e-6, tauNeg: 1e-6 });
    const unclipped = ppoLoss(table(), { clipLow: 1, clipHigh: 1e6, compat: 'trl' });
    expect(maxDiff(s.dlogp, unclipped.dlogp)).toBeLessThan(1e-6);
  });
});

describe('sapo: gradients against central differences', () => {
  for (const compat of ['verl', 'trl'] as const)
    it(compat, () => {
      const [a, n] = gradients((ctx) => sapoLoss(ctx, { compat, tauPos: 2 }), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
});
