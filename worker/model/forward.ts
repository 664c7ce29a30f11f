/**
 * The forward pass, one line per kernel call per layer, in order (llm.c style). Input: the packed
 * batch already uploaded into `a` (ids, positions, segments, targets). Output: `a.logp` and
 * `a.entropy` per position (the prediction of `targets`), plus everything backward.ts reads.
 */
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import type { Acts, ParamSet } from './tensors';

export function forward(ops: Ops, c: ModelConfig, p: ParamSet, a: Acts): void {
  const { B, T } = a;
  const N = B * T, C = c.dModel, F = c.ffn, V = c.vocab, NH = c.heads, hs = C / NH;
  ops.embeddingForward(a.layers.length ? a.layers[0].x : a.xL, a.ids, p.wte, N, C, V);
  for (let l = 0; l < c.layers; l++) {
    const w = p.layers[l];
    const x = a.layers[l];
    const xNext = l + 1 < c.layers ? a.layers[l + 1].x : a.xL;
    ops.rmsnormForward(x.ln1, x.rstd1, x.x, w.ln1, N, C, c.normEps);
    ops.matmul(a.qPre, x.ln1, w.wq, N, C, C, 'nt'); // (N, C) · (C, C)ᵀ
    ops.matmul(a.kPre, x.ln1, w.wk, N, C, C, 'nt');
    ops.matmul(x.v, x.ln1, w.wv, N, C, C, 'nt');
    ops.ropeForward(x.q, a.qPre, a.positions, N, NH, hs, c.ropeTheta);
    ops.ropeForward(x.k, a.kPre, a.positions, N, NH, hs, c.ropeTheta);
    ops.attentionForward(x.att, x.lse, x.q, x.k, x.v, a.segments, B, T, NH, hs);
    ops.matmul(a.proj, x.att, w.wo, N, C, C, 'nt');
    ops.residualForward(x.x1, x.x, a.proj, N * C);
    ops.rmsnormForward(x.ln2, x.rstd2, x.x1, w.ln2, N, C, c.normEps);
    ops.matmul(x.gate, x.ln2, w.wg, N, C, F, 'nt'); // (N, C) · (F, C)ᵀ
    ops.matmul(x.up, x.ln2, w.wu, N, C, F, 'nt');
    ops.swigluForward(x.h, x.gate, x.up, N * F);
    ops.matmul(a.proj, x.h, w.wd, N, F, C, 'nt'); // (N, F) · (C, F)ᵀ
    ops.residualForward(xNext, x.x1, a.proj, N * C);
  }
  ops.rmsnormForward(a.lnf, a.rstdf, a.xL, p.lnf, N, C, c.normEps);
  ops.matmul(a.logits, a.lnf, p.lmHead, N, C, V, 'nt'); // (N, C) · (V, C)ᵀ
  ops.logprobForward(a.logp, a.entropy, a.lseOut, a.logits, a.targets, N, V);
}
