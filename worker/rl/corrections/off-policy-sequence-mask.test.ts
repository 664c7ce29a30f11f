import { describe, expect, it } from 'vitest';
import { objectiveTable } from '../testing/loss-table';
import { offPolicySequenceMask } from './off-policy-sequence-mask';

// The shared 2×3 table: sampler − logp = 0, −1, ·, 0.7, 0, −0.1 on chains {0,1}, {3,4}, {5}
// (chain {2} has no mask token), so the chains' mean drifts are −0.5, 0.35 and −0.1.
const t = objectiveTable();
const input = (threshold: number, advantages: ArrayLike<number> = t.advantages) => ({
  rows: t.rows,
  width: t.width,
  responseMask: t.responseMask,
  segmentIds: t.segmentIds,
  logp: t.logp,
  samplingLogp: t.behaviorLogp!,
  advantages,
  threshold,
});

describe('offPolicySequenceMask (TRL get_off_policy_mask)', () => {
  it('masks the negative-advantage tokens of a chain whose mean drift exceeds δ', () => {
    const { keep, drift, metrics } = offPolicySequenceMask(input(0.3));
    // Chain {3,4} drifts 0.35 > 0.3: token 3 (A = −0.5) is dropped, token 4 (A = 2) kept.
    expect(Array.from(keep)).toEqual([1, 1, 1, 0, 1, 1]);
    expect(drift[0]).toBeCloseTo(-0.5, 15);
    expect(drift[1]).toBeCloseTo(-0.5, 15);
    expect(drift[2]).toBe(0);
    expect(drift[3]).toBeCloseTo(0.35, 15);
    expect(drift[5]).toBeCloseTo(-0.1, 15);
    expect(metrics['rl/opsm_masked_fraction']).toBe(1 / 5);
    expect(metrics['rl/opsm_seq_masked_fraction']).toBe(1 / 3);
  });

  it('keeps a chain at or below δ, and every non-negative advantage whatever the drift', () => {
    expect(Array.from(offPolicySequenceMask(input(0.4)).keep)).toEqual([1, 1, 1, 1, 1, 1]);
    // δ = 0 drops every negative-advantage token of a chain that drifted at all: token 1's chain drifted −0.5 (kept).
    expect(Array.from(offPolicySequenceMask(input(0)).keep)).toEqual([1, 1, 1, 0, 1, 1]);
    const positive = offPolicySequenceMask(input(0, [1, 0, 0, 0, 2, 0.5]));
    expect(Array.from(positive.keep)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(positive.metrics['rl/opsm_masked_fraction']).toBe(0);
  });

  it('reads a row as the sequence without segmentIds (mean over its mask tokens)', () => {
    // Row 1 as one sequence: (0.7 + 0 − 0.1)/3 = 0.2 > 0.15, so its negative token 3 goes.
    const { keep, drift } = offPolicySequenceMask({ ...input(0.15), segmentIds: undefined });
    expect(drift[4]).toBeCloseTo(0.2, 15);
    expect(Array.from(keep)).toEqual([1, 1, 1, 0, 1, 1]);
  });

  it('refuses a threshold that is not a finite number ≥ 0, naming it', () => {
    for (const bad of [-0.1, Number.NaN, Infinity])
      expect(() => offPolicySequenceMask(input(bad))).toThrow(/threshold = .*: expected a finite number ≥ 0/);
  });
});
