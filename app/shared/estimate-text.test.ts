import { describe, expect, it } from 'vitest';
import type { GroupRecord } from '../../worker/protocol';
import { estimateFormula, estimateSettings, groupStats, pairStats, signed } from './estimate-text';

// Rewards [0, 1, 0, 0] under verl's GRPO, as worker/presets/records.ts records them.
const sample = (k: number, reward: number) => ({
  sample: k,
  completion: '',
  reward,
  components: {},
  advantage: 0,
  status: 'completed',
  length: 3,
  truncated: false,
});
const group: GroupRecord = {
  group: 'add/1/2',
  prompt: '1+2=',
  answer: '3',
  rewardMean: 0.25,
  rewardStd: Math.sqrt(0.75 / 4),
  zeroStd: false,
  samples: [0, 1, 0, 0].map((r, k) => sample(k, r)),
  estimate: {
    estimator: 'grpo',
    settings: { compat: 'verl', scale: 'group', stdType: 'unbiased', epsilon: 1e-6, singleton: 'raw' },
    members: 4,
    baseline: 0.25,
    std: 0.5,
    divisor: 0.500001,
    zero: false,
    batch: null,
  },
};

describe('estimate text', () => {
  it('shows the std the advantages used (unbiased 0.500), not the population 0.433', () => {
    expect(groupStats(group)).toBe('mean reward 0.250 · baseline 0.250 · std 0.500 (unbiased, group)');
    expect(estimateFormula(group.estimate!, 4)).toBe(
      'a = (r − μ) / (σ + ε), μ = 0.250 (group mean), σ = 0.500 (unbiased std of the group), ε = 1e-6',
    );
    expect(estimateSettings(group.estimate!)).toBe(
      'GRPO · compat verl · scale group · stdType unbiased · epsilon 1e-6 · singleton raw',
    );
  });

  it('a group stored without the estimator’s working says its std is the population one', () => {
    expect(groupStats({ ...group, estimate: undefined })).toBe(
      "mean reward 0.250 · std 0.433 (population; the estimator's std was not recorded)",
    );
  });

  it('scale none, zero groups, RLOO and a batch step', () => {
    const e = group.estimate!;
    expect(estimateFormula({ ...e, std: null, divisor: null }, 4)).toBe(
      'a = r − μ, μ = 0.250 (group mean); no std scaling (scale none)',
    );
    expect(estimateFormula({ ...e, zero: true }, 4)).toMatch(/^all rewards equal: advantage 0/);
    const rloo = {
      ...e,
      estimator: 'rloo' as const,
      settings: { compat: 'trl', singleton: 'zero', normalize: true },
      baseline: null,
      std: null,
      divisor: null,
      batch: { mean: 0, std: 0.6, divisor: 0.6001 },
    };
    expect(groupStats({ ...group, estimate: rloo })).toBe(
      'mean reward 0.250 · baseline per completion (leave-one-out) · no std scaling',
    );
    expect(estimateFormula(rloo, 4)).toBe(
      'a = r − b, b = the mean reward of the other members (Baseline column); then over the whole batch a = (a − m) / d with m = 0.000, std 0.600, d = 0.6001',
    );
  });

  it('pairs: margin, ranking and loss; signed numbers never print −0', () => {
    expect(pairStats({ margin: 0.1234, rankedCorrectly: true, loss: 0.6321, lossType: 'sigmoid', beta: 0.1 })).toBe(
      'margin +0.123 · ranked correctly · sigmoid loss 0.6321 (β 0.1)',
    );
    expect(pairStats({ margin: -0.5, rankedCorrectly: false, loss: 0.97, lossType: 'ipo', beta: 0.1 })).toMatch(
      /^margin −0\.500 · ranked wrongly/,
    );
    expect(signed(-1e-9)).toBe('0.000');
    expect(signed(1.5)).toBe('+1.500');
  });
});

describe('estimate text: GPG and pass@k', () => {
  const base = group.estimate!;
  it("GPG shows α and the group mean; pass@k the best sample's margin over σ + ε", () => {
    const gpg = { ...base, estimator: 'gpg' as const, settings: { alpha: 4 }, std: null, divisor: null };
    expect(estimateSettings(gpg)).toBe('GPG · alpha 4');
    expect(estimateFormula(gpg, 4)).toBe(
      "a = α·(r − μ), μ = 0.250 (group mean), α = 4 (the batch's samples / those with a non-zero reward)",
    );
    const passk = {
      ...base,
      estimator: 'grpo-passk' as const,
      settings: { scale: 'group', epsilon: 1e-6 },
      baseline: null,
    };
    expect(estimateFormula(passk, 4)).toBe(
      'the best sample gets a = (r_max − r_2nd) / (σ + ε), every other 0; σ = 0.500 (unbiased std of the group), ε = 1e-6',
    );
    expect(estimateFormula({ ...passk, zero: true }, 4)).toBe('all rewards equal: advantage 0 (no learning signal)');
  });
});
