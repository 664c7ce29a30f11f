/** WebGPU wrapper for widening bf16 (widen_bf16.wgsl). Same contract as bf16.ref.ts; one dispatch. */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkElementwise } from '../residual/residual.ref';
import { bf16Words } from './bf16.ref';
import src from './widen_bf16.wgsl?raw';

const WG = 256;

export function widenBf16(rt: Dispatcher, out: GpuTensor, packed: GpuTensor, n: number): void {
  checkElementwise('widenBf16', n, { out });
  if (packed.length < bf16Words(n))
    throw new Error(`widenBf16: packed has ${packed.length} words, needs ⌈n / 2⌉ = ${bf16Words(n)}`);
  checkDisjoint('widenBf16', { out }, { packed });
  if (n === 0) return;
  rt.dispatch(
    { label: 'widen_bf16', code: src, constants: { WG } },
    new Uint32Array([n]),
    [packed, out],
    gridFor(rt, Math.ceil(bf16Words(n) / WG)),
  );
}
