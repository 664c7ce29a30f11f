/**
 * The wasm backend's allocator over one linear memory: first fit over a free list kept sorted by
 * address, neighbours coalesced on free, every block 64-byte aligned (a cache line; SIMD loads
 * need 16). Grows the memory by whole 64 KiB pages when nothing fits. Byte offsets in, byte
 * offsets out; the tensors hold them.
 */
const ALIGN = 64;
const PAGE = 65536;

/** The part of WebAssembly.Memory the heap uses. */
interface GrowableMemory {
  readonly buffer: ArrayBufferLike;
  grow(pages: number): number;
}

export class WasmHeap {
  /** Free blocks [start, start + size), ascending and never adjacent. */
  private free: { start: number; size: number }[] = [];
  private top: number;
  /** Bytes from here up were never handed out: zero, as memory.grow gives them. */
  private clean: number;
  private readonly sizes = new Map<number, number>();
  /** Bytes in live blocks, and the most ever live (for the bench's memory figures). */
  liveBytes = 0;
  peakBytes = 0;

  constructor(
    private readonly memory: GrowableMemory,
    base: number,
    private readonly maxBytes: number,
  ) {
    this.top = roundUp(base, ALIGN);
    this.clean = this.top;
  }

  /**
   * A block of at least `bytes`: its offset, and how many of its first bytes may hold an earlier
   * block's values (the rest was never handed out and is zero); the caller zeroes those.
   */
  alloc(bytes: number): { ptr: number; dirty: number } {
    const size = Math.max(ALIGN, roundUp(bytes, ALIGN));
    let ptr = -1;
    const i = this.free.findIndex((b) => b.size >= size);
    if (i >= 0) {
      const b = this.free[i];
      ptr = b.start;
      if (b.size === size) this.free.splice(i, 1);
      else this.free[i] = { start: b.start + size, size: b.size - size };
    } else {
      // Extend the last free block when it ends at the top; otherwise take fresh memory.
      const last = this.free[this.free.length - 1];
      if (last && last.start + last.size === this.top) {
        this.free.pop();
        this.top = last.start;
      }
      ptr = this.top;
      this.ensure(ptr + size);
      this.top = ptr + size;
    }
    this.sizes.set(ptr, size);
    this.liveBytes += size;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    const dirty = Math.max(0, Math.min(ptr + size, this.clean) - ptr);
    this.clean = Math.max(this.clean, ptr + size);
    return { ptr, dirty };
  }

  release(ptr: number): void {
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`wasm heap: no live block at ${ptr} (freed twice?)`);
    this.sizes.delete(ptr);
    this.liveBytes -= size;
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.free[mid].start < ptr) lo = mid + 1;
      else hi = mid;
    }
    const block = { start: ptr, size };
    const prev = this.free[lo - 1];
    const next = this.free[lo];
    if (prev && prev.start + prev.size === ptr) {
      prev.size += size;
      if (next && ptr + size === next.start) {
        prev.size += next.size;
        this.free.splice(lo, 1);
      }
    } else if (next && ptr + size === next.start) {
      next.start = ptr;
      next.size += size;
    } else {
      this.free.splice(lo, 0, block);
    }
  }

  private ensure(end: number): void {
    if (end > this.maxBytes)
      throw new Error(`wasm heap: ${end} bytes needed, the memory's maximum is ${this.maxBytes}`);
    const have = this.memory.buffer.byteLength;
    if (end > have) this.memory.grow(Math.ceil((end - have) / PAGE));
  }
}

function roundUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}
