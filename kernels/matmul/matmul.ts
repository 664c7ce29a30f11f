/**
 * WebGPU wrappers for matmul: `matmulNaive` (one output per invocation) and `matmulTiled`
 * (shared-memory 64×64 tiles, 4×4 outputs per invocation); `matmul` picks one. Same contract as
 * `matmulRef`: out(M, N) (+)= op(A)·op(B) for the layouts nn, nt, tn.
 */
import type { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import type { MatmulLayout, MatmulVariant } from './layout';
import { checkMatmulShapes } from './matmul.ref';
import naiveSrc from './matmul_naive.wgsl?raw';
import tiledSrc from './matmul_tiled.wgsl?raw';

const NAIVE_WG = 16;
const TILE = 64;

function constantsFor(layout: MatmulLayout): Record<string, number> {
  return { TRANS_A: layout === 'tn' ? 1 : 0, TRANS_B: layout === 'nt' ? 1 : 0 };
}

function params(M: number, K: number, N: number, accumulate: boolean): Uint32Array {
  return new Uint32Array([M, K, N, accumulate ? 1 : 0]);
}

export function matmulNaive(rt: Dispatcher, out: GpuTensor, a: GpuTensor, b: GpuTensor, M: number, K: number, N: number, layout: MatmulLayout, accumulate = false): void {
  checkMatmulShapes(out.length, a.length, b.length, M, K, N, layout);
  if (M === 0 || N === 0) return;
  rt.dispatch(
    { label: 'matmul_naive', code: naiveSrc, constants: { ...constantsFor(layout), WG_X: NAIVE_WG, WG_Y: NAIVE_WG } },
    params(M, K, N, accumulate),
    [a, b, out],
    [Math.ceil(N / NAIVE_WG), Math.ceil(M / NAIVE_WG)],
  );
}

export function matmulTiled(rt: Dispatcher, out: GpuTensor, a: GpuTensor, b: GpuTensor, M: number, K: number, N: number, layout: MatmulLayout, accumulate = false): void {
  checkMatmulShapes(out.length, a.length, b.length, M, K, N, layout);
  if (M === 0 || N === 0) return;
  rt.dispatch(
    { label: 'matmul_tiled', code: tiledSrc, constants: constantsFor(layout) },
    params(M, K, N, accumulate),
    [a, b, out],
    [Math.ceil(N / TILE), Math.ceil(M / TILE)],
  );
}

/**
 * `auto`: the tiled kernel once the output covers at least a few tiles' worth of work; tiny
 * products (a bias-sized row, a 1×1) run faster one output per invocation.
 */
export function chooseMatmulVariant(M: number, K: number, N: number): 'naive' | 'tiled' {
  return M * N >= TILE * TILE && K >= 16 ? 'tiled' : 'naive';
}

export function matmul(rt: Dispatcher, out: GpuTensor, a: GpuTensor, b: GpuTensor, M: number, K: number, N: number, layout: MatmulLayout, accumulate = false, variant: MatmulVariant = 'auto'): void {
  const v = variant === 'auto' ? chooseMatmulVariant(M, K, N) : variant;
  (v === 'tiled' ? matmulTiled : matmulNaive)(rt, out, a, b, M, K, N, layout, accumulate);
}
