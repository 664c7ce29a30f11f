import { describe, expect, it } from 'vitest';
import { gdpoAdvantages, gdpoDetails, gdpoSettings } from './gdpo';
import { grpoAdvantages } from './grpo';
import { reinforcePlusPlusBaseline } from './reinforce-pp';

// Two components over five sequences: groups a (0, 1), b (2, 3) and the singleton c (4).
const groups = ['a', 'a', 'b', 'b', 'c'];
const parts = { boxed: [1, 1, 1, 0, 1], correct: [1, 0, 0, 0, 1] };
const lengths = [2, 1, 1, 2, 3];
const weights = { boxed: 1, correct: 2 };

describe('gdpoAdvantages (verl compute_gdpo_outcome_advantage, TRL normalize_then_sum)', () => {
  it("verl: each component's GRPO, Σ w·A, then token-weighted masked_whiten", () => {
    // By hand: d = 1/√2 + 1e-6. boxed: a all equal → 0; b ±(1/2)/d; c singleton 1/(1 + 1e-6).
    // correct: a ±(1/2)/d; b all equal → 0; c 1/(1 + 1e-6). Sum with weights 1, 2, then whiten
    // with each sequence counted `lengths` times (unbiased, + 1e-8 under the root).
    const d = Math.SQRT1_2 + 1e-6;
    const c = 3 / (1 + 1e-6);
    const sum = [2 * (0.5 / d), 2 * (-0.5 / d), 0.5 / d, -0.5 / d, c];
    const n = lengths.reduce((a, b) => a + b, 0);
    const mean = sum.reduce((s, x, i) => s + lengths[i] * x, 0) / (n + 1e-8);
    const ss = sum.reduce((s, x, i) => s + lengths[i] * (x - mean) ** 2, 0);
    const variance = (ss / (n + 1e-8)) * (n / (n - 1));
    const want = sum.map((x) => (x - mean) / Math.sqrt(variance + 1e-8));
    const out = gdpoAdvantages(parts, groups, lengths, { weights });
    want.forEach((w, i) => expect(out.advantages[i]).toBeCloseTo(w, 12));
    // The same figures from a numpy port of verl's function (float64).
    const numpy = [
      0.19366316152379454, -1.4383020071685066, -0.21432813064928077, -1.0303107149954314, 1.1086417503280854,
    ];
    numpy.forEach((w, i) => expect(out.advantages[i]).toBeCloseTo(w, 12));
    expect(out.zeroStdGroups).toBe(0); // a and b each vary in one weighted component; c is a verl singleton (r/(1+ε))
  });

  it('verl, scale none (norm_adv_by_std_in_grpo=False): the numpy port of verl again', () => {
    const out = gdpoAdvantages(parts, groups, lengths, { weights, scale: 'none' });
    const numpy = [
      -0.03451869076238434, -1.2771915844424275, -0.34518691418239517, -0.9665233610224169, 1.208154202917659,
    ];
    numpy.forEach((w, i) => expect(out.advantages[i]).toBeCloseTo(w, 12));
  });

  it('trl: per component (r − μ)/(σ + 1e-4), Σ w·A, then per sequence (x − mean)/(σ + 1e-4); a singleton gets 0', () => {
    const out = gdpoAdvantages(parts, groups, lengths, { weights, compat: 'trl' });
    const numpy = [1.2647979211036076, -1.2647979211036076, 0.6323989605518038, -0.6323989605518038, 0];
    numpy.forEach((w, i) => expect(out.advantages[i]).toBeCloseTo(w, 12));
    const d = gdpoDetails(parts, groups, lengths, { weights, compat: 'trl' });
    expect(d.groups.map((g) => g.zero)).toEqual([false, false, true]);
    expect(d.settings).toEqual({ compat: 'trl', scale: 'group', weights: 'boxed 1, correct 2' });
  });

  it('decoupled: a component scaled by 10 leaves the advantages (to ε), where GRPO on the sum moves', () => {
    // One group of four that varies in both components: the sum's σ changes with the scale, each component's σ scales with it.
    const g4 = ['a', 'a', 'a', 'a'];
    const n4 = [1, 2, 3, 4];
    const mixed = { boxed: [1, 0, 0, 0], correct: [0, 1, 1, 0] };
    const big = { boxed: mixed.boxed.map((x) => 10 * x), correct: mixed.correct };
    const sum = (p: typeof mixed) => p.boxed.map((x, i) => x + p.correct[i]);
    const grpoMoved = grpoAdvantages(sum(mixed), g4).advantages[1] - grpoAdvantages(sum(big), g4).advantages[1];
    expect(Math.abs(grpoMoved)).toBeGreaterThan(0.1);
    const w = { boxed: 1, correct: 1 };
    const a = gdpoAdvantages(mixed, g4, n4, { weights: w }).advantages;
    const b = gdpoAdvantages(big, g4, n4, { weights: w }).advantages;
    a.forEach((x, i) => expect(b[i]).toBeCloseTo(x, 5));
  });

  it('limiting case: one component, unscaled, is verl REINFORCE++-baseline (r − group mean, token-weighted whitening)', () => {
    const r = [0.5, 1, 0, 0, 2];
    const a = gdpoAdvantages({ score: r }, groups, lengths, { weights: { score: 1 }, scale: 'none' }).advantages;
    const b = reinforcePlusPlusBaseline(r, groups, lengths).advantages;
    a.forEach((x, i) => expect(x).toBeCloseTo(b[i], 14));
  });

  it('a weight scales its component before the whitening: weight 0 drops it', () => {
    const only = gdpoAdvantages({ correct: parts.correct }, groups, lengths, { weights: { correct: 1 } }).advantages;
    const zero = gdpoAdvantages(parts, groups, lengths, { weights: { boxed: 0, correct: 1 } }).advantages;
    only.forEach((x, i) => expect(zero[i]).toBeCloseTo(x, 14));
  });

  it('settings list the components by name; undefined weights are not components', () => {
    expect(gdpoSettings({ weights: { score: 2, overlong: 1, boxed: undefined } }).weights).toEqual([
      ['overlong', 1],
      ['score', 2],
    ]);
  });

  it('refuses: no component, a missing one, rLLM, one trainable token; no token gives zeros', () => {
    expect(() => gdpoAdvantages(parts, groups, lengths, {})).toThrow(/at least one/);
    expect(() => gdpoAdvantages(parts, groups, lengths, { weights: { parsed: 1 } })).toThrow(/"parsed"/);
    expect(() => gdpoAdvantages(parts, groups, lengths, { weights, compat: 'rllm' })).toThrow(/rLLM has no GDPO/);
    expect(() => gdpoAdvantages(parts, groups, [1, 0, 0, 0, 0], { weights })).toThrow(/one trainable token/);
    expect(Array.from(gdpoAdvantages(parts, groups, [0, 0, 0, 0, 0], { weights }).advantages)).toEqual([0, 0, 0, 0, 0]);
  });
});
