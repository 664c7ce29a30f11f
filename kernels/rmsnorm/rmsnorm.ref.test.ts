import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { rmsnormBackwardRef, rmsnormForwardRef } from './rmsnorm.ref';

const f64 = (xs: ArrayLike<number>) => Float64Array.from(xs);

describe('rmsnormForwardRef', () => {
  it('matches hand values, and a zero row gives zeros with rstd = 1/sqrt(eps)', () => {
    const out = new Float64Array(4);
    const rstd = new Float64Array(2);
    // Row [3, 4]: mean(x²) = 12.5, r = 1/sqrt(12.5 + 1e-5); out = [3r·1, 4r·2].
    rmsnormForwardRef(out, rstd, [3, 4, 0, 0], [1, 2], 2, 2, 1e-5);
    const r = 1 / Math.sqrt(12.5 + 1e-5);
    expectClose(out, [3 * r, 8 * r, 0, 0], { atol: 1e-12, rtol: 0, label: 'out' });
    expectClose(rstd, [r, 316.2277660168379], { atol: 1e-9, rtol: 0, label: 'rstd' });
  });

  it('refuses short buffers, C = 0 and a bad eps, naming what is wrong', () => {
    expect(() => rmsnormForwardRef(new Float32Array(4), new Float32Array(1), [1, 2, 3, 4], [1, 1], 2, 2, 1e-5)).toThrow(
      /rstd has 1 elements, needs N = 2/,
    );
    expect(() => rmsnormForwardRef(new Float32Array(4), new Float32Array(2), [1, 2, 3, 4], [1], 2, 2, 1e-5)).toThrow(
      /weight has 1 elements, needs C = 2/,
    );
    expect(() => rmsnormForwardRef(new Float32Array(4), new Float32Array(2), [1, 2, 3], [1, 1], 2, 2, 1e-5)).toThrow(
      /inp has 3 elements, needs N\*C = 2\*2 = 4/,
    );
    expect(() => rmsnormForwardRef(new Float32Array(0), new Float32Array(1), [], [], 1, 0, 1e-5)).toThrow(
      /C must be at least 1/,
    );
    expect(() => rmsnormForwardRef(new Float32Array(2), new Float32Array(1), [1, 2], [1, 1], 1, 2, -1)).toThrow(
      /eps must be finite and ≥ 0, got -1/,
    );
  });
});

describe('rmsnormBackwardRef', () => {
  it('matches hand values for C = 1, eps = 0 (out = sign(x)·w, so dinp = 0) and accumulates', () => {
    const out = new Float64Array(2);
    const rstd = new Float64Array(2);
    rmsnormForwardRef(out, rstd, [2, -3], [5], 2, 1, 0);
    expect([...out]).toEqual([5, -5]);
    const dinp = Float64Array.of(1, 1);
    const dweight = Float64Array.of(10);
    rmsnormBackwardRef(dinp, dweight, [0.5, 2], [2, -3], [5], rstd, 2, 1);
    expectClose(dinp, [1, 1], { atol: 1e-12, rtol: 0, label: 'dinp' });
    expectClose(dweight, [10 + 0.5 - 2], { atol: 1e-12, rtol: 0, label: 'dweight' });
  });

  it('agrees with central differences of the forward, for ordinary, large and tiny rows', () => {
    const N = 4,
      C = 5,
      eps = 1e-5;
    const inp = f64(randomArray(N * C, 21, -2, 2));
    for (let c = 0; c < C; c++) {
      inp[2 * C + c] *= 1e3; // a large row
      inp[3 * C + c] *= 1e-3; // a tiny row, where eps matters
    }
    const weight = f64(randomArray(C, 22, 0.5, 1.5));
    const g = f64(randomArray(N * C, 23)); // dL/dout for L = Σ out·g
    const out = new Float64Array(N * C);
    const rstd = new Float64Array(N);
    const loss = () => {
      rmsnormForwardRef(out, rstd, inp, weight, N, C, eps);
      return out.reduce((s, v, i) => s + v * g[i], 0);
    };
    loss();
    const dinp0 = f64(randomArray(N * C, 24));
    const dweight0 = f64(randomArray(C, 25));
    const dinp = dinp0.slice();
    const dweight = dweight0.slice();
    rmsnormBackwardRef(dinp, dweight, g, inp, weight, rstd, N, C);
    // Steps relative to each entry: the rows range from ×1e-3 to ×1e3.
    const fdInp = numericGrad(inp, loss, { relative: true });
    const fdWeight = numericGrad(weight, loss, { relative: true });
    expectClose(
      dinp.map((v, i) => v - dinp0[i]),
      fdInp,
      { atol: 1e-7, rtol: 1e-6, label: 'dinp vs FD' },
    );
    expectClose(
      dweight.map((v, i) => v - dweight0[i]),
      fdWeight,
      { atol: 1e-7, rtol: 1e-6, label: 'dweight vs FD' },
    );
  });
});
