/**
 * Launch helpers shared by the kernel wrappers: a 2-D workgroup grid for more workgroups than one
 * dimension allows (`flatGrid`, `gridFor`), the workgroup count of a grid-stride loop
 * (`strideGroups`), the binding check every dispatch needs (`checkDisjoint`) and the
 * software-adapter test that some tunings key on (`isSoftwareAdapter`). Not a kernel.
 */
import { isSoftwareSummary } from './context';
import type { Dispatcher } from './dispatcher';
import type { GpuTensor } from './tensor';
import { bindingBytes } from './tensor';

/**
 * Workgroup counts (x, y) with x·y ≥ `groups` and each within maxComputeWorkgroupsPerDimension.
 * Shaders recover the flat group index as `wid.y * nwg.x + wid.x` and skip indices ≥ `groups`.
 */
export function flatGrid(groups: number, maxPerDim: number): [number, number] {
  if (!Number.isInteger(groups) || groups < 0)
    throw new Error(`flatGrid: groups must be a non-negative integer, got ${groups}`);
  if (groups <= maxPerDim) return [groups, 1];
  const y = Math.ceil(groups / maxPerDim);
  if (y > maxPerDim)
    throw new Error(`flatGrid: ${groups} workgroups exceed ${maxPerDim}² even on a 2-D grid; split the problem`);
  return [Math.ceil(groups / y), y];
}

/** `flatGrid` with the device's own limit. */
export function gridFor(rt: Dispatcher, groups: number): [number, number] {
  return flatGrid(groups, rt.ctx.adapter.limits.maxComputeWorkgroupsPerDimension ?? 65535);
}

/**
 * Workgroups (1-D) for a grid-stride loop over `n` elements: about `perInvocation` elements per
 * invocation of a `wg`-wide workgroup, with at most `maxGroups` workgroups (the shader strides by
 * the total invocation count past that).
 */
export function strideGroups(n: number, wg: number, perInvocation: number, maxGroups: number): number {
  return Math.min(maxGroups, Math.ceil(n / (wg * perInvocation)));
}

function overlaps(a: GpuTensor, b: GpuTensor): boolean {
  return (
    a.buffer === b.buffer &&
    a.offset < b.offset + bindingBytes(b.length) &&
    b.offset < a.offset + bindingBytes(a.length)
  );
}

/**
 * Throws unless the bindings of one dispatch are legal and race-free, naming the tensors by their
 * argument names (the keys):
 * - an output shares no buffer with any input, at any offset: WebGPU rejects a buffer bound both
 *   read-only and writable in one dispatch, even at disjoint ranges;
 * - outputs may share a buffer (slices of one gradient arena), but no two overlap: WebGPU rejects
 *   aliasing writable bindings, and an in-place update would race anyway.
 */
export function checkDisjoint(
  op: string,
  outputs: Readonly<Record<string, GpuTensor>>,
  inputs: Readonly<Record<string, GpuTensor>>,
): void {
  const outs = Object.entries(outputs);
  outs.forEach(([oName, o], i) => {
    for (const [tName, t] of outs.slice(i + 1)) {
      if (overlaps(o, t)) {
        throw new Error(
          `${op}: output '${o.label}' overlaps '${t.label}' (${oName} and ${tName}: same buffer, offsets ` +
            `${o.offset} and ${t.offset}); pass separate output tensors`,
        );
      }
    }
    for (const [tName, t] of Object.entries(inputs)) {
      if (o.buffer === t.buffer) {
        const where = overlaps(o, t) ? `and output '${o.label}' overlaps '${t.label}'` : 'at disjoint ranges';
        throw new Error(
          `${op}: ${oName} ('${o.label}') shares a buffer with ${tName} ('${t.label}'), ${where} (offsets ` +
            `${o.offset} and ${t.offset}); WebGPU cannot bind one buffer read-only and writable in one dispatch: ` +
            `pass a separate output tensor (for dst += src use accumulate)`,
        );
      }
    }
  });
}

/** True on a software adapter (`isSoftwareSummary` in context.ts). */
export function isSoftwareAdapter(rt: Dispatcher): boolean {
  return isSoftwareSummary(rt.ctx.adapter);
}
