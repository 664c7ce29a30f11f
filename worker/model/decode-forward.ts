/**
 * One decoding step with a KV cache: B rows, one new id each. The kernel list of forward.ts,
 * except that each layer appends the new k/v (after RoPE) to its row of the cache (kvScatter, at
 * slot a.positions[b], the row's length before the step) and attends over the cache instead of
 * over a packed row. Writes the next-token logits (B, V) into `a.logits`.
 */
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { kvDim } from './config';
import { attentionInputs, attentionOutputAndMlp, lmHead } from './forward';
import type { Acts, KvCache, ParamSet } from './tensors';
import { layerParams } from './tensors';

export function decodeForward(ops: Ops, c: ModelConfig, p: ParamSet, a: Acts, cache: KvCache): void {
  const B = a.B * a.T; // one id per row
  const C = c.dModel,
    NH = c.heads,
    NKV = c.kvHeads,
    hs = C / NH,
    KV = kvDim(c),
    L = cache.L;
  ops.embeddingForward(a.layers.length ? a.layers[0].x : a.xL, a.ids, p.wte, B, C, c.vocab);
  for (let l = 0; l < c.layers; l++) {
    const x = a.layers[l];
    const w = layerParams(ops, p, l);
    attentionInputs(ops, c, w, x, a, B); // positions = each row's length before the append
    // Row b's new k/v go to its slot positions[b] (= its length): one call each, not B copies.
    ops.kvScatter(cache.k[l], x.k, a.positions, B, L, KV);
    ops.kvScatter(cache.v[l], x.v, a.positions, B, L, KV);
    ops.attentionDecode(x.att, x.q, cache.k[l], cache.v[l], cache.attendLengths, B, L, NH, NKV, hs);
    attentionOutputAndMlp(ops, c, w, x, a, l + 1 < c.layers ? a.layers[l + 1].x : a.xL, B);
  }
  lmHead(ops, c, p, a, B);
}
