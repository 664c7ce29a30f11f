/** WebGPU wrapper for widening bf16 (widen_bf16.wgsl). Same contract as bf16.ref.ts; one dispatch. */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { bf16Words, checkBf16Shapes } from './bf16.ref';
import src from './widen_bf16.wgsl?raw';

const WG = 256;

export function widenBf16(rt: Dispatcher, out: GpuTensor, packed: GpuTensor, n: number): void {
  checkBf16Shapes(n, out, packed);
  checkDisjoint('widenBf16', { out }, { packed });
  if (n === 0) return;
  rt.dispatch(
    { label: 'widen_bf16', code: src, constants: { WG } },
    new Uint32Array([n]),
    [packed, out],
    gridFor(rt, Math.ceil(bf16Words(n) / WG)),
  );
}
