/**
 * The forward pass, one line per kernel call per layer, in order (llm.c style). Input: the packed
 * batch already uploaded into `a` (ids, positions, segments, targets). Output: `a.logp` and
 * `a.entropy` per position (the prediction of `targets`), plus everything backward.ts reads.
 * The blocks before and after attention are shared with decode-forward.ts (sampling with a KV
 * cache), which differs only in how attention reads keys and values.
 */
import type { Ops, Tensor } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { kvDim } from './config';
import type { Acts, LayerActs, LayerParams, ParamSet } from './tensors';
import { layerParams } from './tensors';
import type { Projection } from './lora';
import { adapterForward, adapterMaskSeed } from './lora';

/** The PPO value head: one linear map (1, C) of the final normed hidden state, and its gradient. */
export interface ValueHead {
  w: Tensor; // (1, C)
  gw: Tensor; // (1, C)
}

/**
 * `logitBias` (N, V), when given, is added to the logits before the log-softmax: 0 on each
 * position's kept ids and −1e9 elsewhere renormalises the log-probs (and their gradient) over
 * the sampler's top-k/top-p support (packing.ts `supportBias`). `scale` = 1/T scores the tempered
 * logits, log_softmax(scale·(logits + bias)), as the sampler draws them (verl's actor divides the
 * logits by the temperature); `a.logits` stays untempered. The backward must use the same scale.
 * `lse2` (N) also gets logsumexp(2s·(logits + bias)), written first (Σπ² = exp(lse2 − 2·lse): Model.score).
 */
export function forward(
  ops: Ops,
  c: ModelConfig,
  p: ParamSet,
  a: Acts,
  vh: Pick<ValueHead, 'w'> | null = null,
  logitBias: Tensor | null = null,
  scale = 1,
  lse2: Tensor | null = null,
): void {
  const N = a.B * a.T,
    C = c.dModel,
    V = c.vocab;
  forwardLayers(ops, c, p, a);
  ops.rmsnormForward(a.lnf, a.rstdf, a.xL, p.lnf, N, C, c.normEps);
  const h = a.head;
  const o = h ?? { logp: a.logp, entropy: a.entropy, lse: a.lseOut, targets: a.targets }; // a chunk's, copied out
  for (let n0 = 0; n0 < N; n0 += a.headRows) {
    const n = Math.min(a.headRows, N - n0);
    const at = { srcOffset: 0, dstOffset: n0, count: n };
    headLogits(ops, c, p, a, logitBias, n0, n);
    if (h) ops.copy(h.targets, a.targets, { srcOffset: n0, dstOffset: 0, count: n });
    if (lse2) ops.logprobForward(o.logp, o.entropy, o.lse, a.logits, o.targets, n, V, 2 * scale);
    if (lse2) ops.copy(lse2, o.lse, at);
    ops.logprobForward(o.logp, o.entropy, o.lse, a.logits, o.targets, n, V, scale);
    if (h) {
      ops.copy(a.logp, h.logp, at);
      ops.copy(a.entropy, h.entropy, at);
      ops.copy(a.lseOut, h.lse, at);
    }
  }
  if (vh) ops.matmul(a.values, a.lnf, vh.w, N, C, 1, 'nt'); // (N, C) · (1, C)ᵀ
}

/**
 * The embedding and every layer: the final hidden state in `a.xL` (N, C), each layer's k/v in
 * place. `afterAttention(l)` runs once layer l's k and v are computed, before the next layer
 * (a prefill over shared layer activations copies them into its cache there).
 */
export function forwardLayers(
  ops: Ops,
  c: ModelConfig,
  p: ParamSet,
  a: Acts,
  afterAttention?: (l: number, x: LayerActs) => void,
): void {
  ops.embeddingForward(a.layers.length ? a.layers[0].x : a.xL, a.ids, p.wte, a.B * a.T, c.dModel, c.vocab);
  for (let l = 0; l < c.layers; l++)
    forwardLayer(ops, c, layerParams(ops, p, l), a.layers[l], a, l + 1 < c.layers ? a.layers[l + 1].x : a.xL, () =>
      afterAttention?.(l, a.layers[l]),
    );
}

