/**
 * Arena allocator: many named tensors carved from one GPU buffer, each starting at a multiple of
 * `minStorageBufferOffsetAlignment` so it can be bound on its own. The plan is a pure function
 * (`planArena`) so it can be tested without a device.
 */
import type { GpuContext } from './context';
import { assertAlive } from './context';
import type { GpuTensor } from './tensor';
import { STORAGE_USAGE, bindingBytes, roundUp } from './tensor';

interface ArenaSpec {
  name: string;
  /** Element count (f32). */
  length: number;
}

interface ArenaPlan {
  /** Byte offset of each spec, in spec order. */
  offsets: number[];
  /** Total bytes of the arena buffer. */
  totalBytes: number;
}

export function planArena(specs: readonly ArenaSpec[], alignment: number): ArenaPlan {
  if (!Number.isInteger(alignment) || alignment < 4 || (alignment & (alignment - 1)) !== 0) {
    throw new Error(`planArena: alignment must be a power of two >= 4, got ${alignment}`);
  }
  const seen = new Set<string>();
  const offsets: number[] = [];
  let cursor = 0;
  for (const s of specs) {
    if (seen.has(s.name)) throw new Error(`planArena: duplicate tensor name '${s.name}'`);
    if (!Number.isInteger(s.length) || s.length < 0)
      throw new Error(`planArena: '${s.name}' length must be a non-negative integer, got ${s.length}`);
    seen.add(s.name);
    cursor = roundUp(cursor, alignment);
    offsets.push(cursor);
    cursor += bindingBytes(s.length);
  }
  return { offsets, totalBytes: roundUp(Math.max(cursor, 4), 16) };
}

export class Arena {
  readonly buffer: GPUBuffer;
  readonly plan: ArenaPlan;
  private readonly views = new Map<string, GpuTensor>();

  constructor(
    ctx: GpuContext,
    readonly label: string,
    specs: readonly ArenaSpec[],
  ) {
    assertAlive(ctx);
    const alignment = ctx.adapter.limits.minStorageBufferOffsetAlignment ?? 256;
    this.plan = planArena(specs, alignment);
    const maxBuffer = ctx.adapter.limits.maxBufferSize ?? 268435456;
    if (this.plan.totalBytes > maxBuffer) {
      throw new Error(
        `Arena '${label}': ${this.plan.totalBytes} bytes exceeds maxBufferSize ${maxBuffer}; use a smaller preset or split the arena`,
      );
    }
    this.buffer = ctx.device.createBuffer({ label, size: this.plan.totalBytes, usage: STORAGE_USAGE });
    specs.forEach((s, i) => {
      this.views.set(s.name, {
        buffer: this.buffer,
        offset: this.plan.offsets[i],
        length: s.length,
        label: `${label}.${s.name}`,
      });
    });
  }

  get(name: string): GpuTensor {
    const v = this.views.get(name);
    if (!v)
      throw new Error(`Arena '${this.label}' has no tensor '${name}' (has: ${[...this.views.keys()].join(', ')})`);
    return v;
  }

  destroy(): void {
    this.buffer.destroy();
  }
}
