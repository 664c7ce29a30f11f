import { describe, expect, it } from 'vitest';
import { grpoPasskAdvantages } from './grpo-passk';

const std = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b) / xs.length;
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
};

describe('grpoPasskAdvantages (verl compute_grpo_passk_outcome_advantage)', () => {
  it("hand values: only the group's best sample gets (r_max − r_2nd)/(σ + 1e-6), the rest 0", () => {
    const scores = [0.2, 1, 0.5, 0, 3, 1];
    const groups = ['a', 'a', 'a', 'b', 'b', 'b'];
    const out = grpoPasskAdvantages(scores, groups);
    const a = (1 - 0.5) / (std([0.2, 1, 0.5]) + 1e-6);
    const b = (3 - 1) / (std([0, 3, 1]) + 1e-6);
    expect(Array.from(out.advantages)).toEqual([0, a, 0, 0, b, 0]);
  });

  it('scale none keeps the raw margin; a tie at the top gives 0 whichever sample is named; a singleton gets 0', () => {
    expect(Array.from(grpoPasskAdvantages([0.2, 1, 0.5], [1, 1, 1], { scale: 'none' }).advantages)).toEqual([
      0, 0.5, 0,
    ]);
    expect(Array.from(grpoPasskAdvantages([1, 0, 1], [1, 1, 1]).advantages)).toEqual([0, 0, 0]);
    const out = grpoPasskAdvantages([5, 1, 1], ['lone', 'g', 'g']);
    expect(Array.from(out.advantages)).toEqual([0, 0, 0]);
    expect(out.zeroStdGroups).toBe(2);
  });

  it('refuses an unknown scale, naming the allowed values', () => {
    expect(() => grpoPasskAdvantages([1, 0], [1, 1], { scale: 'batch' as 'group' })).toThrow(
      /scale = "batch": expected "group" or "none"/,
    );
  });
});