/** One layer from its input `x.x` into `xNext`; `afterAttention` runs once its k and v exist. */
export function forwardLayer(
  ops: Ops,
  c: ModelConfig,
  w: LayerParams,
  x: LayerActs,
  a: Acts,
  xNext: Tensor,
  afterAttention?: () => void,
): void {
  const N = a.B * a.T,
    hs = c.dModel / c.heads;
  attentionInputs(ops, c, w, x, a, N);
  ops.attentionForward(x.att, x.lse, x.q, x.k, x.v, a.segments, a.B, a.T, c.heads, c.kvHeads, hs);
  afterAttention?.();
  attentionOutputAndMlp(ops, c, w, x, a, xNext, N);
}

/**
 * y (N, out) += the LoRA branch of projection `k` of input `inp` (N, in), when the layer's
 * parameters carry an adapter for it (lora.ts); its u is kept in the layer's activations.
 */
export function adapt(
  ops: Ops,
  w: LayerParams,
  k: Projection,
  x: LayerActs,
  a: Acts,
  inp: Tensor,
  y: Tensor,
  N: number,
  inDim: number,
  outDim: number,
): void {
  const at = adapterAt(w, k, x, a, 'forward');
  if (at)
    adapterForward(
      ops,
      at.ad,
      dropAdapterInput(ops, at, inp, N, inDim) ?? inp,
      y,
      at.u,
      at.scratch.t,
      N,
      inDim,
      outDim,
    );
}

/**
 * The adapter's input with this forward's dropout mask applied (lora.ts LoraConfig `dropout`),
 * in the LoRA scratch `xd`; null when the forward drew no dropout. The backward calls it again
 * and gets the same values.
 */
export function dropAdapterInput(
  ops: Ops,
  at: NonNullable<ReturnType<typeof adapterAt>>,
  inp: Tensor,
  N: number,
  inDim: number,
): Tensor | null {
  const d = at.scratch.dropout;
  if (!d) return null;
  if (!at.scratch.xd) throw new Error('LoRA dropout without its scratch (allocActs lora.dropout)');
  ops.dropout(at.scratch.xd, inp, N * inDim, adapterDropout(d, at.ad.salt, inDim));
  return at.scratch.xd;
}

/** One adapter's mask in a forward that drew `d`: its own seed, its first element's index. */
export function adapterDropout(d: { p: number; seed: number; offset: number }, salt: number, inDim: number) {
  return { p: d.p, seed: adapterMaskSeed(d.seed, salt), offset: (d.offset * inDim) >>> 0 };
}

/**
 * Projection k's adapter in this layer, its u and the LoRA scratch; null when the layer has none
 * for k, an error naming `where` when the activations lack the adapter's buffers.
 */
export function adapterAt(w: LayerParams, k: Projection, x: LayerActs, a: Acts, where: string) {
  const ad = w.adapters?.[k];
  if (!ad) return null;
  const u = x.u?.[k];
  if (!u || !a.lora)
    throw new Error(`${where}: LoRA on ${k} but the activations have no adapter buffers (allocActs lora)`);
  return { ad, u, scratch: a.lora };
}

/** ln1 → q, k, v projections → RoPE on q (NH heads) and k (NKV heads) (at `a.positions`). */
export function attentionInputs(ops: Ops, c: ModelConfig, w: LayerParams, x: LayerActs, a: Acts, N: number): void {
  const C = c.dModel,
    NH = c.heads,
    NKV = c.kvHeads,
    hs = C / NH,
    KV = kvDim(c);
  ops.rmsnormForward(x.ln1, x.rstd1, x.x, w.ln1, N, C, c.normEps);
  ops.matmul(a.qPre, x.ln1, w.wq, N, C, C, 'nt'); // (N, C) · (C, C)ᵀ
  ops.matmul(a.kPre, x.ln1, w.wk, N, C, KV, 'nt'); // (N, C) · (KV, C)ᵀ
  ops.matmul(x.v, x.ln1, w.wv, N, C, KV, 'nt');
  adapt(ops, w, 'wq', x, a, x.ln1, a.qPre, N, C, C);
  adapt(ops, w, 'wk', x, a, x.ln1, a.kPre, N, C, KV);
  adapt(ops, w, 'wv', x, a, x.ln1, x.v, N, C, KV);
  ops.ropeForward(x.q, a.qPre, a.positions, N, NH, hs, c.ropeTheta);
  ops.ropeForward(x.k, a.kPre, a.positions, N, NKV, hs, c.ropeTheta);
}

