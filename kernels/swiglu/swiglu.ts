/**
 * WebGPU wrappers for SwiGLU: `swigluForward` (out = silu(gate)·up) and `swigluBackward`
 * (dgate += …, dup += …). Same contract as swiglu.ref.ts; one dispatch each.
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkElementwise } from '../residual/residual.ref';
import backwardSrc from './swiglu_backward.wgsl?raw';
import forwardSrc from './swiglu_forward.wgsl?raw';

const WG = 256;
const BLOCK = WG * 4; // elements per workgroup (see the WGSL headers)

export function swigluForward(rt: Dispatcher, out: GpuTensor, gate: GpuTensor, up: GpuTensor, n: number): void {
  checkElementwise('swigluForward', n, { out, gate, up });
  checkDisjoint('swigluForward', { out }, { gate, up });
  if (n === 0) return;
  rt.dispatch(
    { label: 'swiglu_forward', code: forwardSrc, constants: { WG } },
    new Uint32Array([n]),
    [gate, up, out],
    gridFor(rt, Math.ceil(n / BLOCK)),
  );
}

export function swigluBackward(
  rt: Dispatcher,
  dgate: GpuTensor,
  dup: GpuTensor,
  dout: GpuTensor,
  gate: GpuTensor,
  up: GpuTensor,
  n: number,
): void {
  checkElementwise('swigluBackward', n, { dgate, dup, dout, gate, up });
  checkDisjoint('swigluBackward', { dgate, dup }, { dout, gate, up });
  if (n === 0) return;
  rt.dispatch(
    { label: 'swiglu_backward', code: backwardSrc, constants: { WG } },
    new Uint32Array([n]),
    [dout, gate, up, dgate, dup],
    gridFor(rt, Math.ceil(n / BLOCK)),
  );
}
