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
    attentionDecodeRef(out, q, k, v, Int32Array.of(2, 0, 3), 3, 3, 1, 1);
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
    attentionDecodeRef(out, q, k, v, [2], 1, L, NH, hs);
    const h0 = [0, 1, 2, 3].map((d) => 0.1 * v[d] + 0.9 * v[8 + d]);
    const h1 = [0, 1, 2, 3].map((d) => (v[4 + d] + v[12 + d]) / 2);
    expectClose(out, [...h0, ...h1], { atol: 1e-12, rtol: 1e-12, label: 'out' });
  });

  it('equals the training attention at every position t when the cache holds positions 0..t', () => {
    for (const [T, NH, hs] of [[9, 2, 4], [6, 3, 5], [12, 1, 16]]) {
      const n = T * NH * hs;
      const [q, k, v] = [1, 2, 3].map((s) => randomArray(n, 100 * T + s, -2, 2));
      const want = new Float64Array(n);
      attentionForwardRef(want, new Float64Array(NH * T), q, k, v, new Int32Array(T).fill(1), 1, T, NH, hs);
      const W = NH * hs;
      // One position at a time: the cache is the whole sequence (slots > t hold later positions,
      // which must be ignored), length t + 1.
      for (let t = 0; t < T; t++) {
        const got = new Float64Array(W);
        attentionDecodeRef(got, q.subarray(t * W, (t + 1) * W), k, v, [t + 1], 1, T, NH, hs);
        expectClose(got, want.subarray(t * W, (t + 1) * W), { atol: 1e-12, rtol: 1e-12, label: `T=${T} NH=${NH} hs=${hs} t=${t}` });
      }
      // All positions at once: row b holds the same cache with length b + 1 and the query of position b.
      const kc = new Float64Array(T * n);
      const vc = new Float64Array(T * n);
      for (let b = 0; b < T; b++) {
        kc.set(k, b * n);
        vc.set(v, b * n);
      }
      const got = new Float64Array(n);
      attentionDecodeRef(got, q, kc, vc, Array.from({ length: T }, (_, b) => b + 1), T, T, NH, hs);
      expectClose(got, want, { atol: 1e-12, rtol: 1e-12, label: `T=${T} NH=${NH} hs=${hs} as T rows` });
    }
  });

  it('refuses lengths outside 0..L and short buffers, naming them', () => {
    const f = new Float32Array(64);
    expect(() => attentionDecodeRef(f, f, f, f, [1, 5], 2, 4, 2, 4)).toThrow(/lengths\[1\] = 5 is outside 0..L = 0..4/);
    expect(() => attentionDecodeRef(f, f, f, f, [-1, 0], 2, 4, 2, 4)).toThrow(/lengths\[0\] = -1/);
    expect(() => attentionDecodeRef(f, f, f, f, [1.5, 0], 2, 4, 2, 4)).toThrow(/lengths\[0\] = 1.5/);
    expect(() => attentionDecodeRef(f, f, new Float32Array(63), f, [1, 1], 2, 4, 2, 4)).toThrow(/kCache has 63 elements, needs B\*L\*NH\*hs = 2\*4\*2\*4 = 64/);
    expect(() => attentionDecodeRef(new Float32Array(15), f, f, f, [1, 1], 2, 4, 2, 4)).toThrow(/out has 15 elements, needs B\*NH\*hs = 2\*2\*4 = 16/);
    expect(() => attentionDecodeRef(f, f, f, f, [1], 2, 4, 2, 4)).toThrow(/lengths has 1 elements, needs B = 2/);
    expect(() => attentionDecodeRef(f, f, f, f, [0, 0], 2, 0, 2, 4)).toThrow(/L \(cache slots per row\) must be positive/);
  });
});
