import { describe, expect, it } from 'vitest';
import { effectiveSampleSize, isWeights } from './is-weights';

const ln = Math.log;
function expectArrayClose(actual: ArrayLike<number>, expected: ArrayLike<number>, digits = 12): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i], `index ${i}`).toBeCloseTo(expected[i], digits);
}

// 2×3 table; [0, 2] is padding and holds garbage that must be ignored.
const rows = 2;
const width = 3;
const responseMask = [1, 1, 0, 1, 1, 1];
const logRatio = [ln(0.5), ln(3), Number.NaN, 0, ln(1.5), -ln(4)];
const base = { rows, width, responseMask, logRatio };

describe('isWeights, token level', () => {
  it('caps the ratio at the TIS threshold (hand values)', () => {
    const { weights, raw, metrics } = isWeights({ ...base, threshold: 2 });
    expectArrayClose(raw, [0.5, 3, 0, 1, 1.5, 0.25]);
    expectArrayClose(weights, [0.5, 2, 0, 1, 1.5, 0.25]);
    const n = 5 + 1e-8;
    expect(metrics['mismatch/rollout_is_mean']).toBeCloseTo(5.25 / n, 12);
    expect(metrics['mismatch/rollout_is_ratio_fraction_high']).toBeCloseTo(1 / n, 12); // raw 3 > 2
    expect(metrics['mismatch/rollout_is_ratio_fraction_low']).toBeCloseTo(1 / n, 12); // raw 0.25 < 1/2
    expect(metrics['mismatch/rollout_is_max']).toBe(2);
    expect(metrics['mismatch/rollout_is_min']).toBe(0.25);
    expect(metrics['mismatch/rollout_is_std']).toBeCloseTo(Math.sqrt(7.5625 / 5 - 1.05 ** 2), 6);
    expect(metrics['mismatch/ess']).toBeCloseTo(1.05 ** 2 / (7.5625 / 5), 6);
    expect(metrics['mismatch/rollout_is_oob_ratio']).toBeUndefined();
  });

  it('with an infinite cap returns the raw ratio, clamped at exp(±20) like verl', () => {
    const lr = [0.3, -0.7, 0, 25, -25, 1.2];
    const { weights } = isWeights({ rows, width, responseMask: [1, 1, 1, 1, 1, 1], logRatio: lr, threshold: Infinity });
    expectArrayClose(weights, [Math.exp(0.3), Math.exp(-0.7), 1, Math.exp(20), Math.exp(-20), Math.exp(1.2)]);
  });

  it('zeroes weights outside an IcePop band and keeps the ratio inside', () => {
    const { weights, metrics } = isWeights({ ...base, threshold: [0.5, 2] });
    expectArrayClose(weights, [0.5, 0, 0, 1, 1.5, 0]);
    expect(metrics['mismatch/rollout_is_oob_ratio']).toBeCloseTo(2 / (5 + 1e-8), 12);
  });

  it('an infinite band [0, ∞] keeps every raw ratio', () => {
    const { weights, raw } = isWeights({ ...base, threshold: [0, Infinity] });
    expectArrayClose(weights, raw);
  });

  it('batch-normalises to a masked mean of 1', () => {
    const { weights, metrics } = isWeights({ ...base, threshold: 2, batchNormalize: true });
    const factor = 5.25 / (5 + 1e-8);
    expect(metrics['mismatch/rollout_is_batch_norm_factor']).toBeCloseTo(factor, 12);
    expectArrayClose(
      weights,
      [0.5, 2, 0, 1, 1.5, 0.25].map((w) => w / factor),
    );
    // the metrics describe the weights before normalisation, as verl's do
    expect(metrics['mismatch/rollout_is_max']).toBe(2);
  });
});

