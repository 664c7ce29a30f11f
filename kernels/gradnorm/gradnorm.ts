/**
 * WebGPU wrappers for global gradient-norm clipping without a readback:
 * `gradNormSquared` writes Σ g² over all gradient tensors (gradnorm_partial once per tensor, then
 * gradnorm_finish: two dispatches for one flat tensor, such as the whole gradient arena), and
 * `clipScale` turns it into torch's clip_grad_norm_ scale for adamw's gradScale.
 * Error: all sums are f32 over non-negative terms, so the relative error is at most the longest
 * chain of additions times 2⁻²⁴ (`gradNormRelErrorBound`): ⌈n/4K⌉ squares per stage-1
 * accumulator (K invocations), ⌈P/256⌉ partials per stage-2 accumulator (P partials), then 10
 * levels of pairwise sums. ≈ 5e-6 for n = 1e6, ≈ 4e-5 for n = 1e8; rounding errors of both signs
 * make the typical error far smaller.
 * Range: |g| above ~1.8e19 overflows Σ g² to +∞ (clipScale then gives 0, as PyTorch would), and
 * squares below ~1e-38 may flush to zero.
 */
import type { Dispatcher } from '../common/dispatcher';
import { strideGroups } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkMaxNorm, checkOut } from './gradnorm.ref';
import clipSrc from './clip_scale.wgsl?raw';
import finishSrc from './gradnorm_finish.wgsl?raw';
import partialSrc from './gradnorm_partial.wgsl?raw';

const WG = 64;
/** Stage 1: about this many squares per invocation, ... */
const ITEMS_PER_INVOCATION = 64;
/** ... with at most this many workgroups (invocations: MAX_GROUPS·WG) per tensor. */
const MAX_GROUPS = 1024;

/** Stage-1 invocations, hence `partials` slots, for a tensor of n elements (a multiple of 64). */
function gradNormSlots(n: number): number {
  return WG * strideGroups(n, WG, ITEMS_PER_INVOCATION, MAX_GROUPS);
}

/** Length of the `partials` scratch that gradNormSquared needs for tensors of these lengths. */
export function gradNormPartialsLength(lengths: readonly number[]): number {
  return Math.max(
    1,
    lengths.reduce((sum, n) => sum + gradNormSlots(n), 0),
  );
}

/** The worst-case relative error of gradNormSquared for tensors of these lengths (see above). */
export function gradNormRelErrorBound(lengths: readonly number[]): number {
  const stage1 = Math.max(0, ...lengths.map((n) => (n === 0 ? 0 : Math.ceil(n / (4 * gradNormSlots(n))))));
  return (stage1 + Math.ceil(gradNormPartialsLength(lengths) / (4 * WG)) + 10) * 2 ** -24;
}

export function gradNormSquared(
  rt: Dispatcher,
  out: GpuTensor,
  partials: GpuTensor,
  grads: GpuTensor | readonly GpuTensor[],
): void {
  const list: readonly GpuTensor[] = 'buffer' in grads ? [grads] : grads;
  checkOut('gradNormSquared', 'out', out.length);
  const need = gradNormPartialsLength(list.map((g) => g.length));
  if (partials.length < need) {
    throw new Error(
      `gradNormSquared: partials has ${partials.length} elements, needs ${need} for tensors of lengths ` +
        `[${list.map((g) => g.length).join(', ')}]; size it with gradNormPartialsLength`,
    );
  }
  let offset = 0;
  for (const g of list) {
    const slots = gradNormSlots(g.length);
    if (slots === 0) continue;
    rt.dispatch(
      { label: 'gradnorm_partial', code: partialSrc, constants: { WG } },
      new Uint32Array([g.length, offset]),
      [g, partials],
      [slots / WG],
    );
    offset += slots;
  }
  rt.dispatch(
    { label: 'gradnorm_finish', code: finishSrc, constants: { WG } },
    new Uint32Array([offset]),
    [partials, out],
    [1],
  );
}

export function clipScale(rt: Dispatcher, scale: GpuTensor, normSq: GpuTensor, maxNorm: number): void {
  checkOut('clipScale', 'scale', scale.length);
  checkOut('clipScale', 'normSq', normSq.length);
  checkMaxNorm(maxNorm);
  rt.dispatch({ label: 'clip_scale', code: clipSrc }, new Float32Array([maxNorm]), [normSq, scale], [1]);
}
