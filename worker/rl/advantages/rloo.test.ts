import { describe, expect, it } from 'vitest';
import { rlooAdvantages } from './rloo';

const scores = [1, 2, 4, 3, 5, 5];
const groups = ['a', 'a', 'a', 'b', 'c', 'c'];

describe('rlooAdvantages', () => {
  it('hand values: r_i − mean of the others; verl keeps a singleton raw', () => {
    const out = rlooAdvantages(scores, groups);
    expect(Array.from(out.advantages)).toEqual([1 - 3, 2 - 2.5, 4 - 1.5, 3, 0, 0]);
    expect(out.zeroStdGroups).toBe(2);
  });

  it('trl (and verl rloo_vectorized): a singleton gets 0', () => {
    const out = rlooAdvantages(scores, groups, { compat: 'trl' });
    expect(out.advantages[3]).toBe(0);
    expect(rlooAdvantages(scores, groups, { singleton: 'zero' }).advantages[3]).toBe(0);
    expect(rlooAdvantages(scores, groups, { compat: 'rllm' }).advantages[3]).toBe(3);
  });

  it('identity: equals n/(n−1)·(r − μ)', () => {
    const s = [0.2, 0.9, 0.4, 0.35];
    const mu = s.reduce((a, b) => a + b) / 4;
    const out = rlooAdvantages(s, [7, 7, 7, 7]);
    s.forEach((r, i) => expect(out.advantages[i]).toBeCloseTo((4 / 3) * (r - mu), 14));
  });

  it('TRL normalize_advantages whitens over the batch with unbiased std + 1e-4', () => {
    const out = rlooAdvantages(scores, groups, { compat: 'trl', normalize: true });
    const raw = [-2, -0.5, 2.5, 0, 0, 0]; // mean 0, unbiased var 10.5/5
    raw.forEach((a, i) => expect(out.advantages[i]).toBeCloseTo(a / (Math.sqrt(2.1) + 1e-4), 13));
  });
});
