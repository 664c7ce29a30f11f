/**
 * WebGPU wrapper for matmul with f16 operands and f32 accumulation: out(M, N) (+)= op(Ã) · op(B̃),
 * where ã and b̃ hold f16 values two to a 32-bit word (kernels/f16/f16.ref.ts `packF16`: element
 * 2j the low half of word j) and out is f32. The body is matmul_register's (8 × 8 outputs per
 * invocation, f32 registers); only the loads differ, from one of two storage files:
 * - `native`: WGSL `enable f16;` and `array<f16>` bindings, where the device has `shader-f16`;
 * - `packed`: `array<u32>` unpacked with core WGSL's `unpack2x16float`, on any device.
 * Both widen each f16 to f32 exactly, so they compute the same sums; `auto` takes `native` where
 * the feature is. The result equals matmulRef of the operands' f16 values, to f32 accumulation.
 * Not an `Ops` method yet: the model keeps f32 operands (nothing narrows them to f16 on the GPU).
 */
import type { Dispatcher } from '../common/dispatcher';
import type { PipelineSpec } from '../common/pipelines';
import type { GpuTensor } from '../common/tensor';
import { f16Words } from '../f16/f16.ref';
import type { MatmulLayout } from './layout';
import { checkMatmulShapes } from './matmul.ref';
import loadsSrc from './matmul_f16_loads.wgsl?raw';
import nativeSrc from './matmul_f16_native.wgsl?raw';
import packedSrc from './matmul_f16_packed.wgsl?raw';
import registerSrc from './matmul_register.wgsl?raw';

export type F16Storage = 'auto' | 'native' | 'packed';

const REG_BLOCK = 8;
const REG_WG = 4;

/** `native` where the device has `shader-f16`, else `packed`; an explicit choice as it is. */
export function f16StorageFor(storage: F16Storage, features: readonly string[]): 'native' | 'packed' {
  if (storage !== 'auto') return storage;
  return features.includes('shader-f16') ? 'native' : 'packed';
}

/** The pipeline for one storage file (its text: `native` reads matmul_f16_native.wgsl). */
export function matmulF16Spec(storageLabel: string, storageSrc: string, layout: MatmulLayout): PipelineSpec {
  return {
    label: `matmul_register_f16_${storageLabel}`,
    entryPoint: 'matmul_register',
    // The storage file first: WGSL wants `enable f16;` before any declaration.
    code: `${storageSrc}\n${loadsSrc}\n${registerSrc}`,
    constants: { TRANS_A: layout === 'tn' ? 1 : 0, TRANS_B: layout === 'nt' ? 1 : 0, WG_X: REG_WG, WG_Y: REG_WG },
  };
}

/** Dispatches `spec` (from matmulF16Spec) over out(M, N); a and b are the operands' buffers. */
export function dispatchMatmulF16(
  rt: Dispatcher,
  spec: PipelineSpec,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  accumulate: boolean,
): void {
  if (M === 0 || N === 0) return;
  const span = REG_BLOCK * REG_WG;
  rt.dispatch(
    spec,
    new Uint32Array([M, K, N, accumulate ? 1 : 0]),
    [a, b, out],
    [Math.ceil(N / span), Math.ceil(M / span)],
  );
}

export function matmulF16(
  rt: Dispatcher,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
  storage: F16Storage = 'auto',
): void {
  for (const [name, t, n] of [
    ['a', a, M * K],
    ['b', b, K * N],
  ] as const) {
    if (t.length < f16Words(n))
      throw new Error(
        `matmulF16 ${layout}: ${name} has ${t.length} words, needs ⌈${n} / 2⌉ = ${f16Words(n)} (two f16 a word)`,
      );
  }
  checkMatmulShapes(out.length, a.length * 2, b.length * 2, M, K, N, layout); // dims, layout and out (a word holds two)
  const s = f16StorageFor(storage, rt.ctx.adapter.features);
  if (s === 'native' && !rt.ctx.adapter.features.includes('shader-f16'))
    throw new Error(`matmulF16: 'native' f16 storage needs the 'shader-f16' feature, which this device lacks`);
  dispatchMatmulF16(
    rt,
    matmulF16Spec(s, s === 'native' ? nativeSrc : packedSrc, layout),
    out,
    a,
    b,
    M,
    K,
    N,
    accumulate,
  );
}
