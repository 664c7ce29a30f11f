/**
 * Per-kernel GPU time from timestamp queries: every compute pass the Dispatcher records while a
 * profiler is attached writes begin/end timestamps; at each submit the timestamps are resolved and
 * read back, and nanoseconds are summed per shader label. Only for benchmarks: it adds a readback
 * per submit. Needs the `timestamp-query` feature (`GpuProfiler.supported`).
 */
import type { GpuContext } from './context';
import { GPUBufferUsageFlags, GPUMapModeFlags } from './tensor';

const CAPACITY = 4096; // timestamps per submit: 2 per pass

export class GpuProfiler {
  private readonly querySet: GPUQuerySet;
  private readonly resolve: GPUBuffer;
  private labels: string[] = [];
  private readonly pending: Promise<void>[] = [];
  /** Nanoseconds per shader label, summed. */
  readonly totals = new Map<string, number>();
  /** Passes per shader label. */
  readonly counts = new Map<string, number>();

  static supported(ctx: GpuContext): boolean {
    return ctx.device.features.has('timestamp-query');
  }

  constructor(private readonly ctx: GpuContext) {
    if (!GpuProfiler.supported(ctx)) throw new Error('GpuProfiler: the device lacks the timestamp-query feature');
    this.querySet = ctx.device.createQuerySet({ label: 'profiler', type: 'timestamp', count: CAPACITY });
    this.resolve = ctx.device.createBuffer({
      label: 'profiler:resolve',
      size: CAPACITY * 8,
      usage: GPUBufferUsageFlags.QUERY_RESOLVE | GPUBufferUsageFlags.COPY_SRC,
    });
  }

  /** Timestamp writes for the next pass, or undefined once this submit's capacity is used. */
  passWrites(label: string): GPUComputePassTimestampWrites | undefined {
    const i = this.labels.length;
    if (2 * i + 1 >= CAPACITY) return undefined;
    this.labels.push(label);
    return { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
  }

  /** Encodes the resolve of this submit's timestamps; call just before finishing the encoder. */
  beforeSubmit(encoder: GPUCommandEncoder): (() => void) | null {
    const labels = this.labels;
    if (labels.length === 0) return null;
    this.labels = [];
    const bytes = labels.length * 16;
    const staging = this.ctx.device.createBuffer({
      label: 'profiler:staging',
      size: bytes,
      usage: GPUBufferUsageFlags.MAP_READ | GPUBufferUsageFlags.COPY_DST,
    });
    encoder.resolveQuerySet(this.querySet, 0, labels.length * 2, this.resolve, 0);
    encoder.copyBufferToBuffer(this.resolve, 0, staging, 0, bytes);
    return () => {
      this.pending.push(
        staging.mapAsync(GPUMapModeFlags.READ).then(() => {
          const t = new BigUint64Array(staging.getMappedRange());
          labels.forEach((label, i) => {
            const ns = Number(t[2 * i + 1] - t[2 * i]);
            this.totals.set(label, (this.totals.get(label) ?? 0) + Math.max(0, ns));
            this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
          });
          staging.destroy();
        }),
      );
    };
  }

  /** Waits for every submitted readback. */
  async collect(): Promise<void> {
    await Promise.all(this.pending.splice(0));
  }

  reset(): void {
    this.totals.clear();
    this.counts.clear();
  }
}
