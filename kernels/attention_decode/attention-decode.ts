/**
 * WebGPU wrapper for the attention step of sampling with a KV cache; same contract as
 * attention-decode.ref.ts (read its header: the cache already holds the new token's own k/v at
 * slot lengths[b]−1, lengths[b] = 0 gives zeros). One dispatch, one invocation per (row, head).
 * lengths live on the GPU, so they are not checked here: the kernel clamps each to 0..L (the
 * reference throws). Requires hs a multiple of 4, at most 64, and L ≥ 1. out must not share a
 * buffer with any input (WebGPU forbids binding one buffer read-only and writable in one dispatch).
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkAttentionDecodeShapes } from './attention-decode.ref';
import decodeSrc from './attention_decode.wgsl?raw';

const MAX_HS = 64; // 16 vec4 registers in the WGSL

/**
 * (row, head) invocations per workgroup. On SwiftShader 4, 16 and 64 measured the same (1 is 3×
 * slower: the 4-wide SIMD lanes go unused); 64 suits GPUs.
 */
const WG = 64;

/** The WGSL `Params` struct: B, L, NH, NKV (u32), scale_log2e (f32). */
function params(B: number, L: number, NH: number, NKV: number, hs: number): ArrayBuffer {
  const buf = new ArrayBuffer(20);
  new Uint32Array(buf, 0, 4).set([B, L, NH, NKV]);
  new Float32Array(buf, 16, 1)[0] = Math.LOG2E / Math.sqrt(hs);
  return buf;
}

/**
 * out (B, NH, hs) = softmax(q · kᵀ / sqrt(hs)) · v for each row b and head h, over the cache
 * slots 0..lengths[b]−1 of kCache, vCache (B, L, NKV, hs) (query head h reads kv head
 * h / (NH / NKV)); q post-RoPE (B, NH, hs); lengths (B) i32.
 * `workgroupSize` overrides the invocations per workgroup (tests and benches).
 */
export function attentionDecode(
  rt: Dispatcher,
  out: GpuTensor,
  q: GpuTensor,
  kCache: GpuTensor,
  vCache: GpuTensor,
  lengths: GpuTensor,
  B: number,
  L: number,
  NH: number,
  NKV: number,
  hs: number,
  workgroupSize?: number,
): void {
  checkAttentionDecodeShapes('attentionDecode', { out, q, kCache, vCache, lengths }, B, L, NH, NKV, hs);
  if (hs % 4 !== 0 || hs > MAX_HS)
    throw new Error(`attentionDecode: hs must be a multiple of 4 in 4..${MAX_HS} (heads are read as vec4), got ${hs}`);
  checkDisjoint('attentionDecode', { out }, { q, kCache, vCache, lengths });
  if (B * NH === 0) return;
  const wg = workgroupSize ?? WG;
  const spec = { label: 'attention_decode', code: decodeSrc, constants: { WG: wg, HS4: hs / 4 } };
  rt.dispatch(
    spec,
    params(B, L, NH, NKV, hs),
    [q, kCache, vCache, lengths, out],
    gridFor(rt, Math.ceil((B * NH) / wg)),
  );
}
