import { describe, expect, it } from 'vitest';
import { expectClose } from '../../kernels/testing/expect-close';
import { centralDiff } from './testing/finite-diff';
import { valueLoss } from './value-loss';

// 1×3: token 0 is clipped (v̂ = 0.7 is farther from R), token 1 is not, token 2 is padding.
const tiny = {
  rows: 1,
  width: 3,
  values: [1.0, 0.0, Number.NaN],
  oldValues: [0.5, 0.5, 0],
  returns: [2.0, 1.0, 0],
  responseMask: [1, 1, 0],
  clip: 0.2,
};

describe('valueLoss, hand values', () => {
  it('takes the larger of the clipped and unclipped errors, halved and token-meaned', () => {
    const { loss, dvalues, metrics } = valueLoss(tiny);
    // token 0: l1 = 1, l2 = (0.7 − 2)² = 1.69 → clipped, no gradient; token 1: l1 = 1 > l2 = 0.49
    expect(loss).toBeCloseTo((0.5 * (1.69 + 1)) / 2, 14);
    expect(dvalues[0]).toBe(0);
    expect(dvalues[1]).toBeCloseTo(0.5 * 0.5 * 2 * (0 - 1), 14);
    expect(dvalues[2]).toBe(0);
    expect(metrics['critic/vf_loss']).toBe(loss);
    expect(metrics['critic/vf_clipfrac']).toBeCloseTo(1 / (2 + 1e-8), 14);
    expect(metrics['critic/vpred_mean']).toBeCloseTo(0.5, 7);
  });

  it('uses the aggregation weights it is given', () => {
    const { loss, dvalues } = valueLoss({ ...tiny, aggWeights: [1, 3, 99] });
    expect(loss).toBeCloseTo(0.5 * (1.69 + 3 * 1), 14);
    expect(dvalues[1]).toBeCloseTo(0.5 * 3 * 2 * (0 - 1), 14);
  });

  it('splits the gradient on torch ties: v exactly on the clip bound', () => {
    // v = old + c: min(v, old + c) ties (½), and then l1 = l2 ties (½ each branch)
    const { dvalues } = valueLoss({
      rows: 1,
      width: 1,
      values: [0.75],
      oldValues: [0.5],
      returns: [2],
      responseMask: [1],
      clip: 0.25,
    });
    const g = 2 * (0.75 - 2);
    expect(dvalues[0]).toBeCloseTo(0.5 * (0.5 * g + 0.5 * g * 0.5), 14);
  });
});

describe('valueLoss, per-token intermediates', () => {
  it('returns v̂, both terms, the one taken and whether it was the clipped one', () => {
    const out = valueLoss(tiny);
    // token 0: v̂ = max(min(1.0, 0.7), 0.3) = 0.7; (v − R)² = 1, (v̂ − R)² = 1.69 → clipped taken
    // token 1: v̂ = max(min(0.0, 0.7), 0.3) = 0.3; (v − R)² = 1, (v̂ − R)² = 0.49 → unclipped taken
    // token 2: padding, all 0 (its NaN value never reaches an output)
    const close = (a: Float64Array, e: number[], label: string) =>
      expectClose(a, e, { atol: 1e-15, rtol: 1e-14, label });
    close(out.clippedValues, [0.7, 0.3, 0], 'clippedValues');
    close(out.unclippedLoss, [1, 1, 0], 'unclippedLoss');
    close(out.clippedLoss, [1.69, 0.49, 0], 'clippedLoss');
    close(out.tokenLoss, [1.69, 1, 0], 'tokenLoss');
    expect(Array.from(out.clippedTaken)).toEqual([1, 0, 0]);
    // loss = ½ Σ w·tokenLoss with token-mean w = ½
    expect(out.loss).toBeCloseTo(0.5 * 0.5 * (1.69 + 1), 14);
  });

  it('a tie counts as unclipped, as verl’s vf_clipfrac does', () => {
    // v = old + c exactly: v̂ = v, both terms (0.75 − 2)² = 1.5625
    const out = valueLoss({
      rows: 1,
      width: 1,
      values: [0.75],
      oldValues: [0.5],
      returns: [2],
      responseMask: [1],
      clip: 0.25,
    });
    expect(out.unclippedLoss[0]).toBe(out.clippedLoss[0]);
    expect(out.clippedLoss[0]).toBeCloseTo(1.5625, 14);
    expect(out.clippedTaken[0]).toBe(0);
  });
});

