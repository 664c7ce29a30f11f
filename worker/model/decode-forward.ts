/**
 * One decoding step with a KV cache: B rows, one new id each. The same kernel list as forward.ts,
 * except that each layer appends the new k/v (after RoPE) to its row of the cache and attends over
 * the cache instead of over the packed row. Writes the next-token logits (B, V) into `a.logits`.
 */
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import type { Acts, ParamSet } from './tensors';
import type { KvCache } from './kv-cache';

export function decodeForward(ops: Ops, c: ModelConfig, p: ParamSet, a: Acts, cache: KvCache): void {
  const B = a.B * a.T; // one id per row
  const C = c.dModel, F = c.ffn, V = c.vocab, NH = c.heads, hs = C / NH, L = cache.L;
  ops.embeddingForward(a.layers.length ? a.layers[0].x : a.xL, a.ids, p.wte, B, C, V);
  for (let l = 0; l < c.layers; l++) {
    const w = p.layers[l];
    const x = a.layers[l];
    const xNext = l + 1 < c.layers ? a.layers[l + 1].x : a.xL;
    ops.rmsnormForward(x.ln1, x.rstd1, x.x, w.ln1, B, C, c.normEps);
    ops.matmul(a.qPre, x.ln1, w.wq, B, C, C, 'nt');
    ops.matmul(a.kPre, x.ln1, w.wk, B, C, C, 'nt');
    ops.matmul(x.v, x.ln1, w.wv, B, C, C, 'nt');
    ops.ropeForward(x.q, a.qPre, a.positions, B, NH, hs, c.ropeTheta); // positions = lengths before the append
    ops.ropeForward(x.k, a.kPre, a.positions, B, NH, hs, c.ropeTheta);
    for (let b = 0; b < B; b++) {
      const at = (b * L + cache.lengths[b]) * C; // append the new k/v at the row's current length
      ops.copy(cache.k[l], x.k, { dstOffset: at, srcOffset: b * C, count: C });
      ops.copy(cache.v[l], x.v, { dstOffset: at, srcOffset: b * C, count: C });
    }
    ops.attentionDecode(x.att, x.q, cache.k[l], cache.v[l], cache.attendLengths, B, L, NH, hs);
    ops.matmul(a.proj, x.att, w.wo, B, C, C, 'nt');
    ops.residualForward(x.x1, x.x, a.proj, B * C);
    ops.rmsnormForward(x.ln2, x.rstd2, x.x1, w.ln2, B, C, c.normEps);
    ops.matmul(x.gate, x.ln2, w.wg, B, C, F, 'nt');
    ops.matmul(x.up, x.ln2, w.wu, B, C, F, 'nt');
    ops.swigluForward(x.h, x.gate, x.up, B * F);
    ops.matmul(a.proj, x.h, w.wd, B, F, C, 'nt');
    ops.residualForward(xNext, x.x1, a.proj, B * C);
  }
  ops.rmsnormForward(a.lnf, a.rstdf, a.xL, p.lnf, B, C, c.normEps);
  ops.matmul(a.logits, a.lnf, p.lmHead, B, C, V, 'nt');
}
