/**
 * WebGPU wrappers for RoPE, Llama / Hugging Face convention (pairs (i, i + hs/2) per head,
 * a = position · theta^(−2i/hs)): `ropeForward` writes out = rope(inp); `ropeBackward`
 * accumulates dinp += Rᵀ · dout. Same contract as rope.ref.ts. One dispatch each, one invocation
 * per rotated pair. Not in place: out must not share a buffer with inp (WebGPU forbids binding
 * one buffer read-only and writable in the same dispatch).
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkRopeShapes } from './rope.ref';
import backwardSrc from './rope_backward.wgsl?raw';
import forwardSrc from './rope_forward.wgsl?raw';

const WG = 256;

/** The uniform Params of rope_forward / rope_backward: N, NH, hs (u32), log2(theta) (f32). */
function params(N: number, NH: number, hs: number, theta: number): ArrayBuffer {
  const buf = new ArrayBuffer(16);
  new Uint32Array(buf, 0, 3).set([N, NH, hs]);
  new Float32Array(buf, 12, 1)[0] = Math.log2(theta);
  return buf;
}

/** out(N, NH, hs) = rope(inp(N, NH, hs)) at positions (N) i32. */
export function ropeForward(
  rt: Dispatcher,
  out: GpuTensor,
  inp: GpuTensor,
  positions: GpuTensor,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): void {
  checkRopeShapes('ropeForward', out.length, inp.length, positions.length, N, NH, hs, theta);
  checkDisjoint('ropeForward', { out }, { inp, positions });
  const pairs = (N * NH * hs) / 2;
  if (pairs === 0) return;
  rt.dispatch(
    { label: 'rope_forward', code: forwardSrc, constants: { WG } },
    params(N, NH, hs, theta),
    [inp, positions, out],
    gridFor(rt, Math.ceil(pairs / WG)),
  );
}

/** dinp(N, NH, hs) += Rᵀ · dout(N, NH, hs): the transpose rotation, accumulated. */
export function ropeBackward(
  rt: Dispatcher,
  dinp: GpuTensor,
  dout: GpuTensor,
  positions: GpuTensor,
  N: number,
  NH: number,
  hs: number,
  theta: number,
): void {
  checkRopeShapes('ropeBackward', dinp.length, dout.length, positions.length, N, NH, hs, theta);
  checkDisjoint('ropeBackward', { dinp }, { dout, positions });
  const pairs = (N * NH * hs) / 2;
  if (pairs === 0) return;
  rt.dispatch(
    { label: 'rope_backward', code: backwardSrc, constants: { WG } },
    params(N, NH, hs, theta),
    [dout, positions, dinp],
    gridFor(rt, Math.ceil(pairs / WG)),
  );
}
