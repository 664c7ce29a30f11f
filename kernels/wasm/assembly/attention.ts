// Segment-aware causal attention over packed rows (kernels/attention/attention.ref.ts), and the
// KV-cache decode step (attention_decode.ref.ts) with the append to the cache before it
// (kv-scatter.ref.ts). q, out (B, T, NH, hs); k, v (B, T, NKV, hs);
// lse (B, NH, T); segmentIds (B, T) i32. Query t of row b attends to the keys s ≤ t of its own
// non-zero segment. Grouped-query attention: query head h reads kv head h / (NH / NKV), as
// transformers' repeat_kv; NKV = NH is multi-head attention, with the same arithmetic as before
// GQA. `scores` is scratch for T f32 (softmax weights of one query).
import { axpy, dot, f32at, i32at, setf32, zero } from './vec';

/** Byte offset of element 0 of head h at (b, t) in a (B, T, heads, hs) tensor. */
@inline function headAt(b: i32, t: i32, h: i32, T: i32, heads: i32, hs: i32): usize {
  return (<usize>(b * T + t) * heads * hs + h * hs) << 2;
}

/** Softmax weights of query (b, t, h) over kv head j into scores[0..t]; 0 for disallowed keys. Returns the lse (0 when none is allowed). */
@inline function weights(scores: usize, q: usize, k: usize, seg: usize, b: i32, t: i32, h: i32, j: i32, T: i32, NH: i32, NKV: i32, hs: i32, sc: f32): f64 {
  const g = i32at(seg, b * T + t);
  const qt = q + headAt(b, t, h, T, NH, hs);
  let max: f32 = -Infinity;
  for (let s = 0; s <= t; s++) {
    if (i32at(seg, b * T + s) != g) continue;
    const x = sc * dot(qt, k + headAt(b, s, j, T, NKV, hs), hs);
    setf32(scores, s, x);
    if (x > max) max = x;
  }
  let sum: f64 = 0;
  for (let s = 0; s <= t; s++) {
    if (i32at(seg, b * T + s) != g) {
      setf32(scores, s, 0);
      continue;
    }
    const e = Math.exp(<f64>(f32at(scores, s) - max));
    sum += e;
    setf32(scores, s, <f32>e);
  }
  const inv = <f32>(1 / sum);
  for (let s = 0; s <= t; s++) setf32(scores, s, f32at(scores, s) * inv);
  return <f64>max + Math.log(sum);
}

export function attentionForward(out: usize, lse: usize, q: usize, k: usize, v: usize, seg: usize, B: i32, T: i32, NH: i32, NKV: i32, hs: i32, scores: usize): void {
  const sc = <f32>(1 / Math.sqrt(<f64>hs));
  const G = NKV > 0 ? NH / NKV : 1;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const g = i32at(seg, b * T + t);
      for (let h = 0; h < NH; h++) {
        const j = h / G;
        const o = out + headAt(b, t, h, T, NH, hs);
        zero(o, hs);
        setf32(lse, (b * NH + h) * T + t, 0);
        if (g == 0) continue;
        setf32(lse, (b * NH + h) * T + t, <f32>weights(scores, q, k, seg, b, t, h, j, T, NH, NKV, hs, sc));
        for (let s = 0; s <= t; s++) {
          const p = f32at(scores, s);
          if (p != 0) axpy(o, p, v + headAt(b, s, j, T, NKV, hs), hs);
        }
      }
    }
  }
}

/** dq, dk, dv += the gradients of Σ dout · out; P is recomputed from q and k. dk, dv of a kv head sum over its query heads. */
export function attentionBackward(dq: usize, dk: usize, dv: usize, dout: usize, q: usize, k: usize, v: usize, seg: usize, B: i32, T: i32, NH: i32, NKV: i32, hs: i32, scores: usize, dps: usize): void {
  const sc = <f32>(1 / Math.sqrt(<f64>hs));
  const G = NKV > 0 ? NH / NKV : 1;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const g = i32at(seg, b * T + t);
      if (g == 0) continue;
      for (let h = 0; h < NH; h++) {
        const j = h / G;
        const off = headAt(b, t, h, T, NH, hs);
        weights(scores, q, k, seg, b, t, h, j, T, NH, NKV, hs, sc);
        let D: f32 = 0;
        for (let s = 0; s <= t; s++) {
          const p = f32at(scores, s);
          if (p == 0) continue;
          const dp = dot(dout + off, v + headAt(b, s, j, T, NKV, hs), hs);
          setf32(dps, s, dp);
          D += p * dp;
        }
        for (let s = 0; s <= t; s++) {
          const p = f32at(scores, s);
          if (p == 0) continue;
          const ks = headAt(b, s, j, T, NKV, hs);
          const ds = p * (f32at(dps, s) - D);
          axpy(dq + off, sc * ds, k + ks, hs);
          axpy(dk + ks, sc * ds, q + off, hs);
          axpy(dv + ks, p, dout + off, hs);
        }
      }
    }
  }
}

/** out (B, NH, hs) = attention of q over cache slots 0..lengths[b]−1 of row b (B, L, NKV, hs). */
export function attentionDecode(out: usize, q: usize, kc: usize, vc: usize, lengths: usize, B: i32, L: i32, NH: i32, NKV: i32, hs: i32, scores: usize): void {
  const sc = <f32>(1 / Math.sqrt(<f64>hs));
  const G = NKV > 0 ? NH / NKV : 1;
  for (let b = 0; b < B; b++) {
    const n = i32at(lengths, b);
    for (let h = 0; h < NH; h++) {
      const j = h / G;
      const o = out + ((<usize>(b * NH + h) * hs) << 2);
      const qo = q + ((<usize>(b * NH + h) * hs) << 2);
      zero(o, hs);
      if (n == 0) continue;
      let max: f32 = -Infinity;
      for (let s = 0; s < n; s++) {
        const x = sc * dot(qo, kc + headAt(b, s, j, L, NKV, hs), hs);
        setf32(scores, s, x);
        if (x > max) max = x;
      }
      // The arithmetic of `weights` and attentionForward, in the same order: the weights rounded to
      // f32, normalised by the f32 reciprocal of their f64 sum, then Σ p·v. A decoded row is then a
      // row of the full forward bit for bit (docs/rl-formulas.md "Mismatch").
      let sum: f64 = 0;
      for (let s = 0; s < n; s++) {
        const e = Math.exp(<f64>(f32at(scores, s) - max));
        sum += e;
        setf32(scores, s, <f32>e);
      }
      const inv = <f32>(1 / sum);
      for (let s = 0; s < n; s++) {
        const p = f32at(scores, s) * inv;
        if (p != 0) axpy(o, p, vc + headAt(b, s, j, L, NKV, hs), hs);
      }
    }
  }
}

/**
 * cache (B, L, KV): row b of rows (B, KV) copied to slot slots[b] of cache row b (kv-scatter.ref.ts).
 * The caller has checked the slots; one outside 0..L−1 is skipped here too, as the GPU kernel does,
 * so that no slot can write outside its row.
 */
export function kvScatter(cache: usize, rows: usize, slots: usize, B: i32, L: i32, KV: i32): void {
  const bytes = <usize>KV << 2;
  for (let b = 0; b < B; b++) {
    const s = i32at(slots, b);
    if (s < 0 || s >= L) continue;
    memory.copy(cache + <usize>(b * L + s) * bytes, rows + <usize>b * bytes, bytes);
  }
}
