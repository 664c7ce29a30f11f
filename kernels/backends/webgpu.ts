/**
 * The `webgpu` backend: each op records its WGSL kernel into the Dispatcher's command encoder.
 * Work is submitted on `flush`, `sync` or `read`. Every tensor has a buffer of its own (WebGPU
 * forbids binding one buffer read-only and writable in the same dispatch).
 */
import { adamw } from '../adamw/adamw';
import { attentionBackward, attentionForward } from '../attention/attention';
import { attentionDecode } from '../attention_decode/attention-decode';
import type { GpuContext } from '../common/context';
import { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import { createTensor, uploadTensor } from '../common/tensor';
import { embeddingBackward, embeddingForward } from '../embedding/embedding';
import { kvScatter } from '../kv_scatter/kv-scatter';
import { clipScale, gradNormPartialsLength, gradNormSquared } from '../gradnorm/gradnorm';
import { logprobBackward, logprobForward } from '../logprob/logprob';
import { matmul } from '../matmul/matmul';
import type { DType, Ops, Tensor } from '../ops';
import { accumulate, residualForward } from '../residual/residual';
import { dropout } from '../dropout/dropout';
import { widenBf16 } from '../bf16/bf16';
import { rmsnormBackward, rmsnormForward } from '../rmsnorm/rmsnorm';
import { ropeBackward, ropeForward } from '../rope/rope';
import { sample } from '../sample/sample';
import { swigluBackward, swigluForward } from '../swiglu/swiglu';

interface WebGpuTensor extends Tensor, GpuTensor {
  readonly backend: 'webgpu';
}

function gpuTensor(t: Tensor): WebGpuTensor {
  if (t.backend !== 'webgpu') throw new Error(`webgpu backend got a '${t.backend}' tensor '${t.label}'`);
  return t as WebGpuTensor;
}

export interface WebGpuOps extends Ops {
  readonly backend: 'webgpu';
  readonly ctx: GpuContext;
  readonly rt: Dispatcher;
}

export function createWebGpuOps(ctx: GpuContext): WebGpuOps {
  const rt = new Dispatcher(ctx);
  const g = gpuTensor;
  // Tensors with a buffer of their own; views (arena slices) are freed with their owner.
  const owned = new WeakSet<Tensor>();
  let normScratch: GpuTensor | null = null;
  const alloc = (label: string, length: number, dtype: DType = 'f32'): WebGpuTensor => {
    const t: WebGpuTensor = { ...createTensor(ctx, label, length), backend: 'webgpu', dtype };
    owned.add(t);
    return t;
  };
  return {
    backend: 'webgpu',
    ctx,
    rt,
    alloc,
    upload(t, data) {
      uploadTensor(ctx, g(t), t.dtype === 'i32' && !(data instanceof Int32Array) ? Int32Array.from(data) : data);
    },
    async read(t) {
      const raw = await rt.read(g(t));
      return t.dtype === 'i32' ? Float32Array.from(new Int32Array(raw.buffer, raw.byteOffset, raw.length)) : raw;
    },
    flush: () => rt.flush(),
    sync: () => rt.sync(),
    free(t) {
      if (!owned.has(t))
        throw new Error(
          `free('${t.label}'): not allocated by this backend's alloc (arena views are freed with their arena)`,
        );
      owned.delete(t);
      g(t).buffer.destroy();
    },
    zero: (t) => rt.clear(g(t)),
    copy: (dst, src, range) => rt.copy(g(src), g(dst), range),
    matmul(out, a, b, M, K, N, layout, opts) {
      matmul(rt, g(out), g(a), g(b), M, K, N, layout, opts?.accumulate ?? false, opts?.variant ?? 'auto');
    },
    embeddingForward: (out, ids, wte, N, C, V) => embeddingForward(rt, g(out), g(ids), g(wte), N, C, V),
    embeddingBackward: (dwte, dout, ids, N, C, V) => embeddingBackward(rt, g(dwte), g(dout), g(ids), N, C, V),
    rmsnormForward: (out, rstd, inp, w, N, C, eps) => rmsnormForward(rt, g(out), g(rstd), g(inp), g(w), N, C, eps),
    rmsnormBackward: (dinp, dw, dout, inp, w, rstd, N, C) =>
      rmsnormBackward(rt, g(dinp), g(dw), g(dout), g(inp), g(w), g(rstd), N, C),
    ropeForward: (out, inp, pos, N, NH, hs, theta) => ropeForward(rt, g(out), g(inp), g(pos), N, NH, hs, theta),
    ropeBackward: (dinp, dout, pos, N, NH, hs, theta) => ropeBackward(rt, g(dinp), g(dout), g(pos), N, NH, hs, theta),
    attentionForward: (out, lse, q, k, v, seg, B, T, NH, NKV, hs) =>
      attentionForward(rt, g(out), g(lse), g(q), g(k), g(v), g(seg), B, T, NH, NKV, hs),
    attentionBackward: (dq, dk, dv, dout, q, k, v, out, lse, seg, B, T, NH, NKV, hs) =>
      attentionBackward(rt, g(dq), g(dk), g(dv), g(dout), g(q), g(k), g(v), g(out), g(lse), g(seg), B, T, NH, NKV, hs),
    attentionDecode: (out, q, k, v, lengths, B, L, NH, NKV, hs) =>
      attentionDecode(rt, g(out), g(q), g(k), g(v), g(lengths), B, L, NH, NKV, hs),
    kvScatter: (cache, rows, slots, B, L, KV) => {
      if (slots.dtype !== 'i32') throw new Error(`'${slots.label}' is ${slots.dtype}; this operand must be i32`);
      kvScatter(rt, g(cache), g(rows), g(slots), B, L, KV);
    },
    swigluForward: (out, gate, up, n) => swigluForward(rt, g(out), g(gate), g(up), n),
    swigluBackward: (dgate, dup, dout, gate, up, n) => swigluBackward(rt, g(dgate), g(dup), g(dout), g(gate), g(up), n),
    residualForward: (out, a, b, n) => residualForward(rt, g(out), g(a), g(b), n),
    accumulate: (dst, src, n) => accumulate(rt, g(dst), g(src), n),
    dropout: (out, x, n, o) => dropout(rt, g(out), g(x), n, o),
    widenBf16: (out, packed, n) => {
      if (packed.dtype !== 'i32') throw new Error(`'${packed.label}' is ${packed.dtype}; this operand must be i32`);
      widenBf16(rt, g(out), g(packed), n);
    },
    logprobForward: (logp, entropy, lse, logits, targets, N, V, scale = 1) =>
      logprobForward(rt, g(logp), g(entropy), g(lse), g(logits), g(targets), N, V, scale),
    logprobBackward: (dlogits, dlogp, logits, targets, lse, N, V, scale = 1) =>
      logprobBackward(rt, g(dlogits), g(dlogp), g(logits), g(targets), g(lse), N, V, scale),
    sample: (logits, uniforms, N, V, options) => sample(rt, g(logits), uniforms, N, V, options),
    adamw: (param, grad, m, v, n, hp, gradScale) =>
      adamw(rt, g(param), g(grad), g(m), g(v), n, hp, gradScale ? g(gradScale) : 1),
    gradNormSquared(out, grads) {
      const tensors = grads.map(g);
      const need = gradNormPartialsLength(tensors.map((t) => t.length));
      // Grow-only scratch; a replaced one is left to GC, as recorded work may still use it.
      if (!normScratch || normScratch.length < need) normScratch = createTensor(ctx, 'grad_norm_partials', need);
      gradNormSquared(rt, g(out), normScratch, tensors);
    },
    clipScale: (scale, normSq, maxNorm) => clipScale(rt, g(scale), g(normSq), maxNorm),
  };
}
