/**
 * WebGPU wrapper for one AdamW step (torch.optim.AdamW semantics, see adamw.ref.ts), in place on
 * param, m and v, in one dispatch. The gradient scale is a number, or a one-element GPU tensor
 * (written by clipScale in kernels/gradnorm) so clipping needs no readback. A flat view over
 * several tensors (same weight decay, laid out alike in the parameter, gradient and moment
 * arenas) updates them all in one dispatch.
 */
import type { Dispatcher } from '../common/dispatcher';
import { strideGroups } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import type { AdamWHyper } from './adamw.ref';
import { adamwScalars, checkAdamWSizes, checkScaleNumber } from './adamw.ref';
import adamwSrc from './adamw.wgsl?raw';

export type { AdamWHyper } from './adamw.ref';

const WG = 64;
/** About this many elements per invocation, ... */
const ITEMS_PER_INVOCATION = 16;
/** ... with at most this many workgroups. */
const MAX_GROUPS = 4096;

export function adamw(
  rt: Dispatcher,
  param: GpuTensor,
  grad: GpuTensor,
  m: GpuTensor,
  v: GpuTensor,
  n: number,
  hp: AdamWHyper,
  gradScale: number | GpuTensor = 1,
): void {
  checkAdamWSizes('adamw', { param: param.length, grad: grad.length, m: m.length, v: v.length }, n);
  const s = adamwScalars(hp);
  const fromTensor = typeof gradScale !== 'number';
  if (fromTensor && gradScale.length < 1)
    throw new Error(`adamw: gradScale tensor '${gradScale.label}' has 0 elements, needs 1`);
  if (n === 0) return;
  const params = new ArrayBuffer(36);
  new Uint32Array(params, 0, 1)[0] = n;
  // Field order of `Params` in adamw.wgsl.
  new Float32Array(params, 4, 8).set([
    s.decay,
    hp.beta2,
    s.oneMinusBeta1,
    s.oneMinusBeta2,
    s.stepSize,
    s.bc2Sqrt,
    hp.eps,
    fromTensor ? 1 : checkScaleNumber(gradScale),
  ]);
  rt.dispatch(
    { label: 'adamw', code: adamwSrc, constants: { WG, SCALE_FROM_TENSOR: fromTensor ? 1 : 0 } },
    params,
    // Without a scale tensor the scale binding is never read: bind grad in its place.
    [grad, fromTensor ? gradScale : grad, param, m, v],
    [strideGroups(n, WG, ITEMS_PER_INVOCATION, MAX_GROUPS)],
  );
}
