import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { swigluBackwardRef, swigluForwardRef } from './swiglu.ref';

const f64 = (xs: ArrayLike<number>) => Float64Array.from(xs);

describe('swigluForwardRef', () => {
  it('matches hand values', () => {
    // silu(0) = 0, silu(1) = 1/(1 + e^-1) = 0.7310585786, silu(-1) = -0.2689414214,
    // silu(2) = 2/(1 + e^-2) = 1.7615941560
    const out = new Float64Array(4);
    swigluForwardRef(out, [0, 1, -1, 2], [3, 2, 1, 0.5], 4);
    expectClose(out, [0, 1.4621171573, -0.2689414214, 0.880797078], { atol: 1e-9, rtol: 0, label: 'swiglu hand' });
  });

  it('tends to g·up for g ≫ 0 and to 0 for g ≪ 0, without NaN', () => {
    const out = new Float32Array(4);
    swigluForwardRef(out, [1e30, -1e30, 800, -800], [2, 2, 1, 1], 4);
    expect([...out]).toEqual([2e30, -0, 800, -0].map(Math.fround));
  });
});

describe('swigluBackwardRef', () => {
  it('matches hand values at g = 0 (d silu/dg = 1/2) and accumulates', () => {
    const dgate = Float64Array.of(1, 0);
    const dup = Float64Array.of(0, 5);
    swigluBackwardRef(dgate, dup, [2, 1], [0, 1], [3, 4], 2);
    // g = 1: σ = 0.7310585786, d silu/dg = σ(1 + 1·(1 − σ)) = 0.9276705118
    expectClose(dgate, [1 + 2 * 3 * 0.5, 4 * 0.9276705118], { atol: 1e-9, rtol: 0, label: 'dgate' });
    expectClose(dup, [0, 5 + 0.7310585786], { atol: 1e-9, rtol: 0, label: 'dup' });
  });

  it('agrees with central differences of the forward, including saturated gates', () => {
    const n = 9;
    const gate = f64(randomArray(n, 11, -4, 4));
    gate[0] = 30;
    gate[1] = -30;
    gate[2] = 0;
    const up = f64(randomArray(n, 12, -2, 2));
    const g = f64(randomArray(n, 13)); // dL/dout for L = Σ out·g
    const out = new Float64Array(n);
    const loss = () => {
      swigluForwardRef(out, gate, up, n);
      return out.reduce((s, v, i) => s + v * g[i], 0);
    };
    const dgate0 = f64(randomArray(n, 14));
    const dup0 = f64(randomArray(n, 15));
    const dgate = dgate0.slice();
    const dup = dup0.slice();
    swigluBackwardRef(dgate, dup, g, gate, up, n);
    const fdGate = numericGrad(gate, loss);
    const fdUp = numericGrad(up, loss);
    expectClose(
      dgate.map((v, i) => v - dgate0[i]),
      fdGate,
      { atol: 1e-8, rtol: 1e-7, label: 'dgate vs FD' },
    );
    expectClose(
      dup.map((v, i) => v - dup0[i]),
      fdUp,
      { atol: 1e-8, rtol: 1e-7, label: 'dup vs FD' },
    );
  });

  it('refuses short buffers, naming the operand', () => {
    expect(() => swigluBackwardRef(new Float32Array(2), new Float32Array(1), [1, 2], [1, 2], [1, 2], 2)).toThrow(
      /swigluBackward: dup has 1 elements, needs n = 2/,
    );
  });
});
