import { describe, expect, it } from 'vitest';
import { grpoAdvantages, grpoDetails } from './grpo';
import { outcomeAdvantageDetails, outcomeAdvantages, type AdvantageOptions, type OutcomeEstimator } from './index';
import { rlooDetails } from './rloo';
import { reinforcePlusPlusDetails } from './reinforce-pp';

// One group of four, one correct: mean 1/4; unbiased std √(0.75/3) = 0.5, population √(0.75/4) ≈ 0.433.
const four = [0, 1, 0, 0];
const g4 = ['g', 'g', 'g', 'g'];

describe('grpoDetails: the μ and σ the estimator used', () => {
  it('verl: baseline 0.25, unbiased std 0.5, advantage 0.75 / (0.5 + 1e-6) ≈ 1.5', () => {
    const d = grpoDetails(four, g4);
    expect(d.settings).toEqual({
      compat: 'verl',
      scale: 'group',
      stdType: 'unbiased',
      epsilon: 1e-6,
      singleton: 'raw',
    });
    expect(d.groups).toHaveLength(1);
    expect(d.groups[0]).toMatchObject({
      members: [0, 1, 2, 3],
      baseline: 0.25,
      std: 0.5,
      divisor: 0.5 + 1e-6,
      zero: false,
    });
    expect(d.advantages[1]).toBeCloseTo(1.5, 5);
    expect(d.advantages[1]).toBe(0.75 / (0.5 + 1e-6));
    expect(Array.from(d.baselines)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(d.batch).toBeNull();
  });

  it('rllm: the population std, 0.433, so the advantage is 0.75 / 0.433 ≈ 1.732', () => {
    const d = grpoDetails(four, g4, { compat: 'rllm' });
    expect(d.settings.stdType).toBe('population');
    expect(d.groups[0].std).toBeCloseTo(Math.sqrt(0.75 / 4), 15);
    expect(d.advantages[1]).toBeCloseTo(Math.sqrt(3), 5);
  });

  it('scale "none": no std (null), advantage r − μ; scale "batch": the batch std for every group', () => {
    const none = grpoDetails(four, g4, { scale: 'none' });
    expect(none.groups[0]).toMatchObject({ baseline: 0.25, std: null, divisor: null });
    expect(none.advantages[1]).toBe(0.75);
    const batch = grpoDetails([0, 1, 1, 1], ['a', 'a', 'b', 'b'], { compat: 'trl', scale: 'batch' });
    expect(batch.groups.map((x) => x.std)).toEqual([0.5, 0.5]); // unbiased std of [0, 1, 1, 1]
    expect(batch.groups[1]).toMatchObject({ baseline: 1, zero: true, divisor: 0.5 + 1e-4 });
  });

  it('singletons: verl μ = 0 and σ = 1; TRL μ = r (zero)', () => {
    expect(grpoDetails([3], ['s']).groups[0]).toMatchObject({ baseline: 0, std: 1, zero: false });
    expect(grpoDetails([3], ['s'], { compat: 'trl' }).groups[0]).toMatchObject({ baseline: 3, zero: true });
  });

  it('its advantages are grpoAdvantages’ to the bit, for each compat and scale', () => {
    const scores = [1, 2, 4, 3, 5, 5, 0.1, 0.7];
    const groups = ['a', 'a', 'a', 'b', 'c', 'c', 'd', 'd'];
    for (const compat of ['verl', 'trl', 'rllm'] as const) {
      for (const scale of ['group', 'batch', 'none'] as const) {
        expect(Array.from(grpoDetails(scores, groups, { compat, scale }).advantages)).toEqual(
          Array.from(grpoAdvantages(scores, groups, { compat, scale }).advantages),
        );
      }
    }
  });
});

describe('rlooDetails and reinforcePlusPlusDetails', () => {
  it('RLOO: each member’s baseline is the mean of the others; no per-group std', () => {
    const d = rlooDetails(four, g4);
    expect(Array.from(d.baselines)).toEqual([1 / 3, 0, 1 / 3, 1 / 3]);
    expect(d.groups[0]).toMatchObject({ baseline: null, std: null, divisor: null });
    expect(d.advantages[1]).toBe(1);
    expect(d.settings).toEqual({ compat: 'verl', singleton: 'raw', normalize: false });
    const n = rlooDetails(four, g4, { compat: 'trl', normalize: true });
    expect(n.batch!.mean).toBeCloseTo(0, 15);
    expect(n.batch!.divisor).toBeCloseTo(n.batch!.std + 1e-4, 15);
  });

  it('REINFORCE++-baseline: group mean, then whitening over the batch (verl token-weighted, rLLM population)', () => {
    const verl = reinforcePlusPlusDetails(four, g4, [1, 1, 1, 1]);
    expect(verl.groups[0].baseline).toBe(0.25);
    expect(verl.batch!.std).toBeCloseTo(0.5, 6); // unbiased std of the centred scores
    expect(verl.advantages[1]).toBeCloseTo((0.75 - verl.batch!.mean) / verl.batch!.divisor, 14);
    const rllm = reinforcePlusPlusDetails(four, g4, undefined, { compat: 'rllm' });
    expect(rllm.batch).toMatchObject({ mean: 0 });
    expect(rllm.batch!.std).toBeCloseTo(Math.sqrt(0.75 / 4), 15);
  });

  it('the dispatcher gives outcomeAdvantages’ advantages for every estimator', () => {
    const scores = [1, 0, 0, 1, 1, 1, 0.5];
    const groups = ['a', 'a', 'b', 'b', 'c', 'c', 'd'];
    const lengths = [3, 4, 2, 5, 1, 6, 2];
    const cases: [OutcomeEstimator, AdvantageOptions][] = [
      ['grpo', {}],
      ['grpo', { compat: 'trl', scale: 'batch' }],
      ['rloo', { normalize: true }],
      ['reinforce++-baseline', {}],
      ['reinforce++-baseline', { compat: 'rllm' }],
    ];
    for (const [est, options] of cases) {
      expect(Array.from(outcomeAdvantageDetails(est, scores, groups, lengths, options).advantages)).toEqual(
        Array.from(outcomeAdvantages(est, scores, groups, lengths, options).advantages),
      );
    }
  });
});
