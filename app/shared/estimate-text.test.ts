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

describe('estimate text: GDPO', () => {
  const base = group.estimate!;
  it('GDPO names its components and weights, the per-component step and the batch whitening', () => {
    const gdpo = {
      ...base,
      estimator: 'gdpo' as const,
      settings: { compat: 'verl', scale: 'group', weights: 'boxed 1, correct 2' },
      baseline: null,
      std: null,
      divisor: null,
      batch: { mean: 0.5, std: 1.25, divisor: 1.25 },
    };
    expect(estimateSettings(gdpo)).toBe('GDPO · compat verl · scale group · weights boxed 1, correct 2');
    expect(estimateFormula(gdpo, 4)).toBe(
      'c = Σ w_k·A_k over the components (boxed 1, correct 2), A_k = (r_k − μ_k) / (σ_k + 1e-6) within the group; ' +
        'then over the whole batch a = (c − m) / d with m = 0.500, std 1.250, d = 1.25',
    );
    expect(estimateFormula({ ...gdpo, zero: true }, 4)).toMatch(/^every weighted component equal in the group: c = 0;/);
    expect(groupStats({ ...group, estimate: gdpo })).toContain(
      'each reward component centred in the group (boxed 1, correct 2)',
    );
  });
});

describe('OTB', () => {
  const otb = {
    ...group.estimate!,
    estimator: 'otb' as const,
    settings: { handleZeroTail: true, align: 'position', epsilon: 1e-8, isWeights: false, rejection: false },
    baseline: null,
    std: null,
    divisor: null,
  };
  it('says the baseline is per token (the Baseline column its mean) and gives the formula, zero tail and IS included', () => {
    expect(groupStats({ ...group, estimate: otb })).toBe(
      'mean reward 0.250 · baseline per token (Baseline column: its mean over the completion) · no std scaling',
    );
    expect(estimateSettings(otb)).toBe(
      'OTB · handleZeroTail true · align position · epsilon 1e-8 · isWeights false · rejection false',
    );
    expect(estimateFormula(otb, 4)).toBe(
      "per token a_t = G_t − B_t, B_t = Σ G_t·W_t / (Σ W_t + 1e-8) over the group's members at response position t, " +
        'W_t = Σ_{j ≤ t} (1 − 2π_j + Σπ²_j), G_t the reward-to-go; a completion longer than all others has B = 0 past them; ' +
        'Advantage column: the mean a_t',
    );
    const tir = { ...otb, estimator: 'otb-tir' as const, settings: { ...otb.settings, isWeights: true } };
    expect(estimateFormula(tir, 4)).toContain(
      'at action token t (observations skipped), W_t = Σ_{j ≤ t} (1 − 2π_j + Σπ²_j) · ρ̄_t²',
    );
    expect(estimateFormula(otb, 1)).toBe('a single member: no baseline, each token keeps its reward-to-go (a = G)');
  });
});
