/**
 * Launch helpers shared by the elementwise and row kernels (residual, swiglu, embedding,
 * rmsnorm): a 2-D workgroup grid for more workgroups than one dimension allows, and a check that
 * an output overlaps no other binding. Not a kernel. (Candidates for kernels/common/.)
 */
import type { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import { bindingBytes } from '../common/tensor';

/**
 * Workgroup counts (x, y) with x·y ≥ `groups` and each within maxComputeWorkgroupsPerDimension.
 * Shaders recover the flat group index as `wid.y * nwg.x + wid.x` and skip indices ≥ `groups`.
 */
export function flatGrid(groups: number, maxPerDim: number): [number, number] {
  if (!Number.isInteger(groups) || groups < 0) throw new Error(`flatGrid: groups must be a non-negative integer, got ${groups}`);
  if (groups <= maxPerDim) return [groups, 1];
  const y = Math.ceil(groups / maxPerDim);
  if (y > maxPerDim) throw new Error(`flatGrid: ${groups} workgroups exceed ${maxPerDim}² even on a 2-D grid; split the problem`);
  return [Math.ceil(groups / y), y];
}

/** `flatGrid` with the device's own limit. */
export function gridFor(rt: Dispatcher, groups: number): [number, number] {
  return flatGrid(groups, rt.ctx.adapter.limits.maxComputeWorkgroupsPerDimension ?? 65535);
}

function overlaps(a: GpuTensor, b: GpuTensor): boolean {
  return a.buffer === b.buffer && a.offset < b.offset + bindingBytes(b.length) && b.offset < a.offset + bindingBytes(a.length);
}

/**
 * Throws when an output shares bytes with another binding of the same dispatch: WebGPU rejects a
 * writable binding that aliases another one, and an in-place update would race anyway.
 */
export function checkDisjoint(op: string, outputs: readonly GpuTensor[], inputs: readonly GpuTensor[]): void {
  outputs.forEach((o, i) => {
    for (const t of [...outputs.slice(i + 1), ...inputs]) {
      if (overlaps(o, t)) {
        throw new Error(`${op}: output '${o.label}' overlaps '${t.label}' (same buffer, offsets ${o.offset} and ${t.offset}); pass a separate output tensor (for dst += src use accumulate)`);
      }
    }
  });
}

/**
 * True on a software adapter (SwiftShader: a CPU Vulkan with 4-wide subgroups, where workgroup
 * barriers are costly and a few long-running invocations beat many short ones).
 */
export function isSoftwareAdapter(rt: Dispatcher): boolean {
  const a = rt.ctx.adapter;
  return a.isFallbackAdapter || a.architecture === 'swiftshader';
}
