/**
 * The backward pass: forward.ts reversed, written by hand. Seeded by `a.dlogp` (∂loss/∂logp per
 * position, uploaded by the caller); ACCUMULATES into the gradients `g` (zeroed by the caller once
 * per step, so several backward passes can add up). Scratch gradients are zeroed here before the
 * accumulating kernels that write them. `scale` is the forward's inverse temperature (forward.ts).
 * Under LoRA the base is frozen (`g.base` null): its weight-gradient matmuls are skipped and only
 * the adapters' gradients (`g.adapters`, lora.ts) and the value head's accumulate. `withEntropy`:
 * `a.dentropy` (∂loss/∂H per position, uploaded by the caller) seeds the entropy's gradient too,
 * through the forward's `a.entropy`.
 */
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { kvDim } from './config';
import type { ValueHead } from './forward';
import { adapterAt, adapterDropout, dropAdapterInput, forwardLayer, headLogits } from './forward';
import type { Tensor } from '../../kernels/ops';
import type { Acts, LayerActs, LayerParams, ParamSet } from './tensors';
import { layerParams } from './tensors';
import type { AdapterSet, Projection } from './lora';
import { adapterBackward } from './lora';

/** The gradients a backward accumulates: the base's (null when frozen under LoRA) and the adapters' (null without LoRA). */
export interface Gradients {
  base: ParamSet | null;
  adapters: AdapterSet | null;
}

export function backward(
  ops: Ops,
  c: ModelConfig,
  p: ParamSet,
  grads: Gradients,
  a: Acts,
  vh: ValueHead | null = null,
  scale = 1,
  logitBias: Tensor | null = null,
  withEntropy = false,
): void {
  const { B, T } = a;
  const N = B * T,
    C = c.dModel,
    F = c.ffn,
    V = c.vocab,
    NH = c.heads,
    NKV = c.kvHeads,
    hs = C / NH,
    KV = kvDim(c);
  const g = grads.base;
  const h = a.head;
  if (!h) {
    ops.zero(a.dlogits);
    const entropyGrad = withEntropy ? { dentropy: a.dentropy, entropy: a.entropy } : undefined;
    ops.logprobBackward(a.dlogits, a.dlogp, a.logits, a.targets, a.lseOut, N, V, scale, entropyGrad);
    ops.matmul(a.dln, a.dlogits, p.lmHead, N, V, C, 'nn'); // dlnf = dlogits · W (V, C)
    if (g) ops.matmul(g.lmHead, a.dlogits, a.lnf, V, N, C, 'tn', { accumulate: true }); // dW += dlogitsᵀ · lnf
  } else {
    // The head in chunks: each chunk's logits again (the forward kept only the last chunk's), then its gradients.
    for (let n0 = 0; n0 < N; n0 += a.headRows) {
      const n = Math.min(a.headRows, N - n0);
      headLogits(ops, c, p, a, logitBias, n0, n);
      ops.copy(h.targets, a.targets, { srcOffset: n0, dstOffset: 0, count: n });
      ops.copy(h.dlogp, a.dlogp, { srcOffset: n0, dstOffset: 0, count: n });
      ops.copy(h.lse, a.lseOut, { srcOffset: n0, dstOffset: 0, count: n });
      if (withEntropy) {
        ops.copy(h.dentropy, a.dentropy, { srcOffset: n0, dstOffset: 0, count: n });
        ops.copy(h.entropy, a.entropy, { srcOffset: n0, dstOffset: 0, count: n });
      }
      ops.zero(a.dlogits);
      const entropyGrad = withEntropy ? { dentropy: h.dentropy, entropy: h.entropy } : undefined;
      ops.logprobBackward(a.dlogits, h.dlogp, a.logits, h.targets, h.lse, n, V, scale, entropyGrad);
      ops.matmul(h.dln, a.dlogits, p.lmHead, n, V, C, 'nn');
      ops.copy(a.dln, h.dln, { srcOffset: 0, dstOffset: n0 * C, count: n * C });
      if (g) ops.matmul(g.lmHead, a.dlogits, h.lnf, V, n, C, 'tn', { accumulate: true });
    }
  }
  if (vh) {
    ops.matmul(a.dln, a.dvalues, vh.w, N, 1, C, 'nn', { accumulate: true }); // dlnf += dvalues · w (1, C)
    ops.matmul(vh.gw, a.dvalues, a.lnf, 1, N, C, 'tn', { accumulate: true }); // dw += dvaluesᵀ · lnf
  }
  ops.zero(a.dres);
  ops.rmsnormBackward(a.dres, g ? g.lnf : a.normSink, a.dln, a.xL, p.lnf, a.rstdf, N, C);
  for (let l = c.layers - 1; l >= 0; l--) {
    const w = layerParams(ops, p, l);
    const gw = g?.layers[l];
    const x = a.layers[l];
    // Per-layer recomputation: the layer's forward again from its kept input (the next layer's
    // input is written again with the values it holds; dropout draws the same masks).
    if (a.recompute) forwardLayer(ops, c, w, x, a, l + 1 < c.layers ? a.layers[l + 1].x : a.xL);
    const gad = grads.adapters?.layers[l];
    // dy of projection k, its input, and dx to add to (the LoRA branch, when the layer has one for k).
    const adapt = (k: Projection, inp: Tensor, dy: Tensor, dx: Tensor, inDim: number, outDim: number) =>
      adaptBackward(ops, w, gad, k, x, a, inp, dy, dx, N, inDim, outDim);
    // xNext = x1 + down(h): dres flows to x1 unchanged and into the MLP branch.
    ops.matmul(a.dh, a.dres, w.wd, N, C, F, 'nn'); // dh = dres · Wd (C, F)
    adapt('wd', x.h, a.dres, a.dh, F, C);
    if (gw) ops.matmul(gw.wd, a.dres, x.h, C, N, F, 'tn', { accumulate: true }); // dWd += dresᵀ · h
    ops.zero(a.dgate);
    ops.zero(a.dup);
    ops.swigluBackward(a.dgate, a.dup, a.dh, x.gate, x.up, N * F);
    ops.matmul(a.dln, a.dgate, w.wg, N, F, C, 'nn'); // dln2 = dgate · Wg + dup · Wu
    ops.matmul(a.dln, a.dup, w.wu, N, F, C, 'nn', { accumulate: true });
    adapt('wg', x.ln2, a.dgate, a.dln, C, F);
    adapt('wu', x.ln2, a.dup, a.dln, C, F);
    if (gw) {
      ops.matmul(gw.wg, a.dgate, x.ln2, F, N, C, 'tn', { accumulate: true });
      ops.matmul(gw.wu, a.dup, x.ln2, F, N, C, 'tn', { accumulate: true });
    }
    ops.rmsnormBackward(a.dres, gw ? gw.ln2 : a.normSink, a.dln, x.x1, w.ln2, x.rstd2, N, C);
    // x1 = x + o_proj(att): dres flows to x unchanged and into the attention branch.
    ops.matmul(a.datt, a.dres, w.wo, N, C, C, 'nn');
    adapt('wo', x.att, a.dres, a.datt, C, C);
    if (gw) ops.matmul(gw.wo, a.dres, x.att, C, N, C, 'tn', { accumulate: true });
    ops.zero(a.dq);
    ops.zero(a.dk);
    ops.zero(a.dv);
    ops.attentionBackward(a.dq, a.dk, a.dv, a.datt, x.q, x.k, x.v, x.att, x.lse, a.segments, B, T, NH, NKV, hs);
    ops.zero(a.dqPre);
    ops.zero(a.dkPre);
    ops.ropeBackward(a.dqPre, a.dq, a.positions, N, NH, hs, c.ropeTheta);
    ops.ropeBackward(a.dkPre, a.dk, a.positions, N, NKV, hs, c.ropeTheta);
    ops.matmul(a.dln, a.dqPre, w.wq, N, C, C, 'nn'); // dln1 = dqPre · Wq + dkPre · Wk + dv · Wv
    ops.matmul(a.dln, a.dkPre, w.wk, N, KV, C, 'nn', { accumulate: true }); // (N, KV) · (KV, C)
    ops.matmul(a.dln, a.dv, w.wv, N, KV, C, 'nn', { accumulate: true });
    adapt('wq', x.ln1, a.dqPre, a.dln, C, C);
    adapt('wk', x.ln1, a.dkPre, a.dln, C, KV);
    adapt('wv', x.ln1, a.dv, a.dln, C, KV);
    if (gw) {
      ops.matmul(gw.wq, a.dqPre, x.ln1, C, N, C, 'tn', { accumulate: true });
      ops.matmul(gw.wk, a.dkPre, x.ln1, KV, N, C, 'tn', { accumulate: true }); // dWk (KV, C) += dkPreᵀ · ln1
      ops.matmul(gw.wv, a.dv, x.ln1, KV, N, C, 'tn', { accumulate: true });
    }
    ops.rmsnormBackward(a.dres, gw ? gw.ln1 : a.normSink, a.dln, x.x, w.ln1, x.rstd1, N, C);
  }
  if (g) ops.embeddingBackward(g.wte, a.dres, a.ids, N, C, V);
}

