import { describe, expect, it } from 'vitest';
import { aggregationWeights, weightedSum } from '../aggregate';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { geoMeanLoss } from './geo-mean';
import { ppoLoss } from './ppo';
import type { PolicyLossContext } from './types';

// One advantage per chain (verl's geo_mean supports sequence-level advantages only).
const seqTable = (): PolicyLossContext => ({ ...table(), advantages: [1, 1, 0, -0.5, -0.5, 2] });

describe('geo_mean (verl): hand values, sequence = packed chain', () => {
  // d = logp − old = .1, .4, ·, −.3, 0, .2; ε = .2 both: d̂ = .1, .2, ·, −.2, 0, .2
  // chain {0,1}, A = 1:    c = min(d, d̂) = .1, .2         x = .3/(2 + 1e-8)
  // chain {3,4}, A = −.5:  c = max(d, d̂) = −.2, 0         x = −.2/(2 + 1e-8)
  // chain {5},   A = 2:    c = .2                         x = .2/(1 + 1e-8)
  const n2 = 2 + 1e-8;
  const n1 = 1 + 1e-8;
  const d5 = -0.8 - -1.0;
  const s = [Math.exp(0.3 / n2), Math.exp(-0.2 / n2), Math.exp(d5 / n1)];
  const meanA = [2 / n2, -1 / n2, 2 / n1];
  const out = geoMeanLoss(seqTable());
  it('each token of a chain carries −Ā·s, s the clipped geometric-mean ratio', () => {
    const loss = [-meanA[0] * s[0], -meanA[0] * s[0], 0, -meanA[1] * s[1], -meanA[1] * s[1], -meanA[2] * s[2]];
    for (let i = 0; i < 6; i++) expect(out.loss[i], `loss ${i}`).toBeCloseTo(loss[i], 14);
    expect(out.loss[0]).toBeCloseTo(-Math.exp(0.15), 7); // the 1e-8 aside
    expect(out.loss[3]).toBeCloseTo(0.5 * Math.exp(-0.1), 7);
  });
  it('dlogp: −Ā·s/(n + 1e-8) where the clip does not bind, 0 where it does', () => {
    const grad = [(-meanA[0] * s[0]) / n2, 0, 0, 0, (-meanA[1] * s[1]) / n2, (-meanA[2] * s[2]) / n1];
    for (let i = 0; i < 6; i++) expect(out.dlogp[i], `dlogp ${i}`).toBeCloseTo(grad[i], 14);
    expect(out.local).toBe(false);
  });
  it('metrics: clipped log-ratios split by the sign of A, unclamped ppo_kl', () => {
    expect(out.metrics.pg_clipfrac).toBeCloseTo(1 / 5, 8); // t1 (A > 0)
    expect(out.metrics.pg_clipfrac_lower).toBeCloseTo(1 / 5, 8); // t3 (A < 0)
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.4 / 5, 8);
  });
  it('seq-mean-token-mean aggregation is verl’s mean over sequences of −Ā·s', () => {
    const ctx = seqTable();
    const w = aggregationWeights(ctx, { mode: 'seq-mean-token-mean' });
    const verl = (-meanA[0] * s[0] - meanA[1] * s[1] - meanA[2] * s[2]) / 3;
    expect(weightedSum(w, out.loss)).toBeCloseTo(verl, 7);
  });
  it('rows are the sequences without segmentIds (verl layout)', () => {
    const o = geoMeanLoss({ ...seqTable(), segmentIds: undefined, advantages: [1, 1, 0, 2, 2, 2] });
    // row 1, A = 2 > 0: c = min(d, d̂) = −.3, 0, .2 → x = −.1/(3 + 1e-8)
    expect(o.loss[4]).toBeCloseTo((-6 / (3 + 1e-8)) * Math.exp(-0.1 / (3 + 1e-8)), 14);
  });
  it('a token with A = 0 adds nothing to the exponent but counts in n (verl: sign(0) = 0)', () => {
    const o = geoMeanLoss({ ...seqTable(), advantages: [1, 0, 0, -0.5, -0.5, 2] });
    // chain {0,1}: x = (.1 + 0)/(2 + 1e-8), Ā = 1/(2 + 1e-8)
    expect(o.loss[0]).toBeCloseTo((-1 / n2) * Math.exp(0.1 / n2), 14);
    expect(Math.abs(o.dlogp[1])).toBe(0);
  });
});

describe('geo_mean: limiting cases', () => {
  it('one token per chain: PPO with the ratio clipped to [e^−ε_low, e^ε_high], no dual clip, no clamp', () => {
    const ctx = { ...table(), segmentIds: [1, 2, 3, 1, 2, 3] };
    // d = .1, .4, ·, −.3, 0, .2: t1, t3 and t5 clipped, none within rounding of a bound
    const geo = geoMeanLoss(ctx, { clipLow: 0.25, clipHigh: 0.15 });
    const ppo = ppoLoss(ctx, { clipLow: 1 - Math.exp(-0.25), clipHigh: Math.exp(0.15) - 1, compat: 'trl' });
    expect(Math.abs(geo.dlogp[5])).toBe(0);
    expect(maxDiff(geo.loss, ppo.loss)).toBeLessThan(1e-7); // the 1e-8 in n + 1e-8
    expect(maxDiff(geo.dlogp, ppo.dlogp)).toBeLessThan(1e-7);
  });
  it('no clip binding: s is the geometric mean of the chain’s ratios', () => {
    const o = geoMeanLoss(seqTable(), { clipLow: 5, clipHigh: 5 });
    expect(o.loss[0]).toBeCloseTo(-Math.sqrt(Math.exp(0.1) * Math.exp(0.4)), 7);
    expect(o.loss[3]).toBeCloseTo(0.5 * Math.sqrt(Math.exp(-0.3) * Math.exp(0)), 7);
  });
});

describe('geo_mean: gradients', () => {
  it('backward(w) against central differences of Σ w l (the ratio couples a chain)', () => {
    // ε_high = .3: no log-ratio within the differences' step of a bound (t5's d = .2 is ε = .2's bound)
    const [a, n] = gradients((ctx) => geoMeanLoss(ctx, { clipHigh: 0.3 }), seqTable());
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
    const [a2, n2] = gradients((ctx) => geoMeanLoss(ctx, { clipLow: 5, clipHigh: 5 }), table());
    expect(maxDiff(a2, n2)).toBeLessThan(1e-7);
  });
  it('backward is not w ⊙ dlogp: chain {0,1} shares one gradient', () => {
    const out = geoMeanLoss(seqTable(), { clipLow: 5, clipHigh: 5 });
    const w = [0.3, 0.7, 0, 1, 1, 1];
    const g = out.backward(w);
    expect(g[0]).toBeCloseTo((0.3 + 0.7) * out.dlogp[0], 14);
  });
});
