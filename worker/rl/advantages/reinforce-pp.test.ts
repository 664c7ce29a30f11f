import { describe, expect, it } from 'vitest';
import { reinforcePlusPlusBaseline, reinforcePlusPlusDetails } from './reinforce-pp';

const scores = [1, 2, 4, 3, 5, 5];
const groups = ['a', 'a', 'a', 'b', 'c', 'c'];
const lengths = [2, 1, 3, 2, 1, 1];

describe('reinforcePlusPlusBaseline', () => {
  it('verl: group-centred, then token-weighted masked whitening (hand values)', () => {
    const out = reinforcePlusPlusBaseline(scores, groups, lengths);
    const expected = [
      -1.3174191490008385, -0.6998789226751179, 0.5352015299763234, 1.3585884984106178, -0.4940321805665443,
      -0.4940321805665443,
    ];
    expected.forEach((e, i) => expect(out.advantages[i], `index ${i}`).toBeCloseTo(e, 12));
  });

  it('verl: the token-weighted result is re-centred with unit unbiased variance', () => {
    const out = reinforcePlusPlusBaseline(scores, groups, lengths);
    let n = 0,
      s = 0,
      ss = 0;
    out.advantages.forEach((a, i) => ((n += lengths[i]), (s += lengths[i] * a)));
    const mean = s / n;
    out.advantages.forEach((a, i) => (ss += lengths[i] * (a - mean) ** 2));
    expect(mean).toBeCloseTo(0, 7);
    expect(ss / (n - 1)).toBeCloseTo(1, 6);
  });

  it('verl weighs by length: changing one length changes every advantage', () => {
    const a = reinforcePlusPlusBaseline(scores, groups, lengths).advantages;
    const b = reinforcePlusPlusBaseline(scores, groups, [2, 1, 3, 2, 1, 9]).advantages;
    expect(a[0]).not.toBeCloseTo(b[0], 3);
  });

  it('verl, shiftMean false: the whitened values plus the token-weighted mean', () => {
    // centred c = −4/3, −1/3, 5/3 (group a, μ = 7/3), 3 (singleton b: μ = 0), 0, 0 (c is all-equal)
    // token-weighted mean μ = (2·(−4/3) + 1·(−1/3) + 3·(5/3) + 2·3)/(10 + 1e-8) = 8/(10 + 1e-8) ≈ 0.8
    const expected = [
      -1.3174191490008385, -0.6998789226751179, 0.5352015299763234, 1.3585884984106178, -0.4940321805665443,
      -0.4940321805665443,
    ];
    const mu = 8 / (10 + 1e-8);
    const d = reinforcePlusPlusDetails(scores, groups, lengths, { shiftMean: false });
    expected.forEach((e, i) => expect(d.advantages[i], `index ${i}`).toBeCloseTo(e + mu, 12));
    expect(d.batch!.added).toBeCloseTo(mu, 15);
    expect(d.settings).toEqual({ compat: 'verl', shiftMean: false });
    expect(reinforcePlusPlusDetails(scores, groups, lengths).batch!.added).toBeUndefined();
    // a sequence without trainable tokens still gets 0, not the mean
    expect(reinforcePlusPlusBaseline([1, 0, 5], ['g', 'g', 'h'], [2, 2, 0], { shiftMean: false }).advantages[2]).toBe(
      0,
    );
    expect(() => reinforcePlusPlusBaseline(scores, groups, undefined, { compat: 'rllm', shiftMean: false })).toThrow(
      /rLLM divides by a std without centring/,
    );
  });

  it('rllm: sequence-level population std, singleton 0, not re-centred', () => {
    const out = reinforcePlusPlusBaseline(scores, groups, undefined, { compat: 'rllm' });
    const expected = [-1.5118561777531383, -0.3779640444382846, 1.889820222191423, 0, 0, 0];
    expected.forEach((e, i) => expect(out.advantages[i], `index ${i}`).toBeCloseTo(e, 12));
  });

  it('a sequence without trainable tokens gets 0; no token at all gives zeros (dew)', () => {
    const out = reinforcePlusPlusBaseline([1, 0, 5], ['g', 'g', 'h'], [2, 2, 0]);
    expect(out.advantages[2]).toBe(0);
    expect(Array.from(reinforcePlusPlusBaseline([1, 0], ['g', 'g'], [0, 0]).advantages)).toEqual([0, 0]);
  });

  it('refuses one trainable token in the batch, naming the sequence, and compat "trl"', () => {
    expect(() => reinforcePlusPlusBaseline([1, 0], ['g', 'g'], [0, 1])).toThrow(
      /sequence 1 holds the batch's only trainable token/,
    );
    expect(() => reinforcePlusPlusBaseline([1], ['g'], [1], { compat: 'trl' })).toThrow(/TRL has no/);
    expect(() => reinforcePlusPlusBaseline([1], ['g'])).toThrow(/lengths is required/);
  });
});
