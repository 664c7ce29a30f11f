import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { matmulRef } from './matmul.ref';

/** Transposes a row-major (R, C) matrix. */
function transpose(x: Float32Array, R: number, C: number): Float32Array {
  const t = new Float32Array(R * C);
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) t[c * R + r] = x[r * C + c];
  return t;
}

describe('matmulRef', () => {
  it('matches a hand-computed 2x3 · 3x2 product', () => {
    const a = Float32Array.of(1, 2, 3, 4, 5, 6);
    const b = Float32Array.of(7, 8, 9, 10, 11, 12);
    const out = new Float32Array(4);
    matmulRef(out, a, b, 2, 3, 2, 'nn');
    // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
    expect([...out]).toEqual([58, 64, 139, 154]);
  });

  it('nt and tn agree with nn on transposed operands', () => {
    const M = 5,
      K = 7,
      N = 3;
    const a = randomArray(M * K, 1);
    const b = randomArray(K * N, 2);
    const nn = new Float32Array(M * N);
    matmulRef(nn, a, b, M, K, N, 'nn');
    const nt = new Float32Array(M * N);
    matmulRef(nt, a, transpose(b, K, N), M, K, N, 'nt');
    const tn = new Float32Array(M * N);
    matmulRef(tn, transpose(a, M, K), b, M, K, N, 'tn');
    expectClose(nt, nn, { atol: 1e-6, rtol: 1e-6, label: 'nt vs nn' });
    expectClose(tn, nn, { atol: 1e-6, rtol: 1e-6, label: 'tn vs nn' });
  });

  it('accumulates into out when asked', () => {
    const out = Float32Array.of(1, 1, 1, 1);
    matmulRef(out, Float32Array.of(1, 0, 0, 1), Float32Array.of(2, 3, 4, 5), 2, 2, 2, 'nn', true);
    expect([...out]).toEqual([3, 4, 5, 6]);
  });

  it('gives zeros for K = 0 and does nothing for M = 0', () => {
    const out = Float32Array.of(9, 9);
    matmulRef(out, new Float32Array(0), new Float32Array(0), 1, 0, 2, 'nn');
    expect([...out]).toEqual([0, 0]);
    const untouched = Float32Array.of(9);
    matmulRef(untouched, new Float32Array(0), new Float32Array(3), 0, 3, 1, 'nn');
    expect([...untouched]).toEqual([9]);
  });

  it('refuses buffers that are too small, naming the operand and the sizes', () => {
    expect(() => matmulRef(new Float32Array(4), new Float32Array(5), new Float32Array(6), 2, 3, 2, 'nn')).toThrow(
      /a has 5 elements, needs M\*K = 2\*3 = 6/,
    );
    expect(() => matmulRef(new Float32Array(3), new Float32Array(6), new Float32Array(6), 2, 3, 2, 'nn')).toThrow(
      /out has 3 elements/,
    );
    expect(() =>
      matmulRef(new Float32Array(4), new Float32Array(6), new Float32Array(6), 2, 3, 2, 'xx' as 'nn'),
    ).toThrow(/layout must be/);
  });
});
