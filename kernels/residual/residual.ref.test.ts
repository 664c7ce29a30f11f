import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { numericGrad } from '../testing/finite-diff';
import { accumulateRef, residualForwardRef } from './residual.ref';

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
      const fd = numericGrad(x, loss, { h: 1e-5 });
      for (let i = 0; i < n; i++) expect(analytic[i] - before[i]).toBeCloseTo(fd[i], 8);
    }
  });

  it('refuses short buffers and bad n, naming the operand', () => {
    expect(() => residualForwardRef(new Float32Array(2), [1, 2, 3], [1, 2, 3], 3)).toThrow(
      /out has 2 elements, needs n = 3/,
    );
    expect(() => accumulateRef(new Float32Array(3), [1], 3)).toThrow(/src has 1 elements/);
    expect(() => accumulateRef(new Float32Array(3), [1], -1)).toThrow(/n must be a non-negative integer/);
  });
});
