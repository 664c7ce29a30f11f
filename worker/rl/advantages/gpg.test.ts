import { describe, expect, it } from 'vitest';
import { gpgAdvantages, gpgDetails } from './gpg';

describe('gpgAdvantages (verl compute_gpg_outcome_advantage)', () => {
  it('hand values: α·(r − group mean), α = batch size / non-zero scores, no std division', () => {
    // 6 scores, 2 non-zero: α = 3. Group a: mean 1/3; b: a singleton keeps α·r; c: all equal → 0.
    const scores = [1, 0, 0, 0.5, 0, 0];
    const groups = ['a', 'a', 'a', 'b', 'c', 'c'];
    const out = gpgAdvantages(scores, groups);
    const want = [3 * (1 - 1 / 3), 3 * (0 - 1 / 3), 3 * (0 - 1 / 3), 3 * 0.5, 0, 0];
    want.forEach((w, i) => expect(out.advantages[i]).toBeCloseTo(w, 15));
    expect(out.zeroStdGroups).toBe(2);
    expect(gpgDetails(scores, groups).settings.alpha).toBe(3);
  });

  it('every score non-zero: α = 1, Dr. GRPO (the group mean, no std); no non-zero score: α = B', () => {
    const scores = [1, 2, 4, 3];
    const out = gpgAdvantages(scores, ['x', 'x', 'y', 'y']);
    expect(Array.from(out.advantages)).toEqual([-0.5, 0.5, 0.5, -0.5]);
    expect(gpgDetails([0, 0, 0], [1, 1, 2]).settings.alpha).toBe(3);
  });
});
