/**
 * WebGPU wrappers for the fused log-softmax at an inverse temperature `scale` = 1/T (default 1):
 * `logprobForward` (log-prob of the target id, entropy and log-sum-exp per row, of softmax(scale·l))
 * and `logprobBackward` (accumulates into dlogits, seeded by a per-token dlogp and optionally
 * dentropy), one dispatch each. Two kernels per direction: `row` (one invocation per row, no
 * barriers) for small vocabularies and `wide` (one workgroup per row, tree reduction) for real
 * ones; `auto` picks by V. The forward's `wide` kernel has a subgroup form (`subgroup`: the row's
 * max and sums by subgroupMax / subgroupAdd, no shared-memory tree) that `auto` and `wide` take
 * where the dispatcher's device has the `subgroups` feature (`rt.subgroups`). Same contracts as the references in logprob.ref.ts, except that a
 * target ≥ V yields logp = NaN instead of an exception.
 * Precision: the backward takes p_v = exp(scale·l − lse) with lse stored as f32, so p carries a
 * relative error of about |lse|·2⁻²⁴ (≈ 6e-4 for scaled logits near ±1e4, < 1e-5 below 100).
 */
import type { Dispatcher } from '../common/dispatcher';
import { gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import type { EntropyGrad } from './logprob.ref';
import { checkLogprobScale, checkLogprobShapes } from './logprob.ref';
import forwardSrc from './logprob_forward.wgsl?raw';
import forwardWideSrc from './logprob_forward_wide.wgsl?raw';
import forwardSubgroupSrc from './logprob_forward_subgroup.wgsl?raw';
import backwardSrc from './logprob_backward.wgsl?raw';
import backwardWideSrc from './logprob_backward_wide.wgsl?raw';

export type LogprobVariant = 'auto' | 'row' | 'wide' | 'subgroup';

const WG = 64;
const QUIET_NAN_BITS = 0x7fc00000;
/**
 * From this V on a row gets a workgroup. Measured on SwiftShader (2 cores), where barriers are
 * costly: `row` wins by 10-100× up to V = 2048 and `wide` wins from about V = 8192 when N is
 * small; on a real GPU `wide` is the better kernel for a real vocabulary (coalesced reads).
 */
const WIDE_FROM_V = 8192;

export function chooseLogprobVariant(V: number): 'row' | 'wide' {
  return V >= WIDE_FROM_V ? 'wide' : 'row';
}

/**
 * The forward's kernel: `auto` takes `row` or `wide` by V, and for wide rows the subgroup kernel
 * where the device has subgroups; an explicit variant is taken as it is (`wide` is the tree).
 */
export function logprobForwardKernel(
  V: number,
  variant: LogprobVariant,
  subgroups: boolean,
): 'row' | 'wide' | 'subgroup' {
  if (variant !== 'auto') return variant;
  const v = chooseLogprobVariant(V);
  return v === 'wide' && subgroups ? 'subgroup' : v;
}

/** The params uniform: N, V, then (forward) the NaN bits, then the scale as f32; 16 bytes. */
function params(N: number, V: number, scale: number, nanBits: number | null): ArrayBuffer {
  const buf = new ArrayBuffer(16);
  const u = new Uint32Array(buf);
  u.set([N, V]);
  if (nanBits === null) new Float32Array(buf, 8, 1)[0] = scale;
  else {
    u[2] = nanBits;
    new Float32Array(buf, 12, 1)[0] = scale;
  }
  return buf;
}

/** Workgroups for N rows: one per row (wide) or one per WG rows (row), folded into 2-D. */
function groupsFor(rt: Dispatcher, N: number, variant: 'row' | 'wide'): [number, number] {
  return gridFor(rt, variant === 'wide' ? N : Math.ceil(N / WG));
}

const FORWARD = {
  row: { label: 'logprob_forward', code: forwardSrc },
  wide: { label: 'logprob_forward_wide', code: forwardWideSrc },
  subgroup: { label: 'logprob_forward_subgroup', code: forwardSubgroupSrc },
} as const;

export function logprobForward(
  rt: Dispatcher,
  logp: GpuTensor,
  entropy: GpuTensor,
  lse: GpuTensor,
  logits: GpuTensor,
  targets: GpuTensor,
  N: number,
  V: number,
  scale = 1,
  variant: LogprobVariant = 'auto',
): void {
  checkLogprobShapes(
    'logprobForward',
    { logp: logp.length, entropy: entropy.length, lse: lse.length, logits: logits.length, targets: targets.length },
    N,
    V,
  );
  checkLogprobScale('logprobForward', scale);
  if (N === 0) return;
  const kernel = logprobForwardKernel(V, variant, rt.subgroups);
  rt.dispatch(
    { ...FORWARD[kernel], constants: { WG } },
    params(N, V, scale, QUIET_NAN_BITS),
    [logits, targets, logp, entropy, lse],
    groupsFor(rt, N, kernel === 'row' ? 'row' : 'wide'),
  );
}

export function logprobBackward(
  rt: Dispatcher,
  dlogits: GpuTensor,
  dlogp: GpuTensor,
  logits: GpuTensor,
  targets: GpuTensor,
  lse: GpuTensor,
  N: number,
  V: number,
  scale = 1,
  entropyGrad?: EntropyGrad<GpuTensor>,
  variant: LogprobVariant = 'auto',
): void {
  const sizes: Record<string, number> = {
    dlogits: dlogits.length,
    dlogp: dlogp.length,
    logits: logits.length,
    targets: targets.length,
    lse: lse.length,
  };
  if (entropyGrad) Object.assign(sizes, { dentropy: entropyGrad.dentropy.length, entropy: entropyGrad.entropy.length });
  checkLogprobShapes('logprobBackward', sizes, N, V);
  checkLogprobScale('logprobBackward', scale);
  if (N === 0) return;
  // The backward reduces nothing: `subgroup` means the wide kernel.
  const v = variant === 'auto' ? chooseLogprobVariant(V) : variant === 'subgroup' ? 'wide' : variant;
  const spec =
    v === 'wide'
      ? { label: 'logprob_backward_wide', code: backwardWideSrc }
      : { label: 'logprob_backward', code: backwardSrc };
  // Without the entropy seed the two entropy bindings are never read: bind dlogp in their place.
  const dentropy = entropyGrad?.dentropy ?? dlogp;
  const entropy = entropyGrad?.entropy ?? dlogp;
  rt.dispatch(
    { ...spec, constants: { WG, WITH_ENTROPY: entropyGrad ? 1 : 0 } },
    params(N, V, scale, null),
    [dlogp, dentropy, logits, targets, lse, entropy, dlogits],
    groupsFor(rt, N, v),
  );
}
