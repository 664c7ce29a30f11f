/**
 * WebGPU wrappers for segment-aware causal attention over packed rows, grouped-query attention
 * included (NKV kv heads, each shared by NH / NKV query heads); same contract as attention.ref.ts.
 * `attentionForward`: one dispatch, writes out and lse. `attentionBackward`: two dispatches (a
 * per-query prep, then one fused kernel that owns dq_i per query head and dk_i, dv_i per kv head,
 * no atomics), accumulating into dq, dk, dv. Requires hs a multiple of 4, at most 64. Outputs
 * must not share a buffer with inputs (WebGPU forbids binding one buffer read-only and writable
 * in one dispatch); dq, dk, dv may share one at disjoint ranges.
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { createTensor } from '../common/tensor';
import { checkAttentionShapes } from './attention.ref';
import backwardSrc from './attention_backward.wgsl?raw';
import prepSrc from './attention_backward_prep.wgsl?raw';
import forwardSrc from './attention_forward.wgsl?raw';

const WG = 64;
const MAX_HS = 64; // MAX_HS4 · 4 in the WGSL

/** The WGSL `Params` struct: B, T, NH, NKV (u32), scale_log2e (f32). */
function params(B: number, T: number, NH: number, NKV: number, hs: number): ArrayBuffer {
  const buf = new ArrayBuffer(20);
  new Uint32Array(buf, 0, 4).set([B, T, NH, NKV]);
  new Float32Array(buf, 16, 1)[0] = Math.LOG2E / Math.sqrt(hs);
  return buf;
}

function checkShapes(
  op: string,
  tensors: Record<string, GpuTensor>,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  checkAttentionShapes(op, tensors, B, T, NH, NKV, hs);
  if (hs % 4 !== 0 || hs > MAX_HS)
    throw new Error(`${op}: hs must be a multiple of 4 in 4..${MAX_HS} (heads are read as vec4), got ${hs}`);
}

/** out (B, T, NH, hs), lse (B, NH, T) = attention(q, k, v) within segments, causal; k, v (B, T, NKV, hs). */
export function attentionForward(
  rt: Dispatcher,
  out: GpuTensor,
  lse: GpuTensor,
  q: GpuTensor,
  k: GpuTensor,
  v: GpuTensor,
  segmentIds: GpuTensor,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
): void {
  checkShapes('attentionForward', { out, lse, q, k, v, segmentIds }, B, T, NH, NKV, hs);
  checkDisjoint('attentionForward', { out, lse }, { q, k, v, segmentIds });
  if (B * T * NH === 0) return;
  const spec = { label: 'attention_forward', code: forwardSrc, constants: { WG, HS4: hs / 4 } };
  rt.dispatch(spec, params(B, T, NH, NKV, hs), [q, k, v, segmentIds, out, lse], [Math.ceil(T / WG), NH, B]);
}

/** Length (f32 elements) of the backward's scratch: (B, NH, T) rows of 4 words. */
export function attentionBackwardScratchLength(B: number, T: number, NH: number): number {
  return 4 * B * NH * T;
}

const scratchByDispatcher = new WeakMap<Dispatcher, GpuTensor>();

/** A grow-only scratch per Dispatcher; a replaced one is left to GC, as recorded work may use it. */
function defaultScratch(rt: Dispatcher, length: number): GpuTensor {
  const t = scratchByDispatcher.get(rt);
  if (t && t.length >= length) return t;
  const fresh = createTensor(rt.ctx, 'attention_backward_rows', length);
  scratchByDispatcher.set(rt, fresh);
  return fresh;
}

/**
 * dq (B, T, NH, hs), dk, dv (B, T, NKV, hs) += gradients of attention given dout, with the
 * forward's out and lse; dk and dv of a kv head sum over the query heads of its group.
 * `scratch` (attentionBackwardScratchLength elements, e.g. from the model's arena) holds the
 * per-query (lse, D, segment) rows; by default one cached per Dispatcher is used.
 */
export function attentionBackward(
  rt: Dispatcher,
  dq: GpuTensor,
  dk: GpuTensor,
  dv: GpuTensor,
  dout: GpuTensor,
  q: GpuTensor,
  k: GpuTensor,
  v: GpuTensor,
  out: GpuTensor,
  lse: GpuTensor,
  segmentIds: GpuTensor,
  B: number,
  T: number,
  NH: number,
  NKV: number,
  hs: number,
  scratch?: GpuTensor,
): void {
  checkShapes('attentionBackward', { dq, dk, dv, dout, q, k, v, out, lse, segmentIds }, B, T, NH, NKV, hs);
  const need = attentionBackwardScratchLength(B, T, NH);
  if (scratch && scratch.length < need)
    throw new Error(`attentionBackward: scratch has ${scratch.length} elements, needs 4*B*NH*T = ${need}`);
  checkDisjoint('attentionBackward', { dq, dk, dv }, { dout, q, k, v, out, lse, segmentIds });
  if (B * T * NH === 0) return;
  const rows = scratch ?? defaultScratch(rt, need);
  for (const t of [dq, dk, dv, dout, q, k, v, out, lse, segmentIds]) {
    if (t.buffer === rows.buffer)
      throw new Error(
        `attentionBackward: scratch ('${rows.label}') shares a buffer with '${t.label}'; it is written then read, so it needs a buffer of its own`,
      );
  }
  const constants = { WG, HS4: hs / 4 };
  const grid: [number, number, number] = [Math.ceil(T / WG), NH, B];
  rt.dispatch(
    { label: 'attention_backward_prep', code: prepSrc, constants },
    params(B, T, NH, NKV, hs),
    [dout, out, lse, segmentIds, rows],
    grid,
  );
  rt.dispatch(
    { label: 'attention_backward', code: backwardSrc, constants },
    params(B, T, NH, NKV, hs),
    [q, k, v, dout, rows, dq, dk, dv],
    grid,
  );
}
