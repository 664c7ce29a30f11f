import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import type { Chain } from '../testing/attention-fixtures';
import { packRows, randomChain } from '../testing/attention-fixtures';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { attentionBackwardRef, attentionForwardRef } from './attention.ref';

/** (B, T, NH, hs) with NKV = NH, or (B, T, NH, hs, NKV) for grouped-query attention. */
type Dims = [B: number, T: number, NH: number, hs: number, NKV?: number];

/** Forward in float64: out and lse. */
function forward64(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  seg: ArrayLike<number>,
  [B, T, NH, hs, NKV = NH]: Dims,
) {
  const out = new Float64Array(B * T * NH * hs);
  const lse = new Float64Array(B * NH * T);
  attentionForwardRef(out, lse, q, k, v, seg, B, T, NH, NKV, hs);
  return { out, lse };
}

/** Backward in float64 from zeroed gradients. */
function backward64(
  dout: ArrayLike<number>,
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  seg: ArrayLike<number>,
  dims: Dims,
) {
  const [B, T, NH, hs, NKV = NH] = dims;
  const { out, lse } = forward64(q, k, v, seg, dims);
  const [n, nkv] = [B * T * NH * hs, B * T * NKV * hs];
  const g = { dq: new Float64Array(n), dk: new Float64Array(nkv), dv: new Float64Array(nkv) };
  attentionBackwardRef(g.dq, g.dk, g.dv, dout, q, k, v, out, lse, seg, B, T, NH, NKV, hs);
  return g;
}

/**
 * transformers' repeat_kv: (B, T, NKV, hs) → (B, T, NH, hs), kv head j copied to query heads
 * j·G..(j+1)·G−1 (G = NH / NKV). Written from the HF definition, not from kvHeadOf.
 */
function repeatKv(x: ArrayLike<number>, B: number, T: number, NKV: number, G: number, hs: number): Float64Array {
  const out = new Float64Array(B * T * NKV * G * hs);
  for (let bt = 0; bt < B * T; bt++) {
    for (let j = 0; j < NKV; j++) {
      for (let r = 0; r < G; r++) {
        for (let d = 0; d < hs; d++) out[((bt * NKV + j) * G + r) * hs + d] = x[(bt * NKV + j) * hs + d];
      }
    }
  }
  return out;
}

/** The adjoint of repeatKv: sums the G query-head copies of each kv head, (B, T, NH, hs) → (B, T, NKV, hs). */
function sumGroups(x: ArrayLike<number>, B: number, T: number, NKV: number, G: number, hs: number): Float64Array {
  const out = new Float64Array(B * T * NKV * hs);
  for (let bt = 0; bt < B * T; bt++) {
    for (let j = 0; j < NKV; j++) {
      for (let r = 0; r < G; r++) {
        for (let d = 0; d < hs; d++) out[(bt * NKV + j) * hs + d] += x[((bt * NKV + j) * G + r) * hs + d];
      }
    }
  }
  return out;
}

