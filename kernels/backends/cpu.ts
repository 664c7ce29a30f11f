/**
 * The `cpu` backend: each op is its hand-written reference, run at once over typed arrays
 * (Float32Array, or Int32Array for i32 tensors). It is the fallback when WebGPU is unavailable and
 * the oracle the GPU backend is tested against.
 */
import { adamwRef } from '../adamw/adamw.ref';
import { checkCopyRange } from '../common/dispatcher';
import { attentionBackwardRef, attentionForwardRef } from '../attention/attention.ref';
import { attentionDecodeRef } from '../attention_decode/attention-decode.ref';
import { kvScatterRef } from '../kv_scatter/kv-scatter.ref';
import { embeddingBackwardRef, embeddingForwardRef } from '../embedding/embedding.ref';
import { clipScaleRef, gradNormSquaredRef } from '../gradnorm/gradnorm.ref';
import { logprobBackwardRef, logprobForwardRef } from '../logprob/logprob.ref';
import { matmulRef } from '../matmul/matmul.ref';
import type { DType, Ops, Tensor } from '../ops';
import { accumulateRef, residualForwardRef } from '../residual/residual.ref';
import { dropoutRef } from '../dropout/dropout.ref';
import { widenBf16Ref } from '../bf16/bf16.ref';
import { rmsnormBackwardRef, rmsnormForwardRef } from '../rmsnorm/rmsnorm.ref';
import { sampleRef } from '../sample/sample.ref';
import { ropeBackwardRef, ropeForwardRef } from '../rope/rope.ref';
import { swigluBackwardRef, swigluForwardRef } from '../swiglu/swiglu.ref';

interface CpuTensor extends Tensor {
  readonly backend: 'cpu';
  readonly data: Float32Array | Int32Array;
}

/** The f32 data of a cpu tensor (refuses i32 tensors where values are expected). */
function cpuData(t: Tensor): Float32Array {
  if (t.backend !== 'cpu') throw new Error(`cpu backend got a '${t.backend}' tensor '${t.label}'`);
  if (t.dtype !== 'f32') throw new Error(`'${t.label}' is ${t.dtype}; this operand must be f32`);
  return (t as CpuTensor).data as Float32Array;
}

function ints(t: Tensor): Int32Array {
  if (t.backend !== 'cpu') throw new Error(`cpu backend got a '${t.backend}' tensor '${t.label}'`);
  if (t.dtype !== 'i32') throw new Error(`'${t.label}' is ${t.dtype}; this operand must be i32`);
  return (t as CpuTensor).data as Int32Array;
}

export function createCpuOps(): Ops {
  const d = cpuData;
  return {
    backend: 'cpu',
    alloc(label, length, dtype: DType = 'f32') {
      const t: CpuTensor = {
        backend: 'cpu',
        dtype,
        label,
        length,
        data: dtype === 'i32' ? new Int32Array(length) : new Float32Array(length),
      };
      return t;
    },
    upload(t, data) {
      if (t.backend !== 'cpu') throw new Error(`cpu backend got a '${t.backend}' tensor '${t.label}'`);
      const target = (t as CpuTensor).data;
      if (data.length !== target.length)
        throw new Error(`upload to '${t.label}': expected ${target.length} values, got ${data.length}`);
      target.set(data);
    },
    async read(t) {
      return Float32Array.from((t as CpuTensor).data);
    },
    async flush() {},
    async sync() {},
    free() {},
    zero(t) {
      (t as CpuTensor).data.fill(0);
    },
    copy(dst, src, range) {
      const r = checkCopyRange(src, dst, range);
      (dst as CpuTensor).data.set((src as CpuTensor).data.subarray(r.srcOffset, r.srcOffset + r.count), r.dstOffset);
    },
    matmul(out, a, b, M, K, N, layout, opts) {
      matmulRef(d(out), d(a), d(b), M, K, N, layout, opts?.accumulate ?? false);
    },
    embeddingForward: (out, ids, wte, N, C, V) => embeddingForwardRef(d(out), ints(ids), d(wte), N, C, V),
    embeddingBackward: (dwte, dout, ids, N, C, V) => embeddingBackwardRef(d(dwte), d(dout), ints(ids), N, C, V),
    rmsnormForward: (out, rstd, inp, w, N, C, eps) => rmsnormForwardRef(d(out), d(rstd), d(inp), d(w), N, C, eps),
    rmsnormBackward: (dinp, dw, dout, inp, w, rstd, N, C) =>
      rmsnormBackwardRef(d(dinp), d(dw), d(dout), d(inp), d(w), d(rstd), N, C),
    ropeForward: (out, inp, pos, N, NH, hs, theta) => ropeForwardRef(d(out), d(inp), ints(pos), N, NH, hs, theta),
    ropeBackward: (dinp, dout, pos, N, NH, hs, theta) => ropeBackwardRef(d(dinp), d(dout), ints(pos), N, NH, hs, theta),
    attentionForward: (out, lse, q, k, v, seg, B, T, NH, NKV, hs) =>
      attentionForwardRef(d(out), d(lse), d(q), d(k), d(v), ints(seg), B, T, NH, NKV, hs),
    attentionBackward: (dq, dk, dv, dout, q, k, v, out, lse, seg, B, T, NH, NKV, hs) =>
      attentionBackwardRef(
        d(dq),
        d(dk),
        d(dv),
        d(dout),
        d(q),
        d(k),
        d(v),
        d(out),
        d(lse),
        ints(seg),
        B,
        T,
        NH,
        NKV,
        hs,
      ),
    attentionDecode: (out, q, k, v, lengths, B, L, NH, NKV, hs) =>
      attentionDecodeRef(d(out), d(q), d(k), d(v), ints(lengths), B, L, NH, NKV, hs),
    kvScatter: (cache, rows, slots, B, L, KV) => kvScatterRef(d(cache), d(rows), ints(slots), B, L, KV),
    swigluForward: (out, gate, up, n) => swigluForwardRef(d(out), d(gate), d(up), n),
    swigluBackward: (dgate, dup, dout, gate, up, n) => swigluBackwardRef(d(dgate), d(dup), d(dout), d(gate), d(up), n),
    residualForward: (out, a, b, n) => residualForwardRef(d(out), d(a), d(b), n),
    accumulate: (dst, src, n) => accumulateRef(d(dst), d(src), n),
    dropout: (out, x, n, o) => dropoutRef(d(out), d(x), n, o),
    widenBf16: (out, packed, n) => widenBf16Ref(d(out), ints(packed), n),
    logprobForward: (logp, entropy, lse, logits, targets, N, V, scale = 1) =>
      logprobForwardRef(d(logp), d(entropy), d(lse), d(logits), ints(targets), N, V, scale),
    logprobBackward: (dlogits, dlogp, logits, targets, lse, N, V, scale = 1) =>
      logprobBackwardRef(d(dlogits), d(dlogp), d(logits), ints(targets), d(lse), N, V, scale),
    sample: async (logits, uniforms, N, V, options) => sampleRef(d(logits), uniforms, N, V, options),
    adamw: (param, grad, m, v, n, hp, gradScale) =>
      adamwRef(d(param), d(grad), d(m), d(v), n, hp, gradScale ? d(gradScale) : 1),
    gradNormSquared: (out, grads) => gradNormSquaredRef(d(out), grads.map(d)),
    clipScale: (scale, normSq, maxNorm) => clipScaleRef(d(scale), d(normSq), maxNorm),
  };
}
