/**
 * WebGPU wrappers for matmul: `matmulNaive` (one output per invocation), `matmulTiled` (64×64
 * shared-memory tiles) and `matmulRegister` (8×8 outputs per invocation in registers, vec4 loads
 * where rows are 16-byte aligned); `matmul` picks one. Same contract as `matmulRef`.
 */
import type { Dispatcher } from '../common/dispatcher';
import type { PipelineSpec } from '../common/pipelines';
import type { GpuTensor } from '../common/tensor';
import type { MatmulLayout, MatmulVariant } from './layout';
import { checkMatmulShapes } from './matmul.ref';
import naiveSrc from './matmul_naive.wgsl?raw';
import registerSrc from './matmul_register.wgsl?raw';
import registerLoadsSrc from './matmul_register_loads.wgsl?raw';
import registerVec4Src from './matmul_register_vec4.wgsl?raw';
import tiledSrc from './matmul_tiled.wgsl?raw';

const NAIVE_WG = 16;
const TILE = 64;
const REG_BLOCK = 8; // outputs per invocation along m and n
const REG_WG = 4; // 4 × 4 invocations: small output grids still make several workgroups (one per core)

function constantsFor(layout: MatmulLayout): Record<string, number> {
  return { TRANS_A: layout === 'tn' ? 1 : 0, TRANS_B: layout === 'nt' ? 1 : 0 };
}

/** Checks shapes, then dispatches one invocation grid covering out(M, N) in `span`-sized squares. */
function launch(
  rt: Dispatcher,
  spec: PipelineSpec,
  span: number,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate: boolean,
): void {
  checkMatmulShapes(out.length, a.length, b.length, M, K, N, layout);
  if (M === 0 || N === 0) return;
  rt.dispatch(
    spec,
    new Uint32Array([M, K, N, accumulate ? 1 : 0]),
    [a, b, out],
    [Math.ceil(N / span), Math.ceil(M / span)],
  );
}

export function matmulNaive(
  rt: Dispatcher,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
): void {
  const spec = {
    label: 'matmul_naive',
    code: naiveSrc,
    constants: { ...constantsFor(layout), WG_X: NAIVE_WG, WG_Y: NAIVE_WG },
  };
  launch(rt, spec, NAIVE_WG, out, a, b, M, K, N, layout, accumulate);
}

export function matmulTiled(
  rt: Dispatcher,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
): void {
  launch(
    rt,
    { label: 'matmul_tiled', code: tiledSrc, constants: constantsFor(layout) },
    TILE,
    out,
    a,
    b,
    M,
    K,
    N,
    layout,
    accumulate,
  );
}

/** Whether every contiguous row of A and B starts on a 16-byte boundary (matmul_register_vec4). */
export function registerVec4Fits(M: number, K: number, N: number, layout: MatmulLayout): boolean {
  const aRow = layout === 'tn' ? M : K;
  const bRow = layout === 'nt' ? K : N;
  return K > 0 && aRow % 4 === 0 && bRow % 4 === 0;
}

export function matmulRegister(
  rt: Dispatcher,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
): void {
  // One body, two sets of loads prepended (WGSL declarations may come in any order).
  const [label, loads] = registerVec4Fits(M, K, N, layout)
    ? ['matmul_register_vec4', registerVec4Src]
    : ['matmul_register', registerLoadsSrc];
  const spec = {
    label,
    entryPoint: 'matmul_register',
    code: `${loads}\n${registerSrc}`,
    constants: { ...constantsFor(layout), WG_X: REG_WG, WG_Y: REG_WG },
  };
  launch(rt, spec, REG_BLOCK * REG_WG, out, a, b, M, K, N, layout, accumulate);
}

/**
 * `auto`, from `dewpoint bench matmul` on SwiftShader: the register kernel was fastest on every
 * shape from 33×20×70 up (1.0–3.0 GFLOPS; 2.6–19× tiled, 6–15× naive on the model's shapes), and
 * tiled never was. Below ~16k multiply-adds the dispatch dominates and naive is as fast or faster
 * (16³: 0.44–1.04×, 2×3×2: 0.3–0.7×); with fewer outputs than one 8×8 block most register work
 * is duplicates.
 */
export function chooseMatmulVariant(M: number, K: number, N: number): 'naive' | 'register' {
  return M * N >= REG_BLOCK * REG_BLOCK && M * K * N >= 16384 ? 'register' : 'naive';
}

const KERNELS = { naive: matmulNaive, tiled: matmulTiled, register: matmulRegister } as const;

export function matmul(
  rt: Dispatcher,
  out: GpuTensor,
  a: GpuTensor,
  b: GpuTensor,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
  variant: MatmulVariant = 'auto',
): void {
  const v = variant === 'auto' ? chooseMatmulVariant(M, K, N) : variant;
  KERNELS[v](rt, out, a, b, M, K, N, layout, accumulate);
}
