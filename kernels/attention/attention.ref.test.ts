import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import type { Chain } from '../testing/attention-fixtures';
import { packRows, randomChain } from '../testing/attention-fixtures';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { attentionBackwardRef, attentionForwardRef } from './attention.ref';

type Dims = [B: number, T: number, NH: number, hs: number];

/** Forward in float64: out and lse. */
function forward64(q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>, seg: ArrayLike<number>, [B, T, NH, hs]: Dims) {
  const out = new Float64Array(B * T * NH * hs);
  const lse = new Float64Array(B * NH * T);
  attentionForwardRef(out, lse, q, k, v, seg, B, T, NH, hs);
  return { out, lse };
}

/** Backward in float64 from zeroed gradients. */
function backward64(dout: ArrayLike<number>, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>, seg: ArrayLike<number>, dims: Dims) {
  const [B, T, NH, hs] = dims;
  const { out, lse } = forward64(q, k, v, seg, dims);
  const n = B * T * NH * hs;
  const g = { dq: new Float64Array(n), dk: new Float64Array(n), dv: new Float64Array(n) };
  attentionBackwardRef(g.dq, g.dk, g.dv, dout, q, k, v, out, lse, seg, B, T, NH, hs);
  return g;
}

describe('attentionForwardRef', () => {
  it('matches hand values: causal within a segment, separate segments, padding', () => {
    // hs = 1 (scale 1), one head. Query 1 sees keys 0 and 1 with scores 0 and ln 3: weights 1/4, 3/4.
    const out = new Float32Array(4);
    const lse = new Float32Array(4);
    attentionForwardRef(out, lse, [1, 1, 2, 5], [0, Math.log(3), 0.7, 9], [10, 20, 30, 40], Int32Array.of(1, 1, 2, 0), 1, 4, 1, 1);
    expectClose(out, [10, 17.5, 30, 0], { atol: 1e-5, rtol: 1e-6, label: 'out' });
    expectClose(lse, [0, Math.log(4), 1.4, 0], { atol: 1e-6, rtol: 1e-6, label: 'lse' });
  });

  it('with q = 0 averages v over the allowed keys, per head (head h at columns h·hs..)', () => {
    const [T, NH, hs] = [3, 2, 4];
    const v = randomArray(T * NH * hs, 1);
    const out = new Float32Array(T * NH * hs);
    const lse = new Float32Array(NH * T);
    attentionForwardRef(out, lse, new Float32Array(v.length), randomArray(v.length, 2), v, Int32Array.of(3, 3, 3), 1, T, NH, hs);
    const want = new Float64Array(out.length);
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < NH * hs; c++) {
        for (let s = 0; s <= t; s++) want[t * NH * hs + c] += v[s * NH * hs + c] / (t + 1);
      }
    }
    expectClose(out, want, { atol: 1e-6, rtol: 1e-6, label: 'mean of allowed v' });
    expectClose(lse, [0, Math.log(2), Math.log(3), 0, Math.log(2), Math.log(3)], { atol: 1e-6, rtol: 0, label: 'lse = log(count)' });
  });

  it('refuses short buffers, naming the buffer and the sizes', () => {
    const f = new Float32Array(8);
    expect(() => attentionForwardRef(f, new Float32Array(1), f, f, f, Int32Array.of(1, 1), 1, 2, 1, 4)).toThrow(/lse has 1 elements, needs B\*NH\*T = 1\*1\*2 = 2/);
    expect(() => attentionForwardRef(f, f, f, new Float32Array(7), f, Int32Array.of(1, 1), 1, 2, 1, 4)).toThrow(/k has 7 elements, needs B\*T\*NH\*hs = 1\*2\*1\*4 = 8/);
    expect(() => attentionForwardRef(f, f, f, f, f, Int32Array.of(1), 1, 2, 1, 4)).toThrow(/segmentIds has 1 elements/);
  });
});

