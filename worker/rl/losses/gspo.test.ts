import { describe, expect, it } from 'vitest';
import { aggregationWeights, weightedSum } from '../aggregate';
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

describe('gspo: the sequence log-ratio and ratio it returns', () => {
  // chains {0,1}: c = (0.1 + 0.4)/2 = 0.25; {2}: empty; {3,4}: (−0.3 + 0)/2 = −0.15; {5}: 0.2
  const logRatio = [0.25, 0.25, 0, -0.15, -0.15, 0.2];
  it('verl: the chain mean of logp − old on each masked token, and its exp; 0 off the mask', () => {
    const out = gspoLoss(table());
    for (let i = 0; i < 6; i++) {
      expect(out.sequenceLogRatio[i], `log-ratio ${i}`).toBeCloseTo(logRatio[i], 15);
      expect(out.sequenceRatio[i], `ratio ${i}`).toBeCloseTo(i === 2 ? 0 : Math.exp(logRatio[i]), 15);
    }
    // a per-token log-ratio (0.1, 0.4) in place of the chain mean would fail here
    expect(out.sequenceLogRatio[0]).toBe(out.sequenceLogRatio[1]);
  });
  it('trl: the same values (its ratio differs only in the gradient)', () => {
    const out = gspoLoss(table(), { compat: 'trl' });
    for (const i of [0, 1, 3, 4, 5]) expect(out.sequenceLogRatio[i]).toBeCloseTo(logRatio[i], 15);
  });
  it('rows are the sequences without segmentIds: row 1 = (−0.3 + 0 + 0.2)/3', () => {
    const out = gspoLoss({ ...table(), segmentIds: undefined });
    for (const i of [3, 4, 5]) expect(out.sequenceLogRatio[i]).toBeCloseTo(-0.1 / 3, 15);
  });
  it('the log-ratio is reported before the cap, the ratio after it', () => {
    // old = −13 on chain {0,1}: c = ((−1 + 13) + (−0.5 + 13))/2 = 12.25 > 10 → s = e^10
    const out = gspoLoss({ ...table(), oldLogp: [-13, -13, -2, -0.9, -0.3, -1] });
    expect(out.sequenceLogRatio[0]).toBeCloseTo(12.25, 13);
    expect(out.sequenceRatio[0]).toBeCloseTo(Math.exp(10), 9);
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
      const num =
        (gspoLoss({ ...ctx, logp: plus }, { compat: 'trl' }).loss[t] -
          gspoLoss({ ...ctx, logp: minus }, { compat: 'trl' }).loss[t]) /
        (2 * h);
      expect(out.dlogp[t]).toBeCloseTo(num, 7);
    }
  });
  it("trl with seq-mean-token-sum is TRL's luspo: the mean over sequences of n_i·l_i, and its gradient", () => {
    const ctx = { ...table(), advantages: [1, 1, 0, -0.5, -0.5, 2] };
    const out = gspoLoss(ctx, { compat: 'trl' });
    const w = aggregationWeights(ctx, { mode: 'seq-mean-token-sum' });
    // s = e^.25 (clipped to 1.2, A > 0), e^−.15 (A < 0: −A·s = .5·e^−.15 > .5·.8), e^.2 (clipped to 1.2)
    const l = [-1.2, 0.5 * Math.exp(-0.15), -2 * 1.2];
    expect(weightedSum(w, out.loss)).toBeCloseTo((2 * l[0] + 2 * l[1] + 1 * l[2]) / 3, 12);
    const [a, n] = gradients((c) => gspoLoss(c, { compat: 'trl' }), ctx, w, false);
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
  it('trl = verl without the cap when advantages and weights are uniform per chain (TRL grpo weights)', () => {
    const ctx = { ...table(), advantages: [1, 1, 0, -0.5, -0.5, 2] };
    const w = aggregationWeights(ctx, { mode: 'grpo' });
    const trl = gspoLoss(ctx, { compat: 'trl', clipLow: 0.9, clipHigh: 9 }).backward(w);
    const verl = gspoLoss(ctx, { clipLow: 0.9, clipHigh: 9 }).backward(w);
    expect(maxDiff(trl, verl)).toBeLessThan(1e-12);
  });
});