describe('valueLoss, limiting cases', () => {
  it('an infinite clip is half the token-mean squared error', () => {
    const values = [0.3, -1.2, 2.5, 0.1];
    const returns = [1, 1, 1, 1];
    const { loss, dvalues, metrics } = valueLoss({
      rows: 2,
      width: 2,
      values,
      oldValues: [5, 5, 5, 5],
      returns,
      responseMask: [1, 1, 1, 0],
      clip: Infinity,
    });
    expect(loss).toBeCloseTo((0.5 * (0.49 + 4.84 + 2.25)) / 3, 14);
    [0.3, -1.2, 2.5].forEach((v, i) => expect(dvalues[i]).toBeCloseTo((v - 1) / 3, 14));
    expect(metrics['critic/vf_clipfrac']).toBe(0);
  });

  it('an empty mask gives zero loss and zero gradient', () => {
    const { loss, dvalues } = valueLoss({ ...tiny, responseMask: [0, 0, 0] });
    expect(loss).toBe(0);
    expect(Array.from(dvalues)).toEqual([0, 0, 0]);
  });
});

describe('valueLoss gradient against central finite differences', () => {
  const rows = 2;
  const width = 5;
  const values = Array.from({ length: 10 }, (_, i) => Math.sin(1.7 * i + 0.3));
  const oldValues = Array.from({ length: 10 }, (_, i) => Math.sin(1.7 * i + 0.3) + 0.35 * Math.cos(2.3 * i));
  const returns = Array.from({ length: 10 }, (_, i) => 0.8 * Math.cos(0.7 * i));
  const responseMask = [1, 1, 1, 0, 1, 1, 1, 1, 1, 0];
  it.each([
    ['token-mean', undefined],
    ['given weights', [0.1, 0.2, 0.3, 0, 0.4, 0.5, 0.1, 0.2, 0.3, 0]],
  ])('%s', (_, aggWeights) => {
    const input = { rows, width, oldValues, returns, responseMask, clip: 0.2, aggWeights };
    const { dvalues, metrics } = valueLoss({ ...input, values });
    const fd = centralDiff((x) => valueLoss({ ...input, values: x }).loss, values);
    for (let i = 0; i < fd.length; i++) expect(dvalues[i], `index ${i}`).toBeCloseTo(fd[i], 8);
    // the case exercises both branches
    expect(metrics['critic/vf_clipfrac']).toBeGreaterThan(0);
    expect(metrics['critic/vf_clipfrac']).toBeLessThan(1);
  });
});

describe('valueLoss refusals', () => {
  it('refuses a negative clip, wrong shapes, a non-binary mask and non-finite masked inputs', () => {
    expect(() => valueLoss({ ...tiny, clip: -0.1 })).toThrow(/clip/);
    expect(() => valueLoss({ ...tiny, returns: [1, 2] })).toThrow(/returns.*1 × 3/);
    expect(() => valueLoss({ ...tiny, responseMask: [1, 0.5, 0] })).toThrow(/expected 0 or 1/);
    expect(() => valueLoss({ ...tiny, oldValues: [Number.NaN, 0, 0] })).toThrow(/oldValues\[0, 0\]/);
    expect(() => valueLoss({ ...tiny, aggWeights: [1, Infinity, 0] })).toThrow(/aggWeights\[0, 1\]/);
  });
});