/** The LoRA branch's backward of projection `k` (lora.ts adapterBackward), when the layer has an adapter for it. */
function adaptBackward(
  ops: Ops,
  w: LayerParams,
  gad: AdapterSet['layers'][number] | undefined,
  k: Projection,
  x: LayerActs,
  a: Acts,
  inp: Tensor,
  dy: Tensor,
  dx: Tensor,
  N: number,
  inDim: number,
  outDim: number,
): void {
  const at = adapterAt(w, k, x, a, 'backward');
  if (!at) return;
  const g = gad?.[k];
  if (!g) throw new Error(`backward: LoRA on ${k} without its gradients`);
  const { t, du, xd, dropout } = at.scratch;
  const dropped = dropAdapterInput(ops, at, inp, N, inDim);
  if (!dropped || !xd || !dropout) {
    adapterBackward(ops, at.ad, g, inp, at.u, dy, dx, t, du, N, inDim, outDim);
    return;
  }
  // Under dropout the branch read m ⊙ x / (1 − p): dA from that input, and its input gradient
  // (du·A) through the same mask, into xd once dA has read it.
  adapterBackward(ops, at.ad, g, dropped, at.u, dy, null, t, du, N, inDim, outDim);
  ops.matmul(xd, du, at.ad.a, N, at.ad.rank, inDim, 'nn'); // (N, r) · (r, in)
  ops.dropout(dx, xd, N * inDim, { ...adapterDropout(dropout, at.ad.salt, inDim), accumulate: true });
}
