/**
 * WebGPU wrappers for RoPE, Llama / Hugging Face convention (pairs (i, i + hs/2) per head,
 * a = position · theta^(−2i/hs)): `ropeForward` writes out = rope(inp); `ropeBackward`
 * accumulates dinp += Rᵀ · dout. Same contract as rope.ref.ts. One dispatch each, one invocation
 * per rotated pair. Not in place: out must not share a buffer with inp (WebGPU forbids binding
 * one buffer read-only and writable in the same dispatch).
 */
import type { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import { checkRopeShapes } from './rope.ref';
import backwardSrc from './rope_backward.wgsl?raw';
import forwardSrc from './rope_forward.wgsl?raw';

const WG = 256;
const MAX_GROUPS_X = 65535;

/** The uniform Params of rope_forward / rope_backward: N, NH, hs (u32), log2(theta) (f32). */
function params(N: number, NH: number, hs: number, theta: number): ArrayBuffer {
  const buf = new ArrayBuffer(16);
  new Uint32Array(buf, 0, 3).set([N, NH, hs]);
  new Float32Array(buf, 12, 1)[0] = Math.log2(theta);
  return buf;
}

/** A 2D grid covering `invocations` (the kernels flatten it back: (y · nx + x) · WG + lane). */
function grid(invocations: number): [number, number] {
  const groups = Math.ceil(invocations / WG);
  const x = Math.min(groups, MAX_GROUPS_X);
  return [x, Math.ceil(groups / x)];
}

function checkSeparate(op: string, outName: string, out: GpuTensor, inputs: Record<string, GpuTensor>): void {
  for (const [name, t] of Object.entries(inputs)) {
    if (t.buffer === out.buffer) {
      throw new Error(`${op}: ${outName} ('${out.label}') shares a buffer with ${name} ('${t.label}'); WebGPU cannot bind one buffer read-only and writable in one dispatch: use a separate output buffer`);
    }
  }
}

/** out(N, NH, hs) = rope(inp(N, NH, hs)) at positions (N) i32. */
export function ropeForward(rt: Dispatcher, out: GpuTensor, inp: GpuTensor, positions: GpuTensor, N: number, NH: number, hs: number, theta: number): void {
  checkRopeShapes('ropeForward', out.length, inp.length, positions.length, N, NH, hs, theta);
  checkSeparate('ropeForward', 'out', out, { inp, positions });
  const pairs = (N * NH * hs) / 2;
  if (pairs === 0) return;
  rt.dispatch({ label: 'rope_forward', code: forwardSrc, constants: { WG } }, params(N, NH, hs, theta), [inp, positions, out], grid(pairs));
}

/** dinp(N, NH, hs) += Rᵀ · dout(N, NH, hs): the transpose rotation, accumulated. */
export function ropeBackward(rt: Dispatcher, dinp: GpuTensor, dout: GpuTensor, positions: GpuTensor, N: number, NH: number, hs: number, theta: number): void {
  checkRopeShapes('ropeBackward', dinp.length, dout.length, positions.length, N, NH, hs, theta);
  checkSeparate('ropeBackward', 'dinp', dinp, { dout, positions });
  const pairs = (N * NH * hs) / 2;
  if (pairs === 0) return;
  rt.dispatch({ label: 'rope_backward', code: backwardSrc, constants: { WG } }, params(N, NH, hs, theta), [dout, positions, dinp], grid(pairs));
}
