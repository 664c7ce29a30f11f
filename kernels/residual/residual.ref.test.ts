import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { flatGrid } from './launch';
import { accumulateRef, residualForwardRef } from './residual.ref';

/** Central differences (float64) of a scalar function with respect to every entry of `x`. */
function numericGrad(x: Float64Array, f: () => number, h = 1e-5): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i];
    x[i] = x0 + h;
    const up = f();
    x[i] = x0 - h;
    const down = f();
    x[i] = x0;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

describe('residualForwardRef and accumulateRef', () => {
  it('match hand values', () => {
    const out = new Float32Array(3);
    residualForwardRef(out, [1, -2, 0.5], [10, 2, 0.25], 3);
    expect([...out]).toEqual([11, 0, 0.75]);
    const dst = Float32Array.of(1, 1, 1, 7);
    accumulateRef(dst, [1, 2, 3, 100], 3);
    expect([...dst]).toEqual([2, 3, 4, 7]); // only n elements touched
  });

  it('accumulate is the backward of the residual add (central differences)', () => {
    const n = 6;
    const a = Float64Array.from(randomArray(n, 1));
    const b = Float64Array.from(randomArray(n, 2));
    const g = Float64Array.from(randomArray(n, 3)); // dL/dout for L = Σ out·g
    const out = new Float64Array(n);
    const loss = () => {
      residualForwardRef(out, a, b, n);
      return out.reduce((s, v, i) => s + v * g[i], 0);
    };
    for (const x of [a, b]) {
      const analytic = Float64Array.from(randomArray(n, 4)); // accumulates on top of what is there
      const before = analytic.slice();
      accumulateRef(analytic, g, n);
      const fd = numericGrad(x, loss);
      for (let i = 0; i < n; i++) expect(analytic[i] - before[i]).toBeCloseTo(fd[i], 8);
    }
  });

  it('refuses short buffers and bad n, naming the operand', () => {
    expect(() => residualForwardRef(new Float32Array(2), [1, 2, 3], [1, 2, 3], 3)).toThrow(/out has 2 elements, needs n = 3/);
    expect(() => accumulateRef(new Float32Array(3), [1], 3)).toThrow(/src has 1 elements/);
    expect(() => accumulateRef(new Float32Array(3), [1], -1)).toThrow(/n must be a non-negative integer/);
  });
});

describe('flatGrid', () => {
  it('stays 1-D under the limit and folds into 2-D above it, covering every group', () => {
    expect(flatGrid(5, 65535)).toEqual([5, 1]);
    expect(flatGrid(0, 8)).toEqual([0, 1]);
    for (const groups of [9, 16, 17, 63, 64]) {
      const [x, y] = flatGrid(groups, 8);
      expect(x).toBeLessThanOrEqual(8);
      expect(y).toBeLessThanOrEqual(8);
      expect(x * y).toBeGreaterThanOrEqual(groups);
      expect(x * (y - 1)).toBeLessThan(groups); // no wholly empty row of workgroups
    }
    expect(() => flatGrid(65, 8)).toThrow(/exceed 8²/);
  });
});
