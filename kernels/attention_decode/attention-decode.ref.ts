/**
 * CPU reference for the attention step of sampling with a KV cache: one new token per row
 * attends to the cached keys of its own row. Plain loops over the softmax formula, float64
 * inside, stored into the caller's array. The specification the WGSL kernel is tested against;
 * not derived from it. Forward only: sampling never trains.
 *
 * Layout: q, out (B, NH, hs); kCache, vCache (B, L, NKV, hs) row-major, so slot s of row b holds
 * the post-RoPE key/value of position s, all kv heads (the layout of the training attention's k
 * and v with T = L); lengths (B) integers. Grouped-query attention as in attention.ref.ts: query
 * head h reads kv head g = floor(h / (NH / NKV)); NKV = NH is multi-head attention.
 *
 * Contract: row b has lengths[b] valid cache slots 0..lengths[b]−1, and the caller has already
 * written the new token's own k/v at slot lengths[b]−1 (so the new token attends to itself, as
 * in causal training attention). With scale = 1/sqrt(hs):
 *   S[b, h, s] = scale · q[b, h, :] · kCache[b, s, g, :]         for s < lengths[b]
 *   out[b, h, :] = Σ_s softmax_s(S[b, h, ·]) · vCache[b, s, g, :]
 * lengths[b] = 0 marks an inactive row: out[b] = 0. Slots ≥ lengths[b] are never read (they may
 * hold stale data). Rows are independent sequences: no segments, no cross-row attention.
 * A length outside 0..L throws here; the GPU kernel cannot be checked from the CPU and clamps it
 * to 0..L instead.
 */

import { checkKvHeads, kvHeadOf } from '../attention/attention.ref';

type Out = Float32Array | Float64Array;

/** out (B, NH, hs) = attention of q (B, NH, hs) over the first lengths[b] slots of kCache, vCache (B, L, NKV, hs). */
export function attentionDecodeRef(
  out: Out,
  q: ArrayLike<number>,
  kCache: ArrayLike<number>,
  vCache: ArrayLike<number>,
  lengths: ArrayLike<number>,
  B: number,
  L: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  checkAttentionDecodeShapes('attentionDecode', { out, q, kCache, vCache, lengths }, B, L, NH, NKV, hs);
  checkDecodeLengths(lengths, B, L);
  const scale = 1 / Math.sqrt(hs);
  const slot = (b: number, s: number, h: number) => ((b * L + s) * NKV + kvHeadOf(h, NH, NKV)) * hs;
  for (let b = 0; b < B; b++) {
    const n = lengths[b];
    for (let h = 0; h < NH; h++) {
      const o = (b * NH + h) * hs;
      out.fill(0, o, o + hs);
      if (n === 0) continue;
      const scores: number[] = [];
      for (let s = 0; s < n; s++) {
        let dot = 0;
        for (let d = 0; d < hs; d++) dot += q[o + d] * kCache[slot(b, s, h) + d];
        scores.push(dot * scale);
      }
      // attention.ref.ts softmaxRow's arithmetic, in its order (weights exp(x − max)/sum, then Σ p·v):
      // the decoded token's output is the full forward's row bit for bit (docs/rl-formulas.md "Mismatch").
      const max = Math.max(...scores);
      const sum = scores.reduce((a, x) => a + Math.exp(x - max), 0);
      const p = scores.map((x) => Math.exp(x - max) / sum);
      for (let d = 0; d < hs; d++) {
        let acc = 0;
        for (let s = 0; s < n; s++) acc += p[s] * vCache[slot(b, s, h) + d];
        out[o + d] = acc;
      }
    }
  }
}

/** Throws unless every lengths[b] (b < B) is an integer in 0..L. */
export function checkDecodeLengths(lengths: ArrayLike<number>, B: number, L: number): void {
  for (let b = 0; b < B; b++) {
    const n = lengths[b];
    if (!Number.isInteger(n) || n < 0 || n > L)
      throw new Error(`attentionDecode: lengths[${b}] = ${n} is outside 0..L = 0..${L}`);
  }
}

/** Throws with expected and actual sizes when a dimension is invalid or a buffer is shorter than (B, L, NH | NKV, hs) needs. */
export function checkAttentionDecodeShapes(
  op: string,
  buffers: Record<string, { length: number }>,
  B: number,
  L: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  for (const [name, x] of [
    ['B', B],
    ['L', L],
    ['NH', NH],
    ['hs', hs],
  ] as const) {
    if (!Number.isInteger(x) || x < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${x}`);
  }
  if (hs === 0) throw new Error(`${op}: hs must be positive`);
  if (L === 0) throw new Error(`${op}: L (cache slots per row) must be positive`);
  checkKvHeads(op, NH, NKV);
  const need = (name: string): [number, string] =>
    name === 'lengths'
      ? [B, `B = ${B}`]
      : name === 'kCache' || name === 'vCache'
        ? [B * L * NKV * hs, `B*L*NKV*hs = ${B}*${L}*${NKV}*${hs}`]
        : [B * NH * hs, `B*NH*hs = ${B}*${NH}*${hs}`];
  for (const [name, x] of Object.entries(buffers)) {
    const [n, formula] = need(name);
    if (x.length < n) throw new Error(`${op}: ${name} has ${x.length} elements, needs ${formula} = ${n}`);
  }
}
