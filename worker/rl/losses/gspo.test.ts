import { describe, expect, it } from 'vitest';
import { aggregationWeights } from '../aggregate';
import { gradients, maxDiff, table, WEIGHTS } from '../testing/loss-table';
import { gspoLoss } from './gspo';
import type { PolicyLossContext } from './types';

// chains {0,1}: c = (.1 + .4)/2 = .25; {3,4}: c = (−.3 + 0)/2 = −.15; {5}: c = .2
const s = [Math.exp(0.25), Math.exp(0.25), 0, Math.exp(-0.15), Math.exp(-0.15), Math.exp(0.2)];

describe('gspo (verl): hand values, sequence = packed chain', () => {
  const out = gspoLoss(table());
  it('per-token loss and gradient', () => {
    // t0 A=1 s=1.284 > 1.2 clipped; t1 A=−1 unclipped; t3, t4 inside; t5 A=.5 s=1.221 > 1.2 clipped
    const loss = [-1.2, s[1], 0, 0.5 * s[3], -2 * s[4], -0.6];
    const grad = [0, s[1], 0, 0.5 * s[3], -2 * s[4], 0];
    for (let i = 0; i < 6; i++) {
      expect(out.loss[i]).toBeCloseTo(loss[i], 12);
      expect(out.dlogp[i]).toBeCloseTo(grad[i], 12);
    }
  });
  it('metrics: pg_clipfrac, zero pg_clipfrac_lower, unclamped ppo_kl', () => {
    expect(out.metrics.pg_clipfrac).toBeCloseTo(2 / 5, 8);
    expect(out.metrics.pg_clipfrac_lower).toBe(0);
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.4 / 5, 8);
  });
  it('rows are the sequences without segmentIds (verl layout)', () => {
    const row1 = Math.exp((-0.3 + 0 + 0.2) / 3);
    const o = gspoLoss({ ...table(), segmentIds: undefined });
    expect(o.loss[4]).toBeCloseTo(-2 * row1, 12);
    expect(o.loss[5]).toBeCloseTo(-0.5 * row1, 12);
  });
  it('caps log s at 10: value e^10, no gradient', () => {
    const ctx = { ...table(), oldLogp: [-13, -13, -2, -0.9, -0.3, -1], advantages: [-1e-3, -1e-3, 0, -0.5, 2, 0.5] };
    const o = gspoLoss(ctx, { clipLow: 1, clipHigh: Infinity });
    expect(o.loss[0]).toBeCloseTo(1e-3 * Math.exp(10), 9);
    expect(o.dlogp[0]).toBe(0);
  });
});

describe('gspo: gradients', () => {
  it('verl: backward(w) = w ⊙ dlogp matches differences with sg held (GSPO-token)', () => {
    const [a, n] = gradients((ctx) => gspoLoss(ctx), table());
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
  it('verl: with one advantage per chain and seq-mean-token-mean weights it is the true sequence gradient', () => {
    const ctx = { ...table(), advantages: [1, 1, 0, -0.5, -0.5, 2] };
    const w = aggregationWeights(ctx, { mode: 'seq-mean-token-mean' });
    const wide = (c: PolicyLossContext) => gspoLoss(c, { clipLow: 0.9, clipHigh: 9 });
    const [a, n] = gradients(wide, ctx, w, false); // sg moving with logp: the paper's objective
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
    // = −A s_i / (n_i B′)
    expect(a[0]).toBeCloseTo(-Math.exp(0.25) / 2 / 3, 7);
  });
  it('verl: with advantages varying inside a chain the sg gradient is not the value gradient', () => {
    const [a, n] = gradients((ctx) => gspoLoss(ctx, { clipLow: 0.9, clipHigh: 9 }), table(), WEIGHTS, false);
    expect(maxDiff(a, n)).toBeGreaterThan(1e-3);
  });
  it('trl: the coupled sequence ratio, backward(w) against differences of Σ w l', () => {
    const fn = (ctx: PolicyLossContext) => gspoLoss(ctx, { compat: 'trl' });
    const out = fn(table());
    expect(out.local).toBe(false);
    const [a, n] = gradients(fn, table(), WEIGHTS, false);
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
  it('trl: dlogp is the diagonal ∂l_t/∂logp_t', () => {
    const ctx = table();
    const out = gspoLoss(ctx, { compat: 'trl' });
    const h = 1e-6;
    for (const t of [1, 3, 4]) {
      const plus = Array.from(ctx.logp);
      const minus = Array.from(ctx.logp);
      plus[t] += h;
      minus[t] -= h;
      const num = (gspoLoss({ ...ctx, logp: plus }, { compat: 'trl' }).loss[t] - gspoLoss({ ...ctx, logp: minus }, { compat: 'trl' }).loss[t]) / (2 * h);
      expect(out.dlogp[t]).toBeCloseTo(num, 7);
    }
  });
  it('trl = verl without the cap when advantages and weights are uniform per chain (TRL grpo weights)', () => {
    const ctx = { ...table(), advantages: [1, 1, 0, -0.5, -0.5, 2] };
    const w = aggregationWeights(ctx, { mode: 'grpo' });
    const trl = gspoLoss(ctx, { compat: 'trl', clipLow: 0.9, clipHigh: 9 }).backward(w);
    const verl = gspoLoss(ctx, { clipLow: 0.9, clipHigh: 9 }).backward(w);
    expect(maxDiff(trl, verl)).toBeLessThan(1e-12);
  });
});