describe('isWeights, sequence level', () => {
  it('broadcasts exp of the masked log-ratio sum per row', () => {
    const { weights, metrics } = isWeights({ ...base, level: 'sequence', threshold: 2 });
    expectArrayClose(weights, [1.5, 1.5, 0, 0.375, 0.375, 0.375]);
    expect(metrics['mismatch/rollout_is_max']).toBeCloseTo(1.5, 12);
    expect(metrics['mismatch/rollout_is_min']).toBeCloseTo(0.375, 12);
    expect(metrics['mismatch/rollout_is_ratio_fraction_low']).toBe(0.5); // 0.375 < 1/2
    expect(metrics['mismatch/rollout_is_seq_mean']).toBeCloseTo((1.5 + 0.375) / 2, 6);
  });

  it('treats packed chains as sequences: two chains in one row equal two rows', () => {
    const packed = isWeights({
      rows: 1,
      width: 6,
      responseMask,
      logRatio,
      segmentIds: [1, 1, 1, 2, 2, 2],
      level: 'sequence',
      threshold: 2,
    });
    const unpacked = isWeights({ ...base, level: 'sequence', threshold: 2 });
    expectArrayClose(packed.weights, unpacked.weights);
    expect(packed.metrics).toEqual(unpacked.metrics);
  });

  it('caps the sequence weight and batch-normalises over per-sequence means', () => {
    const lr = [ln(2), ln(3), 0, 0, 0, 0]; // row 0 ratio 6, row 1 ratio 1
    const { weights, metrics } = isWeights({
      rows,
      width,
      responseMask,
      logRatio: lr,
      level: 'sequence',
      threshold: 4,
      batchNormalize: true,
    });
    const seq0 = (4 * 2) / (2 + 1e-8);
    const seq1 = (1 * 3) / (3 + 1e-8);
    const factor = (seq0 + seq1) / 2;
    expect(metrics['mismatch/rollout_is_batch_norm_factor']).toBeCloseTo(factor, 12);
    expectArrayClose(weights, [4 / factor, 4 / factor, 0, 1 / factor, 1 / factor, 1 / factor]);
    expect(metrics['mismatch/rollout_is_ratio_fraction_high']).toBe(0.5);
  });
});

describe('effectiveSampleSize', () => {
  it('is 1 for equal weights', () => {
    expect(effectiveSampleSize([0.7, 0.7, 0.7, 123], [1, 1, 1, 0])).toBeCloseTo(1, 7);
  });
  it('is 1/n when one weight carries everything', () => {
    expect(effectiveSampleSize([1, 0, 0, 0], [1, 1, 1, 1])).toBeCloseTo(0.25, 7);
  });
  it('clamps at the cap first', () => {
    expect(effectiveSampleSize([1, 100], [1, 1], 1)).toBeCloseTo(1, 7);
  });
});

describe('isWeights, refusals and edge cases', () => {
  it('returns zero weights and no metrics for an empty mask', () => {
    const r = isWeights({ rows, width, responseMask: [0, 0, 0, 0, 0, 0], logRatio: [1, 2, 3, 4, 5, 6] });
    expect(Array.from(r.weights)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(r.metrics).toEqual({});
  });
  it.each([[0], [-1], [Number.NaN], [[2, 1] as const], [[-1, 2] as const], [[0.5, 0] as const]])(
    'refuses threshold %j',
    (threshold) => {
      expect(() => isWeights({ ...base, threshold })).toThrow(/IS (threshold|band)/);
    },
  );
  it('refuses a wrong shape, a non-binary mask, mask on padding and a non-finite masked ratio', () => {
    expect(() => isWeights({ ...base, logRatio: [0, 0, 0] })).toThrow(/logRatio.*2 × 3/);
    expect(() => isWeights({ ...base, responseMask: [1, 0.5, 0, 1, 1, 1] })).toThrow(/expected 0 or 1/);
    expect(() => isWeights({ ...base, segmentIds: [1, 1, 0, 1, 1, 0] })).toThrow(/padding/);
    expect(() => isWeights({ ...base, logRatio: [0, Number.NaN, 0, 0, 0, 0] })).toThrow(/logRatio\[0, 1\]/);
    expect(() => isWeights({ ...base, level: 'row' as never })).toThrow(/level/);
  });
});
