import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { attentionForwardRef } from '../attention/attention.ref';
import { expectClose } from '../testing/expect-close';
import { attentionDecodeRef } from './attention-decode.ref';

describe('attentionDecodeRef', () => {
  it('matches hand values: two keys, an inactive row, three keys, stale slots ignored', () => {
    // hs = 1 (scale 1), one head, L = 3; 99 marks stale slots past each row's length.
    // Row 0: scores 0 and ln 3 → weights 1/4, 3/4 → 17.5. Row 1: length 0 → 0.
    // Row 2: q = 2, k = (0, 0, ln2 / 2) → scores 0, 0, ln 2 → weights 1/4, 1/4, 1/2 → 9.
    const out = new Float64Array(3).fill(NaN);
    const q = [1, 5, 2];
    const k = [0, Math.log(3), 99, 99, 99, 99, 0, 0, Math.LN2 / 2];
    const v = [10, 20, 99, 99, 99, 99, 4, 8, 12];
    attentionDecodeRef(out, q, k, v, Int32Array.of(2, 0, 3), 3, 3, 1, 1, 1);
    expectClose(out, [17.5, 0, 9], { atol: 1e-12, rtol: 1e-12, label: 'out' });
  });

  it('scales scores by 1/sqrt(hs) and keeps heads apart (head h at columns h·hs..)', () => {
    // hs = 4, NH = 2, one row, two slots. Head 0: q·k = 0 and 4·ln 3 → scores 0, 2·ln 3 → weights 1/10, 9/10.
    // Head 1: q = 0 → the mean of its two values.
    const [L, NH, hs] = [2, 2, 4];
    const q = [1, 1, 1, 1, 0, 0, 0, 0];
    const ln3 = Math.log(3);
    const k = [0, 0, 0, 0, 7, 7, 7, 7, ln3, ln3, ln3, ln3, -7, 3, 2, 1];
    const v = [1, 2, 3, 4, 10, 20, 30, 40, 11, 12, 13, 14, 50, 60, 70, 80];
    const out = new Float64Array(NH * hs);
    attentionDecodeRef(out, q, k, v, [2], 1, L, NH, NH, hs);
    const h0 = [0, 1, 2, 3].map((d) => 0.1 * v[d] + 0.9 * v[8 + d]);
    const h1 = [0, 1, 2, 3].map((d) => (v[4 + d] + v[12 + d]) / 2);
    expectClose(out, [...h0, ...h1], { atol: 1e-12, rtol: 1e-12, label: 'out' });
  });

  it('equals the training attention at every position t when the cache holds positions 0..t (MHA and GQA)', () => {
    for (const [T, NH, NKV, hs] of [
      [9, 2, 2, 4],
      [6, 3, 3, 5],
      [12, 1, 1, 16],
      [7, 6, 2, 4],
      [5, 4, 1, 8],
    ]) {
      const [n, nkv] = [T * NH * hs, T * NKV * hs];
      const q = randomArray(n, 100 * T + 1, -2, 2);
      const [k, v] = [2, 3].map((s) => randomArray(nkv, 100 * T + s, -2, 2));
      const want = new Float64Array(n);
      attentionForwardRef(want, new Float64Array(NH * T), q, k, v, new Int32Array(T).fill(1), 1, T, NH, NKV, hs);
      const W = NH * hs;
      const label = `T=${T} NH=${NH} NKV=${NKV} hs=${hs}`;
      // One position at a time: the cache is the whole sequence (slots > t hold later positions,
      // which must be ignored), length t + 1.
      for (let t = 0; t < T; t++) {
        const got = new Float64Array(W);
        attentionDecodeRef(got, q.subarray(t * W, (t + 1) * W), k, v, [t + 1], 1, T, NH, NKV, hs);
        expectClose(got, want.subarray(t * W, (t + 1) * W), { atol: 1e-12, rtol: 1e-12, label: `${label} t=${t}` });
      }
      // All positions at once: row b holds the same cache with length b + 1 and the query of position b.
      const kc = new Float64Array(T * nkv);
      const vc = new Float64Array(T * nkv);
      for (let b = 0; b < T; b++) {
        kc.set(k, b * nkv);
        vc.set(v, b * nkv);
      }
      const got = new Float64Array(n);
      attentionDecodeRef(
        got,
        q,
        kc,
        vc,
        Array.from({ length: T }, (_, b) => b + 1),
        T,
        T,
        NH,
        NKV,
        hs,
      );
      expectClose(got, want, { atol: 1e-12, rtol: 1e-12, label: `${label} as T rows` });
    }
  });

  it('with NKV kv heads equals multi-head decode over caches with each kv head repeated NH / NKV times (repeat_kv)', () => {
    const [B, L, NH, hs] = [3, 6, 6, 4];
    for (const NKV of [1, 2, 3]) {
      const G = NH / NKV;
      const q = randomArray(B * NH * hs, 70 + NKV, -2, 2);
      const [k, v] = [71, 72].map((s) => randomArray(B * L * NKV * hs, s + NKV, -2, 2));
      // repeat_kv from its definition: slot (b, s), kv head j → query heads j·G..(j+1)·G−1.
      const rep = (x: Float32Array) =>
        Float64Array.from({ length: B * L * NH * hs }, (_, i) => {
          const [bs, h, d] = [Math.floor(i / (NH * hs)), Math.floor(i / hs) % NH, i % hs];
          return x[(bs * NKV + Math.floor(h / G)) * hs + d];
        });
      const [got, want] = [new Float64Array(B * NH * hs), new Float64Array(B * NH * hs)];
      attentionDecodeRef(got, q, k, v, [6, 0, 4], B, L, NH, NKV, hs);
      attentionDecodeRef(want, q, rep(k), rep(v), [6, 0, 4], B, L, NH, NH, hs);
      expect(got, `NKV=${NKV}`).toEqual(want);
    }
  });

  it('refuses lengths outside 0..L, short buffers and kv heads that do not divide the heads, naming them', () => {
    const f = new Float32Array(64);
    expect(() => attentionDecodeRef(f, f, f, f, [1, 5], 2, 4, 2, 2, 4)).toThrow(
      /lengths\[1\] = 5 is outside 0..L = 0..4/,
    );
    expect(() => attentionDecodeRef(f, f, f, f, [-1, 0], 2, 4, 2, 2, 4)).toThrow(/lengths\[0\] = -1/);
    expect(() => attentionDecodeRef(f, f, f, f, [1.5, 0], 2, 4, 2, 2, 4)).toThrow(/lengths\[0\] = 1.5/);
    expect(() => attentionDecodeRef(f, f, new Float32Array(63), f, [1, 1], 2, 4, 2, 2, 4)).toThrow(
      /kCache has 63 elements, needs B\*L\*NKV\*hs = 2\*4\*2\*4 = 64/,
    );
    expect(() => attentionDecodeRef(f, f, f, new Float32Array(31), [1, 1], 2, 4, 2, 1, 4)).toThrow(
      /vCache has 31 elements, needs B\*L\*NKV\*hs = 2\*4\*1\*4 = 32/,
    );
    expect(() => attentionDecodeRef(new Float32Array(15), f, f, f, [1, 1], 2, 4, 2, 2, 4)).toThrow(
      /out has 15 elements, needs B\*NH\*hs = 2\*2\*4 = 16/,
    );
    expect(() => attentionDecodeRef(f, f, f, f, [1], 2, 4, 2, 2, 4)).toThrow(/lengths has 1 elements, needs B = 2/);
    expect(() => attentionDecodeRef(f, f, f, f, [0, 0], 2, 0, 2, 2, 4)).toThrow(
      /L \(cache slots per row\) must be positive/,
    );
    expect(() => attentionDecodeRef(f, f, f, f, [1, 1], 2, 2, 3, 2, 4)).toThrow(
      /NH \(3 query heads\) must be a multiple of NKV \(2 kv heads\)/,
    );
  });
});
