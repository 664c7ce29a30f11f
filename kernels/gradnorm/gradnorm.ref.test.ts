import { describe, expect, it } from 'vitest';
import { CLIP_EPS, clipScaleRef, gradNormSquaredRef } from './gradnorm.ref';

function normSq(grads: Parameters<typeof gradNormSquaredRef>[1]): number {
  const out = new Float64Array(1);
  gradNormSquaredRef(out, grads);
  return out[0];
}

function scaleOf(ns: number, maxNorm: number): number {
  const out = new Float64Array(1);
  clipScaleRef(out, [ns], maxNorm);
  return out[0];
}

describe('gradNormSquaredRef', () => {
  it('sums squares over one flat tensor and over a list of tensors', () => {
    expect(normSq(Float32Array.of(3, -4))).toBe(25);
    expect(normSq([[1, 2], [], Float32Array.of(-2), [0, 0, 4]])).toBe(1 + 4 + 4 + 16);
    expect(normSq([])).toBe(0);
  });

  it('keeps float64 range: 1e20-sized gradients do not overflow, 1e-20-sized do not vanish', () => {
    expect(normSq([[1e20, 1e20]])).toBeCloseTo(2e40, -26);
    expect(normSq([[1e-20, 1e-20]]) / 2e-40).toBeCloseTo(1, 12);
  });

  it('stores the sum rounded once into an f32 output', () => {
    const out = new Float32Array(1);
    gradNormSquaredRef(out, [[0.1, 0.2, 0.3]]);
    expect(out[0]).toBe(Math.fround(0.1 * 0.1 + 0.2 * 0.2 + 0.3 * 0.3));
  });
});

describe('clipScaleRef', () => {
  it('is min(1, maxNorm / (norm + 1e-6)), PyTorch clip_grad_norm_', () => {
    expect(scaleOf(25, 1)).toBeCloseTo(1 / (5 + CLIP_EPS), 15); // norm 5, clip to 1
    expect(scaleOf(25, 10)).toBe(1); // below the threshold: unscaled
    expect(scaleOf(0, 1)).toBe(1); // zero gradient: 1 / 1e-6 clamped to 1
    expect(scaleOf(1, 1)).toBeCloseTo(1 / (1 + CLIP_EPS), 15); // exactly at the norm: a hair under 1
  });

  it('gives 0 for an infinite norm and NaN for a NaN norm, as PyTorch does', () => {
    expect(scaleOf(Infinity, 1)).toBe(0);
    expect(scaleOf(NaN, 1)).toBeNaN();
  });

  it('refuses a maxNorm that is not finite and positive, and empty buffers', () => {
    expect(() => scaleOf(1, 0)).toThrow(/maxNorm must be a finite number > 0, got 0/);
    expect(() => scaleOf(1, Infinity)).toThrow(/maxNorm must be a finite number > 0/);
    expect(() => gradNormSquaredRef(new Float32Array(0), [[1]])).toThrow(/out has 0 elements, needs 1/);
  });
});
