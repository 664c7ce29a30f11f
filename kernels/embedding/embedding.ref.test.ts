import { describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { embeddingBackwardRef, embeddingForwardRef } from './embedding.ref';

// wte (V = 3, C = 2) = [[1, 2], [3, 4], [5, 6]]
const WTE = [1, 2, 3, 4, 5, 6];

describe('embeddingForwardRef', () => {
  it('gathers the rows named by ids', () => {
    const out = new Float32Array(6);
    embeddingForwardRef(out, Int32Array.of(2, 0, 2), WTE, 3, 2, 3);
    expect([...out]).toEqual([5, 6, 1, 2, 5, 6]);
  });

  it('throws for an id outside 0..V-1, naming the index', () => {
    const out = new Float32Array(4);
    expect(() => embeddingForwardRef(out, Int32Array.of(0, 3), WTE, 2, 2, 3)).toThrow(/ids\[1\] = 3 is outside 0\.\.2/);
    expect(() => embeddingForwardRef(out, Int32Array.of(-1, 0), WTE, 2, 2, 3)).toThrow(/ids\[0\] = -1/);
    expect(() => embeddingForwardRef(out, [0.5, 0], WTE, 2, 2, 3)).toThrow(/ids\[0\] = 0.5/);
  });

  it('refuses buffers that are too small, naming the operand and the sizes', () => {
    expect(() => embeddingForwardRef(new Float32Array(3), Int32Array.of(0, 1), WTE, 2, 2, 3)).toThrow(
      /out has 3 elements, needs N\*C = 2\*2 = 4/,
    );
    expect(() => embeddingForwardRef(new Float32Array(4), Int32Array.of(0), WTE, 2, 2, 3)).toThrow(
      /ids has 1 elements, needs N = 2/,
    );
    expect(() => embeddingForwardRef(new Float32Array(4), Int32Array.of(0, 1), WTE, 2, 2, 4)).toThrow(
      /wte has 6 elements, needs V\*C = 4\*2 = 8/,
    );
  });
});

describe('embeddingBackwardRef', () => {
  it('adds dout rows into the rows of their ids, accumulating', () => {
    const dwte = Float32Array.of(0, 0, 0, 0, 100, 100);
    embeddingBackwardRef(dwte, [1, 1, 2, 3, 10, 20], Int32Array.of(2, 0, 2), 3, 2, 3);
    expect([...dwte]).toEqual([2, 3, 0, 0, 111, 121]);
    expect(() => embeddingBackwardRef(dwte, [1, 1], Int32Array.of(7), 1, 2, 3)).toThrow(
      /embeddingBackward: ids\[0\] = 7/,
    );
  });

  it('agrees with central differences of the forward (repeated ids included)', () => {
    const N = 9,
      C = 4,
      V = 5;
    const rand = mulberry32(3);
    const ids = Int32Array.from({ length: N }, () => Math.floor(rand() * V));
    ids[0] = ids[1] = ids[2] = 1; // a token repeated
    const wte = Float64Array.from(randomArray(V * C, 4));
    const g = Float64Array.from(randomArray(N * C, 5)); // dL/dout for L = Σ out·g
    const out = new Float64Array(N * C);
    const loss = () => {
      embeddingForwardRef(out, ids, wte, N, C, V);
      return out.reduce((s, v, i) => s + v * g[i], 0);
    };
    const dwte0 = Float64Array.from(randomArray(V * C, 6));
    const dwte = dwte0.slice();
    embeddingBackwardRef(dwte, g, ids, N, C, V);
    expectClose(
      dwte.map((v, i) => v - dwte0[i]),
      numericGrad(wte, loss),
      { atol: 1e-8, rtol: 1e-8, label: 'dwte vs FD' },
    );
  });
});