describe('attentionForwardRef', () => {
  it('matches hand values: causal within a segment, separate segments, padding', () => {
    // hs = 1 (scale 1), one head. Query 1 sees keys 0 and 1 with scores 0 and ln 3: weights 1/4, 3/4.
    const out = new Float32Array(4);
    const lse = new Float32Array(4);
    attentionForwardRef(
      out,
      lse,
      [1, 1, 2, 5],
      [0, Math.log(3), 0.7, 9],
      [10, 20, 30, 40],
      Int32Array.of(1, 1, 2, 0),
      1,
      4,
      1,
      1,
      1,
    );
    expectClose(out, [10, 17.5, 30, 0], { atol: 1e-5, rtol: 1e-6, label: 'out' });
    expectClose(lse, [0, Math.log(4), 1.4, 0], { atol: 1e-6, rtol: 1e-6, label: 'lse' });
  });

  it('with q = 0 averages v over the allowed keys, per head (head h at columns h·hs..)', () => {
    const [T, NH, hs] = [3, 2, 4];
    const v = randomArray(T * NH * hs, 1);
    const out = new Float32Array(T * NH * hs);
    const lse = new Float32Array(NH * T);
    attentionForwardRef(
      out,
      lse,
      new Float32Array(v.length),
      randomArray(v.length, 2),
      v,
      Int32Array.of(3, 3, 3),
      1,
      T,
      NH,
      NH,
      hs,
    );
    const want = new Float64Array(out.length);
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < NH * hs; c++) {
        for (let s = 0; s <= t; s++) want[t * NH * hs + c] += v[s * NH * hs + c] / (t + 1);
      }
    }
    expectClose(out, want, { atol: 1e-6, rtol: 1e-6, label: 'mean of allowed v' });
    expectClose(lse, [0, Math.log(2), Math.log(3), 0, Math.log(2), Math.log(3)], {
      atol: 1e-6,
      rtol: 0,
      label: 'lse = log(count)',
    });
  });

  it('refuses short buffers, naming the buffer and the sizes', () => {
    const f = new Float32Array(8);
    expect(() => attentionForwardRef(f, new Float32Array(1), f, f, f, Int32Array.of(1, 1), 1, 2, 1, 1, 4)).toThrow(
      /lse has 1 elements, needs B\*NH\*T = 1\*1\*2 = 2/,
    );
    expect(() => attentionForwardRef(f, f, f, new Float32Array(7), f, Int32Array.of(1, 1), 1, 2, 1, 1, 4)).toThrow(
      /k has 7 elements, needs B\*T\*NKV\*hs = 1\*2\*1\*4 = 8/,
    );
    expect(() => attentionForwardRef(f, f, f, f, f, Int32Array.of(1), 1, 2, 1, 1, 4)).toThrow(
      /segmentIds has 1 elements/,
    );
    // GQA: q and out are (B, T, NH, hs), k and v (B, T, NKV, hs).
    const g = new Float32Array(16);
    expect(() => attentionForwardRef(g, g, new Float32Array(15), f, f, Int32Array.of(1, 1), 1, 2, 4, 2, 2)).toThrow(
      /q has 15 elements, needs B\*T\*NH\*hs = 1\*2\*4\*2 = 16/,
    );
    expect(() => attentionForwardRef(g, g, g, f, new Float32Array(7), Int32Array.of(1, 1), 1, 2, 4, 2, 2)).toThrow(
      /v has 7 elements, needs B\*T\*NKV\*hs = 1\*2\*2\*2 = 8/,
    );
  });

  it('refuses kv head counts that do not divide the query heads', () => {
    const f = new Float32Array(64);
    expect(() => attentionForwardRef(f, f, f, f, f, Int32Array.of(1, 1), 1, 2, 4, 3, 4)).toThrow(
      /NH \(4 query heads\) must be a multiple of NKV \(3 kv heads\)/,
    );
    expect(() => attentionForwardRef(f, f, f, f, f, Int32Array.of(1, 1), 1, 2, 4, 0, 4)).toThrow(
      /must be a multiple of NKV \(0/,
    );
    expect(() => attentionBackwardRef(f, f, f, f, f, f, f, f, f, Int32Array.of(1, 1), 1, 2, 2, 1.5, 4)).toThrow(
      /NKV must be a non-negative integer, got 1.5/,
    );
  });
});

describe('attentionBackwardRef', () => {
  it('matches central finite differences of the forward reference for dq, dk, dv (float64)', () => {
    const dims: Dims = [2, 5, 2, 3];
    const [B, T, NH, hs] = dims;
    const n = B * T * NH * hs;
    // Row 0: two segments and a padding tail; row 1: interleaved ids (same id = same sequence).
    const seg = Int32Array.of(1, 1, 2, 2, 0, 5, 5, 7, 5, 7);
    const inputs = {
      q: Float64Array.from(randomArray(n, 3)),
      k: Float64Array.from(randomArray(n, 4)),
      v: Float64Array.from(randomArray(n, 5)),
    };
    const w = Float64Array.from(randomArray(n, 6));
    const loss = () => forward64(inputs.q, inputs.k, inputs.v, seg, dims).out.reduce((a, o, i) => a + w[i] * o, 0);
    const g = backward64(w, inputs.q, inputs.k, inputs.v, seg, dims);
    for (const name of ['q', 'k', 'v'] as const) {
      const fd = numericGrad(inputs[name], loss, { h: 1e-6 });
      expectClose(g[`d${name}`], fd, { atol: 1e-8, rtol: 1e-6, label: `d${name} vs finite differences` });
    }
    // The padding position (row 0, t = 4) is neither a query nor a key.
    const pad = 4 * NH * hs;
    for (const grad of [g.dq, g.dk, g.dv])
      expect([...grad.subarray(pad, pad + NH * hs)]).toEqual(new Array(NH * hs).fill(0));
  });

  it('accumulates into the gradients', () => {
    const dims: Dims = [1, 3, 1, 4];
    const seg = Int32Array.of(1, 1, 1);
    const [q, k, v, dout] = [7, 8, 9, 10].map((s) => randomArray(12, s));
    const fresh = backward64(dout, q, k, v, seg, dims);
    const { out, lse } = forward64(q, k, v, seg, dims);
    const dq = new Float64Array(12).fill(1),
      dk = new Float64Array(12).fill(2),
      dv = new Float64Array(12).fill(3);
    attentionBackwardRef(dq, dk, dv, dout, q, k, v, out, lse, seg, 1, 3, 1, 1, 4);
    expectClose(
      dq,
      fresh.dq.map((x) => x + 1),
      { atol: 1e-12, rtol: 0, label: 'dq += ' },
    );
    expectClose(
      dk,
      fresh.dk.map((x) => x + 2),
      { atol: 1e-12, rtol: 0, label: 'dk += ' },
    );
    expectClose(
      dv,
      fresh.dv.map((x) => x + 3),
      { atol: 1e-12, rtol: 0, label: 'dv += ' },
    );
  });
});

