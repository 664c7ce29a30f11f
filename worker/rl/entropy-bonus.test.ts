import { describe, expect, it } from 'vitest';
import { entropyBonus } from './entropy-bonus';
import { grpoObjective } from './objectives/grpo';
import { appliedEntropyCoef, initialEntropyState, nextEntropyState } from './adaptive-entropy';

// Two rows of width 4: chain 1 = row 0 positions 1..3 (3 tokens), chain 2 = row 1 positions 1..2 (2 tokens).
const layout = {
  rows: 2,
  width: 4,
  mask: Float64Array.from([0, 1, 1, 1, 0, 1, 1, 0]),
  segmentIds: Int32Array.from([1, 1, 1, 1, 1, 1, 1, 0]),
};
const H = Float64Array.from([9, 0.5, 1.0, 1.5, 9, 2.0, 4.0, 9]);

describe('entropyBonus', () => {
  it("'loss' under token-mean: E = (0.5 + 1 + 1.5 + 2 + 4) / 5 = 1.8, loss −c·E, dentropy −c/5 on the mask", () => {
    const b = entropyBonus(H, layout, { mode: 'token-mean' }, { coef: 0.1, aggregation: 'loss' });
    expect(b.entropy).toBeCloseTo(1.8, 12);
    expect(b.loss).toBeCloseTo(-0.18, 12);
    expect(b.tokenMean).toBeCloseTo(1.8, 12);
    layout.mask.forEach((m, i) => expect(b.dentropy[i]).toBeCloseTo(m ? -0.1 / 5 : 0, 15));
  });

  it("'loss' under seq-mean-token-mean is verl's agg_loss of the entropy: (1 + 3) / 2 = 2; 'token-mean' stays 1.8", () => {
    const seq = entropyBonus(H, layout, { mode: 'seq-mean-token-mean' }, { coef: 0.1, aggregation: 'loss' });
    // verl's seq-mean divides by n_s + 1e-8.
    expect(seq.entropy).toBeCloseTo(2, 7);
    // Each sequence's tokens weigh 1/(2·n_s): 1/6 in chain 1, 1/4 in chain 2.
    expect(seq.dentropy[1]).toBeCloseTo(-0.1 / 6, 9);
    expect(seq.dentropy[5]).toBeCloseTo(-0.1 / 4, 9);
    const mean = entropyBonus(H, layout, { mode: 'seq-mean-token-mean' }, { coef: 0.1, aggregation: 'token-mean' });
    expect(mean.entropy).toBeCloseTo(1.8, 12);
    expect(mean.dentropy[5]).toBeCloseTo(-0.1 / 5, 12);
  });

  it("'token-mean' with TRL's high-entropy keep: the mean over the kept tokens only (1.5 + 2 + 4) / 3", () => {
    const keep = Float64Array.from([1, 0, 0, 1, 1, 1, 1, 1]);
    const b = entropyBonus(H, layout, undefined, { coef: 1, aggregation: 'token-mean' }, keep);
    expect(b.entropy).toBeCloseTo(2.5, 12);
    expect(b.tokenMean).toBeCloseTo(2.5, 12);
    expect(b.dentropy[1]).toBe(0);
    expect(b.dentropy[3]).toBeCloseTo(-1 / 3, 12);
  });

  it('refuses a non-finite coefficient, an unknown aggregation and a non-finite entropy on the mask', () => {
    expect(() => entropyBonus(H, layout, undefined, { coef: NaN, aggregation: 'loss' })).toThrow(/coef = NaN/);
    expect(() => entropyBonus(H, layout, undefined, { coef: 1, aggregation: 'sum' as 'loss' })).toThrow(
      /one of loss, token-mean/,
    );
    const bad = Float64Array.from(H);
    bad[2] = Infinity;
    expect(() => entropyBonus(bad, layout, undefined, { coef: 1, aggregation: 'loss' })).toThrow(/entropy/);
  });
});

describe('grpoObjective with an entropy bonus', () => {
  const input = {
    rows: 2,
    width: 4,
    logp: Float64Array.from([0, -1, -0.5, -2, 0, -0.3, -0.7, 0]),
    oldLogp: Float64Array.from([0, -1.1, -0.5, -1.9, 0, -0.3, -0.6, 0]),
    advantages: Float64Array.from([0, 1, 1, 1, 0, -1, -1, 0]),
    responseMask: layout.mask,
    segmentIds: layout.segmentIds,
    entropy: H,
  };
  it('adds −c·E to the loss, leaves dlogp as without it, and returns the entropy seed', () => {
    const plain = grpoObjective(input);
    const withBonus = grpoObjective(input, { entropyBonus: { coef: 0.01, aggregation: 'loss' } });
    expect(withBonus.loss).toBeCloseTo(plain.loss - 0.01 * 1.8, 12);
    expect(withBonus.metrics['loss/entropy']).toBeCloseTo(-0.018, 12);
    expect(withBonus.metrics['rl/entropy_coef']).toBe(0.01);
    expect(Array.from(withBonus.dlogp)).toEqual(Array.from(plain.dlogp));
    expect(withBonus.entropy!.dentropy[1]).toBeCloseTo(-0.01 / 5, 12);
    expect(plain.entropy).toBeUndefined();
  });
  it('needs the entropy', () => {
    const { entropy: _e, ...noEntropy } = input;
    expect(() => grpoObjective(noEntropy, { entropyBonus: { coef: 0.01, aggregation: 'loss' } })).toThrow(
      /needs entropy/,
    );
  });
});

describe("the adaptive coefficient (TRL's controller)", () => {
  const o = { coef: 0.01, min: 0, max: 0.02, delta: 0.005, target: 0.2 };
  it('applies nothing before a measured entropy, then the coefficient only while the last entropy is at or below the target', () => {
    let s = initialEntropyState(o);
    expect(appliedEntropyCoef(s, o)).toBe(0); // TRL's +∞ first entropy
    s = nextEntropyState(s, 0.1, o); // below: up by δ
    expect(s).toEqual({ coef: 0.015, lastEntropy: 0.1 });
    expect(appliedEntropyCoef(s, o)).toBe(0.015);
    s = nextEntropyState(s, 0.2, o); // at the target counts as below: up, capped at max
    expect(s.coef).toBe(0.02);
    s = nextEntropyState(s, 0.2, o);
    expect(s.coef).toBe(0.02);
    s = nextEntropyState(s, 0.5, o); // above: down by δ, and the next step applies none
    expect(s.coef).toBeCloseTo(0.015, 15);
    expect(appliedEntropyCoef(s, o)).toBe(0);
    for (let i = 0; i < 5; i++) s = nextEntropyState(s, 3, o);
    expect(s.coef).toBe(0); // floored at min
  });
  it("TRL's own check: a target above any entropy raises the coefficient by δ on every optimizer step", () => {
    const t = { coef: 0.01, min: 0, max: 1, delta: 0.005, target: 15 };
    let s = initialEntropyState(t);
    for (let k = 0; k < 6; k++) s = nextEntropyState(s, 2.3, t);
    expect(s.coef).toBeCloseTo(0.01 + 0.005 * 6, 12);
  });
  it('a step without tokens measures 0, as TRL clamps its denominator to 1', () => {
    expect(nextEntropyState(initialEntropyState(o), NaN, o)).toEqual({ coef: 0.015, lastEntropy: 0 });
  });
});
