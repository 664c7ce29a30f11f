import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { ropeBackwardRef, ropeForwardRef } from './rope.ref';

/** Σ w · rope(x) in float64: a scalar loss whose gradient in x is ropeBackward(w). */
function lossOf(
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  positions: ArrayLike<number>,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): number {
  const out = new Float64Array(N * NH * hs);
  ropeForwardRef(out, x, positions, N, NH, hs, theta);
  let l = 0;
  for (let i = 0; i < out.length; i++) l += w[i] * out[i];
  return l;
}

describe('ropeForwardRef', () => {
  it('matches hand values: pairs (i, i + hs/2), inv_freq = theta^(-2i/hs)', () => {
    const out = new Float32Array(8);
    // token 0 at position 0 (identity), token 1 at position 1; hs = 4, theta = 10000, so the
    // pair (0, 2) turns by 1 rad and the pair (1, 3) by 10000^(-1/2) = 0.01 rad.
    ropeForwardRef(out, [1, 2, 3, 4, 1, 2, 3, 4], Int32Array.of(0, 1), 2, 1, 4, 10000);
    const c1 = Math.cos(1),
      s1 = Math.sin(1),
      c2 = Math.cos(0.01),
      s2 = Math.sin(0.01);
    const want = [1, 2, 3, 4, 1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + 1 * s1, 4 * c2 + 2 * s2];
    expectClose(out, want, { atol: 1e-6, rtol: 1e-6, label: 'rope hand values' });
  });

  it('rotates each head on its own with the same angles', () => {
    const x = randomArray(2 * 8, 1);
    const both = new Float32Array(16);
    ropeForwardRef(both, x, Int32Array.of(5), 1, 2, 8, 10000);
    const second = new Float32Array(8);
    ropeForwardRef(second, x.subarray(8), Int32Array.of(5), 1, 1, 8, 10000);
    expect([...both.subarray(8)]).toEqual([...second]);
  });

  it('depends only on relative position in q·k (the point of RoPE)', () => {
    const hs = 16;
    const q = randomArray(hs, 2);
    const k = randomArray(hs, 3);
    const dot = (m: number, n: number) => {
      const rq = new Float64Array(hs);
      const rk = new Float64Array(hs);
      ropeForwardRef(rq, q, [m], 1, 1, hs, 500000);
      ropeForwardRef(rk, k, [n], 1, 1, hs, 500000);
      return rq.reduce((s, v, i) => s + v * rk[i], 0);
    };
    expect(dot(7, 3)).toBeCloseTo(dot(104, 100), 10);
    expect(dot(7, 3)).not.toBeCloseTo(dot(7, 4), 3);
  });
});

describe('ropeBackwardRef', () => {
  it('matches central finite differences of the forward reference (float64)', () => {
    const N = 3,
      NH = 2,
      hs = 6,
      theta = 10000;
    const positions = Int32Array.of(0, 9, 200);
    const x = Float64Array.from(randomArray(N * NH * hs, 4));
    const w = Float64Array.from(randomArray(N * NH * hs, 5));
    const grad = new Float64Array(N * NH * hs);
    ropeBackwardRef(grad, w, positions, N, NH, hs, theta);
    const fd = numericGrad(x, () => lossOf(x, w, positions, N, NH, hs, theta), { h: 1e-5 });
    expectClose(grad, fd, { atol: 1e-9, rtol: 1e-8, label: 'rope backward vs finite differences' });
  });

  it('accumulates, and undoes the forward rotation (Rᵀ R = I)', () => {
    const x = randomArray(2 * 3 * 8, 6);
    const rotated = new Float64Array(x.length);
    ropeForwardRef(rotated, x, [3, 77], 2, 3, 8, 10000);
    const back = new Float64Array(x.length).fill(1);
    ropeBackwardRef(back, rotated, [3, 77], 2, 3, 8, 10000);
    expectClose(
      back,
      Array.from(x, (v) => v + 1),
      { atol: 1e-12, rtol: 0, label: 'Rᵀ R x + 1' },
    );
  });

  it('refuses odd hs, bad theta and short buffers, naming the buffer and the sizes', () => {
    const f = new Float32Array(12);
    expect(() => ropeForwardRef(f, f, [0, 0], 2, 2, 3, 10000)).toThrow(/hs must be even/);
    expect(() => ropeForwardRef(f, f, [0, 0], 2, 1, 6, 0)).toThrow(/theta must be a positive/);
    expect(() => ropeForwardRef(new Float32Array(11), f, [0, 0], 2, 1, 6, 10000)).toThrow(
      /out has 11 elements, needs N\*NH\*hs = 2\*1\*6 = 12/,
    );
    expect(() => ropeBackwardRef(f, new Float32Array(4), [0, 0], 2, 1, 6, 10000)).toThrow(/dout has 4 elements/);
    expect(() => ropeBackwardRef(f, f, [0], 2, 1, 6, 10000)).toThrow(/positions has 1 elements, needs N = 2/);
  });
});