describe('packing invariance (reference)', () => {
  it('gives a chain the same outputs and gradients alone, packed after another chain, and swapped', () => {
    const [T, NH, hs] = [9, 2, 4];
    const a: Chain = randomChain(3, NH, hs, 11);
    const b: Chain = randomChain(5, NH, hs, 21);
    // Row 0: a alone; row 1: b then a; row 2: a then b with other ids.
    const rows = packRows(
      [
        [[a, 1]],
        [
          [b, 1],
          [a, 2],
        ],
        [
          [a, 7],
          [b, 3],
        ],
      ],
      T,
      NH,
      hs,
      31,
    );
    const dims: Dims = [3, T, NH, hs];
    const { out, lse } = forward64(rows.q, rows.k, rows.v, rows.segmentIds, dims);
    const g = backward64(rows.dout, rows.q, rows.k, rows.v, rows.segmentIds, dims);
    const W = NH * hs;
    const span = (x: Float64Array, row: number, t0: number, len: number) => [
      ...x.subarray((row * T + t0) * W, (row * T + t0 + len) * W),
    ];
    const lseSpan = (row: number, t0: number, len: number) =>
      Array.from({ length: NH * len }, (_, i) => lse[(row * NH + Math.floor(i / len)) * T + t0 + (i % len)]);
    for (const [row, t0] of [
      [1, 5],
      [2, 0],
    ]) {
      expect(span(out, row, t0, a.len)).toEqual(span(out, 0, 0, a.len));
      expect(lseSpan(row, t0, a.len)).toEqual(lseSpan(0, 0, a.len));
      for (const grad of [g.dq, g.dk, g.dv]) expect(span(grad, row, t0, a.len)).toEqual(span(grad, 0, 0, a.len));
    }
    expect(span(out, 2, 3, b.len)).toEqual(span(out, 1, 0, b.len));
  });
});

describe('grouped-query attention (reference)', () => {
  // NH = 6 query heads over NKV = 2 or 3 kv heads (groups of 3 or 2), and NKV = 1 (multi-query).
  for (const NKV of [1, 2, 3]) {
    it(`with NKV = ${NKV} equals multi-head attention on repeat_kv(k), repeat_kv(v); dk, dv are the group sums`, () => {
      const [B, T, NH, hs] = [2, 7, 6, 4];
      const G = NH / NKV;
      const seg = Int32Array.of(1, 1, 1, 2, 2, 2, 0, 3, 3, 4, 3, 4, 4, 4);
      const [nq, nkv] = [B * T * NH * hs, B * T * NKV * hs];
      const [q, dout] = [randomArray(nq, 40 + NKV, -2, 2), randomArray(nq, 41 + NKV)];
      const [k, v] = [randomArray(nkv, 42 + NKV, -2, 2), randomArray(nkv, 43 + NKV)];
      const [kRep, vRep] = [repeatKv(k, B, T, NKV, G, hs), repeatKv(v, B, T, NKV, G, hs)];
      const gqa = forward64(q, k, v, seg, [B, T, NH, hs, NKV]);
      const mha = forward64(q, kRep, vRep, seg, [B, T, NH, hs]);
      expect(gqa.out).toEqual(mha.out);
      expect(gqa.lse).toEqual(mha.lse);
      const g = backward64(dout, q, k, v, seg, [B, T, NH, hs, NKV]);
      const m = backward64(dout, q, kRep, vRep, seg, [B, T, NH, hs]);
      expect(g.dq).toEqual(m.dq);
      expectClose(g.dk, sumGroups(m.dk, B, T, NKV, G, hs), {
        atol: 1e-12,
        rtol: 1e-12,
        label: 'dk = Σ over the group of the MHA dk',
      });
      expectClose(g.dv, sumGroups(m.dv, B, T, NKV, G, hs), {
        atol: 1e-12,
        rtol: 1e-12,
        label: 'dv = Σ over the group of the MHA dv',
      });
    });
  }

  it('backward matches central finite differences for dq, dk, dv with NKV = 2 of NH = 4 (float64)', () => {
    const dims: Dims = [2, 5, 4, 3, 2];
    const [B, T, NH, hs, NKV = NH] = dims;
    const [nq, nkv] = [B * T * NH * hs, B * T * NKV * hs];
    const seg = Int32Array.of(1, 1, 2, 2, 0, 5, 5, 7, 5, 7);
    const inputs = {
      q: Float64Array.from(randomArray(nq, 53)),
      k: Float64Array.from(randomArray(nkv, 54)),
      v: Float64Array.from(randomArray(nkv, 55)),
    };
    const w = Float64Array.from(randomArray(nq, 56));
    const loss = () => forward64(inputs.q, inputs.k, inputs.v, seg, dims).out.reduce((a, o, i) => a + w[i] * o, 0);
    const g = backward64(w, inputs.q, inputs.k, inputs.v, seg, dims);
    for (const name of ['q', 'k', 'v'] as const) {
      const fd = numericGrad(inputs[name], loss, { h: 1e-6 });
      expect(Math.max(...Array.from(fd, Math.abs)), `d${name} is not trivially zero`).toBeGreaterThan(1e-3);
      expectClose(g[`d${name}`], fd, { atol: 1e-8, rtol: 1e-6, label: `d${name} vs finite differences (GQA)` });
    }
  });
});
