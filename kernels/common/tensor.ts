/**
 * A float32 tensor on the GPU: a view (`offset`, `length` in elements) into a labelled buffer,
 * either a buffer of its own or a slice of an arena (arena.ts). Shapes live with the caller, the
 * llm.c way; a tensor only knows its element count.
 */
import type { GpuContext } from './context';
import { assertAlive } from './context';

export interface GpuTensor {
  readonly buffer: GPUBuffer;
  /** Byte offset in `buffer`, a multiple of minStorageBufferOffsetAlignment. */
  readonly offset: number;
  /** Element count (f32). */
  readonly length: number;
  readonly label: string;
}

/**
 * GPUBufferUsage / GPUMapMode values, spelled out because the globals are not defined in every
 * host (Dawn in Node without `globals`). Values from the WebGPU specification.
 */
export const GPUBufferUsageFlags = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
} as const;

export const GPUMapModeFlags = { READ: 0x0001, WRITE: 0x0002 } as const;

export const STORAGE_USAGE = GPUBufferUsageFlags.STORAGE | GPUBufferUsageFlags.COPY_SRC | GPUBufferUsageFlags.COPY_DST;

/** Bytes a tensor of `length` f32 occupies in a binding (never 0: empty bindings are invalid). */
export function bindingBytes(length: number): number {
  return Math.max(4, length * 4);
}

export function createTensor(ctx: GpuContext, label: string, length: number): GpuTensor {
  assertAlive(ctx);
  if (!Number.isInteger(length) || length < 0)
    throw new Error(`createTensor('${label}'): length must be a non-negative integer, got ${length}`);
  const maxBinding = ctx.adapter.limits.maxStorageBufferBindingSize ?? 134217728;
  if (bindingBytes(length) > maxBinding) {
    throw new Error(
      `createTensor('${label}'): ${bindingBytes(length)} bytes exceeds maxStorageBufferBindingSize ${maxBinding}; split the tensor or use a smaller preset`,
    );
  }
  const buffer = ctx.device.createBuffer({ label, size: roundUp(bindingBytes(length), 16), usage: STORAGE_USAGE });
  return { buffer, offset: 0, length, label };
}

/**
 * Writes `data` into `t`. Float data (any ArrayLike) is stored as f32; an Int32Array or
 * Uint32Array is stored bit-for-bit, for WGSL `array<i32>` / `array<u32>` bindings (ids,
 * positions, segment ids).
 */
export function uploadTensor(ctx: GpuContext, t: GpuTensor, data: ArrayLike<number>): void {
  assertAlive(ctx);
  if (data.length !== t.length)
    throw new Error(`upload to '${t.label}': expected ${t.length} values, got ${data.length}`);
  const f =
    data instanceof Float32Array || data instanceof Int32Array || data instanceof Uint32Array
      ? data
      : Float32Array.from(data);
  if (f.length > 0) ctx.device.queue.writeBuffer(t.buffer, t.offset, f.buffer, f.byteOffset, f.byteLength);
}

export function roundUp(n: number, multiple: number): number {
  return Math.ceil(n / multiple) * multiple;
}