describe('attentionBackwardRef', () => {
  it('matches central finite differences of the forward reference for dq, dk, dv (float64)', () => {
    const dims: Dims = [2, 5, 2, 3];
    const [B, T, NH, hs] = dims;
    const n = B * T * NH * hs;
    // Row 0: two segments and a padding tail; row 1: interleaved ids (same id = same sequence).
    const seg = Int32Array.of(1, 1, 2, 2, 0, 5, 5, 7, 5, 7);
    const inputs = { q: Float64Array.from(randomArray(n, 3)), k: Float64Array.from(randomArray(n, 4)), v: Float64Array.from(randomArray(n, 5)) };
    const w = Float64Array.from(randomArray(n, 6));
    const loss = () => forward64(inputs.q, inputs.k, inputs.v, seg, dims).out.reduce((a, o, i) => a + w[i] * o, 0);
    const g = backward64(w, inputs.q, inputs.k, inputs.v, seg, dims);
    for (const name of ['q', 'k', 'v'] as const) {
      const fd = numericGrad(inputs[name], loss, { h: 1e-6 });
      expectClose(g[`d${name}`], fd, { atol: 1e-8, rtol: 1e-6, label: `d${name} vs finite differences` });
    }
    // The padding position (row 0, t = 4) is neither a query nor a key.
    const pad = (4 * NH) * hs;
    for (const grad of [g.dq, g.dk, g.dv]) expect([...grad.subarray(pad, pad + NH * hs)]).toEqual(new Array(NH * hs).fill(0));
  });

  it('accumulates into the gradients', () => {
    const dims: Dims = [1, 3, 1, 4];
    const seg = Int32Array.of(1, 1, 1);
    const [q, k, v, dout] = [7, 8, 9, 10].map((s) => randomArray(12, s));
    const fresh = backward64(dout, q, k, v, seg, dims);
    const { out, lse } = forward64(q, k, v, seg, dims);
    const dq = new Float64Array(12).fill(1), dk = new Float64Array(12).fill(2), dv = new Float64Array(12).fill(3);
    attentionBackwardRef(dq, dk, dv, dout, q, k, v, out, lse, seg, ...dims);
    expectClose(dq, fresh.dq.map((x) => x + 1), { atol: 1e-12, rtol: 0, label: 'dq += ' });
    expectClose(dk, fresh.dk.map((x) => x + 2), { atol: 1e-12, rtol: 0, label: 'dk += ' });
    expectClose(dv, fresh.dv.map((x) => x + 3), { atol: 1e-12, rtol: 0, label: 'dv += ' });
  });
});

describe('packing invariance (reference)', () => {
  it('gives a chain the same outputs and gradients alone, packed after another chain, and swapped', () => {
    const [T, NH, hs] = [9, 2, 4];
    const a: Chain = randomChain(3, NH, hs, 11);
    const b: Chain = randomChain(5, NH, hs, 21);
    // Row 0: a alone; row 1: b then a; row 2: a then b with other ids.
    const rows = packRows([[[a, 1]], [[b, 1], [a, 2]], [[a, 7], [b, 3]]], T, NH, hs, 31);
    const dims: Dims = [3, T, NH, hs];
    const { out, lse } = forward64(rows.q, rows.k, rows.v, rows.segmentIds, dims);
    const g = backward64(rows.dout, rows.q, rows.k, rows.v, rows.segmentIds, dims);
    const W = NH * hs;
    const span = (x: Float64Array, row: number, t0: number, len: number) => [...x.subarray((row * T + t0) * W, (row * T + t0 + len) * W)];
    const lseSpan = (row: number, t0: number, len: number) => Array.from({ length: NH * len }, (_, i) => lse[(row * NH + Math.floor(i / len)) * T + t0 + (i % len)]);
    for (const [row, t0] of [[1, 5], [2, 0]]) {
      expect(span(out, row, t0, a.len)).toEqual(span(out, 0, 0, a.len));
      expect(lseSpan(row, t0, a.len)).toEqual(lseSpan(0, 0, a.len));
      for (const grad of [g.dq, g.dk, g.dv]) expect(span(grad, row, t0, a.len)).toEqual(span(grad, 0, 0, a.len));
    }
    expect(span(out, 2, 3, b.len)).toEqual(span(out, 1, 0, b.len));
  });
});
