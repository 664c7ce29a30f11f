import { describe, expect, it } from 'vitest';
import { grpoAdvantages } from './grpo';

// Group a: [1, 2, 4] (mean 7/3, unbiased std √(7/3), population std √(14/9)); b: singleton [3];
// c: all-equal [5, 5]. Expected values computed by hand from docs/rl-formulas.md §3.1.
const scores = [1, 2, 4, 3, 5, 5];
const groups = ['a', 'a', 'a', 'b', 'c', 'c'];

function close(actual: ArrayLike<number>, expected: number[], digits = 12) {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i], `index ${i}`).toBeCloseTo(e, digits));
}

describe('grpoAdvantages', () => {
  it('verl default: unbiased std, ε = 1e-6, singleton r/(1+ε), all-equal group 0', () => {
    const out = grpoAdvantages(scores, groups);
    close(out.advantages, [-0.8728709895157724, -0.21821774737894317, 1.0910887368947153, 3 / (1 + 1e-6), 0, 0]);
    expect(out.advantages[4]).toBe(0);
    expect(out.groups).toBe(3);
    expect(out.zeroStdGroups).toBe(2); // the singleton and the all-equal pair
    expect(out.fracRewardZeroStd).toBeCloseTo(3 / 6, 15);
  });

  it('trl: ε = 1e-4 and a singleton gets 0 (fails under verl conventions)', () => {
    const out = grpoAdvantages(scores, groups, { compat: 'trl' });
    close(out.advantages, [-0.87281442182746, -0.2182036054568651, 1.0910180272843248, 0, 0, 0]);
    expect(out.advantages[0]).not.toBeCloseTo(-0.8728709895157724, 6);
  });

  it('rllm: population std (fails under unbiased)', () => {
    const out = grpoAdvantages(scores, groups, { compat: 'rllm' });
    close(out.advantages, [-1.069044110507528, -0.2672610276268821, 1.3363051381344095, 3 / (1 + 1e-6), 0, 0]);
  });

  it('scale "none" (Dr. GRPO): r − μ; verl keeps a singleton raw, TRL zeroes it', () => {
    close(grpoAdvantages(scores, groups, { scale: 'none' }).advantages, [-4 / 3, -1 / 3, 5 / 3, 3, 0, 0]);
    close(grpoAdvantages(scores, groups, { scale: 'none', compat: 'trl' }).advantages, [
      -4 / 3,
      -1 / 3,
      5 / 3,
      0,
      0,
      0,
    ]);
  });

  it('TRL scale "batch": group mean, std of the whole batch', () => {
    const out = grpoAdvantages(scores, groups, { compat: 'trl', scale: 'batch' });
    close(out.advantages, [-0.8164465839894008, -0.20411164599735027, 1.0205582299867508, 0, 0, 0]);
  });

  it('explicit options override the compat preset', () => {
    const out = grpoAdvantages([0, 1], ['g', 'g'], { compat: 'trl', epsilon: 0, stdType: 'population' });
    close(out.advantages, [-1, 1]); // (±0.5)/0.5
  });

  it('limiting case: with std scaling off the group sums to zero and keeps the spread', () => {
    const out = grpoAdvantages([0.3, 0.9, 0.1, 0.7], ['g', 'g', 'g', 'g'], { scale: 'none' });
    const sum = out.advantages.reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(0, 14);
    expect(out.advantages[1] - out.advantages[2]).toBeCloseTo(0.8, 14);
  });

  it('an all-equal group is exactly zero even when the mean is inexact', () => {
    const out = grpoAdvantages([0.1, 0.1, 0.1], [0, 0, 0]);
    expect(Array.from(out.advantages)).toEqual([0, 0, 0]);
    expect(out.fracRewardZeroStd).toBe(1);
  });

  it('refuses mismatched lengths, non-finite scores and bad options', () => {
    expect(() => grpoAdvantages([1, 2], ['a'])).toThrow(/2 entries but groups has 1/);
    expect(() => grpoAdvantages([1, NaN], ['a', 'a'])).toThrow(/scores\[1\] = NaN/);
    expect(() => grpoAdvantages([1], ['a'], { epsilon: -1 })).toThrow(/epsilon = -1/);
    expect(() => grpoAdvantages([1], ['a'], { compat: 'x' as never })).toThrow(/compat/);
  });

  it('empty input gives empty output and no NaN', () => {
    const out = grpoAdvantages([], []);
    expect(out.advantages.length).toBe(0);
    expect(out.fracRewardZeroStd).toBe(0);
  });
});