/**
 * o_proj → residual → ln2 → SwiGLU MLP → residual into `xNext`. Each residual add is fused into
 * its projection: the stream is copied forward and the matmul accumulates onto it (one dispatch
 * and one (N, C) round trip fewer per add than a separate residual kernel).
 */
export function attentionOutputAndMlp(
  ops: Ops,
  c: ModelConfig,
  w: LayerParams,
  x: LayerActs,
  a: Acts,
  xNext: LayerActs['x'],
  N: number,
): void {
  const C = c.dModel,
    F = c.ffn;
  ops.copy(x.x1, x.x);
  ops.matmul(x.x1, x.att, w.wo, N, C, C, 'nt', { accumulate: true }); // x1 = x + att · woᵀ
  adapt(ops, w, 'wo', x, a, x.att, x.x1, N, C, C);
  ops.rmsnormForward(x.ln2, x.rstd2, x.x1, w.ln2, N, C, c.normEps);
  ops.matmul(x.gate, x.ln2, w.wg, N, C, F, 'nt'); // (N, C) · (F, C)ᵀ
  ops.matmul(x.up, x.ln2, w.wu, N, C, F, 'nt');
  adapt(ops, w, 'wg', x, a, x.ln2, x.gate, N, C, F);
  adapt(ops, w, 'wu', x, a, x.ln2, x.up, N, C, F);
  ops.swigluForward(x.h, x.gate, x.up, N * F);
  ops.copy(xNext, x.x1);
  ops.matmul(xNext, x.h, w.wd, N, F, C, 'nt', { accumulate: true }); // xNext = x1 + h · wdᵀ, (N, F) · (C, F)ᵀ
  adapt(ops, w, 'wd', x, a, x.h, xNext, N, F, C);
}

/**
 * The logits of positions n0 … n0 + n − 1 into `a.logits` (n, V), from the normed hidden states:
 * all of them at once when `a.head` is null, else that chunk's (copied into the head's buffer), with
 * its rows of `logitBias` added (staged through `a.dlogits`, free until the backward writes it).
 */
export function headLogits(
  ops: Ops,
  c: ModelConfig,
  p: ParamSet,
  a: Acts,
  logitBias: Tensor | null,
  n0: number,
  n: number,
): void {
  const C = c.dModel,
    V = c.vocab;
  if (!a.head) {
    ops.matmul(a.logits, a.lnf, p.lmHead, n, C, V, 'nt'); // (N, C) · (V, C)ᵀ
    if (logitBias) ops.accumulate(a.logits, logitBias, n * V);
    return;
  }
  ops.copy(a.head.lnf, a.lnf, { srcOffset: n0 * C, dstOffset: 0, count: n * C });
  ops.matmul(a.logits, a.head.lnf, p.lmHead, n, C, V, 'nt');
  if (logitBias) {
    ops.copy(a.dlogits, logitBias, { srcOffset: n0 * V, dstOffset: 0, count: n * V });
    ops.accumulate(a.logits, a.dlogits, n * V);
  }
}

/** Final RMSNorm and the LM head of every position at once: logits (N, V) (a decoding step's acts hold them all). */
export function lmHead(ops: Ops, c: ModelConfig, p: ParamSet, a: Acts, N: number): void {
  ops.rmsnormForward(a.lnf, a.rstdf, a.xL, p.lnf, N, c.dModel, c.normEps);
  ops.matmul(a.logits, a.lnf, p.lmHead, N, c.dModel, c.vocab, 'nt'); // (N, C) · (V, C)ᵀ
}
