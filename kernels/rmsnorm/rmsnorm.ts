/**
 * WebGPU wrappers for Llama RMSNorm: `rmsnormForward` (out, and rstd saved for the backward) and
 * `rmsnormBackward` (dinp += …, dweight += …, one dispatch). Same contract as rmsnorm.ref.ts.
 * The forward has two kernels: `row` (one invocation per row) and `subgroup` (one workgroup per
 * row, the sum of squares reduced with subgroupAdd), which `auto` picks where the dispatcher's
 * device has the `subgroups` feature (`rt.subgroups`).
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkRmsnormEps, checkRmsnormShapes } from './rmsnorm.ref';
import backwardSrc from './rmsnorm_backward.wgsl?raw';
import forwardSrc from './rmsnorm_forward.wgsl?raw';
import forwardSubgroupSrc from './rmsnorm_forward_subgroup.wgsl?raw';

const WG = 64; // invocations per workgroup: rows (forward); columns, then rows (backward)

export type RmsnormVariant = 'auto' | 'row' | 'subgroup';

/** The forward's kernel: `auto` takes the subgroup one where the device has subgroups. */
export function rmsnormForwardKernel(variant: RmsnormVariant, subgroups: boolean): 'row' | 'subgroup' {
  if (variant !== 'auto') return variant;
  return subgroups ? 'subgroup' : 'row';
}

function params(N: number, C: number, eps = 0): ArrayBuffer {
  const buf = new ArrayBuffer(16);
  new Uint32Array(buf, 0, 2).set([N, C]);
  new Float32Array(buf, 8, 1)[0] = eps;
  return buf;
}

/** out (N, C) = inp · rstd · weight per row; rstd (N) = 1 / sqrt(mean(inp²) + eps). */
export function rmsnormForward(
  rt: Dispatcher,
  out: GpuTensor,
  rstd: GpuTensor,
  inp: GpuTensor,
  weight: GpuTensor,
  N: number,
  C: number,
  eps: number,
  variant: RmsnormVariant = 'auto',
): void {
  checkRmsnormShapes('rmsnormForward', { out, inp }, { rstd }, { weight }, N, C);
  checkRmsnormEps(eps);
  checkDisjoint('rmsnormForward', { out, rstd }, { inp, weight });
  if (N === 0) return;
  const subgroup = rmsnormForwardKernel(variant, rt.subgroups) === 'subgroup';
  rt.dispatch(
    subgroup
      ? { label: 'rmsnorm_forward_subgroup', code: forwardSubgroupSrc, constants: { WG } }
      : { label: 'rmsnorm_forward', code: forwardSrc, constants: { WG } },
    params(N, C, eps),
    [inp, weight, out, rstd],
    gridFor(rt, subgroup ? N : Math.ceil(N / WG)),
  );
}

/** dinp (N, C) += ∂L/∂inp, dweight (C) += ∂L/∂weight, given dout (N, C) and the forward's rstd (N). */
export function rmsnormBackward(
  rt: Dispatcher,
  dinp: GpuTensor,
  dweight: GpuTensor,
  dout: GpuTensor,
  inp: GpuTensor,
  weight: GpuTensor,
  rstd: GpuTensor,
  N: number,
  C: number,
): void {
  checkRmsnormShapes('rmsnormBackward', { dinp, dout, inp }, { rstd }, { dweight, weight }, N, C);
  checkDisjoint('rmsnormBackward', { dinp, dweight }, { dout, inp, weight, rstd });
  if (N === 0) return;
  rt.dispatch(
    { label: 'rmsnorm_backward', code: backwardSrc, constants: { WG } },
    params(N, C),
    [dout, inp, weight, rstd, dinp, dweight],
    gridFor(rt, Math.ceil((C + N) / WG)),
  );
}
