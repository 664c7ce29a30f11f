/**
 * WebGPU wrappers for the residual add (`residualForward`: out = a + b) and gradient accumulation
 * (`accumulate`: dst += src). Same contract as residual.ref.ts; one dispatch each.
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import accumulateSrc from './accumulate.wgsl?raw';
import { checkElementwise } from './residual.ref';
import forwardSrc from './residual_forward.wgsl?raw';

const WG = 256;
/** Elements per workgroup: WG invocations × 4 elements each (see the WGSL headers). */
export const ELEMENTWISE_BLOCK = WG * 4;

export function residualForward(rt: Dispatcher, out: GpuTensor, a: GpuTensor, b: GpuTensor, n: number): void {
  checkElementwise('residualForward', n, { out, a, b });
  checkDisjoint('residualForward', { out }, { a, b });
  if (n === 0) return;
  rt.dispatch(
    { label: 'residual_forward', code: forwardSrc, constants: { WG } },
    new Uint32Array([n]),
    [a, b, out],
    gridFor(rt, Math.ceil(n / ELEMENTWISE_BLOCK)),
  );
}

export function accumulate(rt: Dispatcher, dst: GpuTensor, src: GpuTensor, n: number): void {
  checkElementwise('accumulate', n, { dst, src });
  checkDisjoint('accumulate', { dst }, { src });
  if (n === 0) return;
  rt.dispatch(
    { label: 'accumulate', code: accumulateSrc, constants: { WG } },
    new Uint32Array([n]),
    [src, dst],
    gridFor(rt, Math.ceil(n / ELEMENTWISE_BLOCK)),
  );
}
