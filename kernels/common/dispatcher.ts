/**
 * Records compute dispatches into one command encoder and submits them in one go (one encoder and
 * one submit per phase, docs/design.md "Conventions"). Each dispatch's uniform parameters take a slot of a
 * uniform buffer (aligned to minUniformBufferOffsetAlignment); the slots are written with one
 * `writeBuffer` per chunk just before the submit and reused after it (queue order makes that safe).
 */
import type { GpuContext } from './context';
import { assertAlive, isSoftwareSummary } from './context';
import type { PipelineSpec } from './pipelines';
import { PipelineCache } from './pipelines';
import type { GpuProfiler } from './profiler';
import type { GpuTensor } from './tensor';
import { GPUBufferUsageFlags, GPUMapModeFlags, bindingBytes, roundUp } from './tensor';

/** Elements to copy and where: offsets and count in elements. */
export interface CopyRange {
  dstOffset: number;
  srcOffset: number;
  count: number;
}

/** The whole tensor when `range` is absent; throws when a range runs outside either tensor. */
export function checkCopyRange(
  src: { length: number; label: string },
  dst: { length: number; label: string },
  range?: CopyRange,
): CopyRange {
  if (!range) {
    if (src.length !== dst.length)
      throw new Error(`copy '${src.label}' -> '${dst.label}': lengths differ (${src.length} vs ${dst.length})`);
    return { dstOffset: 0, srcOffset: 0, count: src.length };
  }
  const { dstOffset, srcOffset, count } = range;
  for (const [k, v] of Object.entries(range)) {
    if (!Number.isInteger(v) || v < 0)
      throw new Error(`copy '${src.label}' -> '${dst.label}': ${k} must be a non-negative integer, got ${v}`);
  }
  if (srcOffset + count > src.length || dstOffset + count > dst.length) {
    throw new Error(
      `copy '${src.label}'[${srcOffset}..${srcOffset + count}) -> ` +
        `'${dst.label}'[${dstOffset}..${dstOffset + count}): outside the tensors (lengths ${src.length}, ${dst.length})`,
    );
  }
  return range;
}

const SLOTS_PER_CHUNK = 256;
const MAX_PARAM_BYTES = 256;

interface UniformChunk {
  buffer: GPUBuffer;
  data: Uint8Array;
}

export class Dispatcher {
  readonly pipelines: PipelineCache;
  private encoder: GPUCommandEncoder | null = null;
  private readonly chunks: UniformChunk[] = [];
  private slot = 0;
  private readonly slotBytes: number;
  /** Dispatches recorded since creation (for tests and benches). */
  dispatchCount = 0;
  /** When set, every compute pass is timed (benchmarks only). */
  profiler: GpuProfiler | null = null;

  private useSubgroups: boolean;

  constructor(readonly ctx: GpuContext) {
    this.pipelines = new PipelineCache(ctx);
    // Off by default on a software adapter: there (SwiftShader, 2 cores) the barrier-free kernels
    // measured faster (rmsnorm 3-9×, the wide log-prob about the same as its tree).
    this.useSubgroups = ctx.adapter.features.includes('subgroups') && !isSoftwareSummary(ctx.adapter);
    this.slotBytes = Math.max(MAX_PARAM_BYTES, ctx.adapter.limits.minUniformBufferOffsetAlignment ?? 256);
  }

  /**
   * Whether the kernels pick their subgroup variants (subgroupAdd / subgroupMax reductions): true
   * where the device has the `subgroups` feature and is not a software adapter. Tests and benches
   * set it to run either variant on one device; it cannot be turned on without the feature.
   */
  get subgroups(): boolean {
    return this.useSubgroups;
  }

  set subgroups(on: boolean) {
    if (on && !this.ctx.adapter.features.includes('subgroups'))
      throw new Error(
        `subgroups: the device lacks the 'subgroups' feature (it has ${this.ctx.adapter.features.join(', ')})`,
      );
    this.useSubgroups = on;
  }

  /**
   * Records one dispatch. `params` is the shader's uniform struct (binding 0); `tensors` are bound
   * in order from binding 1 (read-only inputs first, outputs last, as in the WGSL header).
   */
  dispatch(
    spec: PipelineSpec,
    params: Uint32Array | Float32Array | ArrayBuffer,
    tensors: readonly GpuTensor[],
    workgroups: readonly [number, number?, number?],
  ): void {
    assertAlive(this.ctx);
    const maxGroups = this.ctx.adapter.limits.maxComputeWorkgroupsPerDimension ?? 65535;
    for (const w of workgroups) {
      if (w !== undefined && (!Number.isInteger(w) || w < 0 || w > maxGroups)) {
        throw new Error(
          `dispatch '${spec.label}': workgroup count ${w} outside 0..${maxGroups}; the problem is too large for one dispatch`,
        );
      }
    }
    const pipeline = this.pipelines.get(spec);
    const uniform = this.writeParams(params);
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: uniform }];
    tensors.forEach((t, i) =>
      entries.push({ binding: i + 1, resource: { buffer: t.buffer, offset: t.offset, size: bindingBytes(t.length) } }),
    );
    const bindGroup = this.ctx.device.createBindGroup({
      label: spec.label,
      layout: pipeline.getBindGroupLayout(0),
      entries,
    });
    const timestampWrites = this.profiler?.passWrites(spec.label);
    const pass = this.getEncoder().beginComputePass(
      timestampWrites ? { label: spec.label, timestampWrites } : { label: spec.label },
    );
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(workgroups[0], workgroups[1] ?? 1, workgroups[2] ?? 1);
    pass.end();
    this.dispatchCount++;
  }

  /** Records a buffer-to-buffer copy in order with the dispatches. */
  copy(src: GpuTensor, dst: GpuTensor, range?: CopyRange): void {
    const r = checkCopyRange(src, dst, range);
    if (r.count === 0) return;
    this.getEncoder().copyBufferToBuffer(
      src.buffer,
      src.offset + r.srcOffset * 4,
      dst.buffer,
      dst.offset + r.dstOffset * 4,
      r.count * 4,
    );
  }

  /** Records a fill with zeros, in order with the dispatches. */
  clear(t: GpuTensor): void {
    if (t.length > 0) this.getEncoder().clearBuffer(t.buffer, t.offset, t.length * 4);
  }

  /** Submits everything recorded so far. Throws a `ShaderCompileError` before submitting bad work. */
  async flush(): Promise<void> {
    await this.pipelines.check();
    this.submitRecorded();
  }

  /** Flushes, copies `t` to a mappable buffer and returns its values; rejects if the device is lost. */
  async read(t: GpuTensor): Promise<Float32Array> {
    await this.pipelines.check();
    const bytes = Math.max(4, t.length * 4);
    const staging = this.ctx.device.createBuffer({
      label: `${t.label}:readback`,
      size: roundUp(bytes, 4),
      usage: GPUBufferUsageFlags.MAP_READ | GPUBufferUsageFlags.COPY_DST,
    });
    if (t.length > 0) this.getEncoder().copyBufferToBuffer(t.buffer, t.offset, staging, 0, t.length * 4);
    this.submitRecorded();
    try {
      await Promise.race([staging.mapAsync(GPUMapModeFlags.READ), this.ctx.lostPromise.then((e) => Promise.reject(e))]);
      return new Float32Array(staging.getMappedRange().slice(0, t.length * 4));
    } finally {
      if (!this.ctx.lost) staging.destroy();
    }
  }

  /** Waits until the queue has finished all submitted work (or the device is lost). */
  async sync(): Promise<void> {
    await this.flush();
    await Promise.race([
      this.ctx.device.queue.onSubmittedWorkDone(),
      this.ctx.lostPromise.then((e) => Promise.reject(e)),
    ]);
  }

  private getEncoder(): GPUCommandEncoder {
    assertAlive(this.ctx);
    this.encoder ??= this.ctx.device.createCommandEncoder({ label: 'dewpoint' });
    return this.encoder;
  }

  private submitRecorded(): void {
    assertAlive(this.ctx);
    const used = this.slot;
    for (let c = 0; c * SLOTS_PER_CHUNK < used; c++) {
      const n = Math.min(SLOTS_PER_CHUNK, used - c * SLOTS_PER_CHUNK);
      const chunk = this.chunks[c];
      this.ctx.device.queue.writeBuffer(chunk.buffer, 0, chunk.data.buffer, 0, n * this.slotBytes);
    }
    this.slot = 0;
    if (this.encoder) {
      const afterSubmit = this.profiler?.beforeSubmit(this.encoder);
      this.ctx.device.queue.submit([this.encoder.finish()]);
      this.encoder = null;
      afterSubmit?.();
    }
  }

  private writeParams(params: Uint32Array | Float32Array | ArrayBuffer): GPUBufferBinding {
    const bytes =
      params instanceof ArrayBuffer
        ? new Uint8Array(params)
        : new Uint8Array(params.buffer, params.byteOffset, params.byteLength);
    if (bytes.byteLength === 0 || bytes.byteLength > MAX_PARAM_BYTES || bytes.byteLength % 4 !== 0) {
      throw new Error(`uniform params must be 4..${MAX_PARAM_BYTES} bytes in multiples of 4, got ${bytes.byteLength}`);
    }
    const c = Math.floor(this.slot / SLOTS_PER_CHUNK);
    if (c === this.chunks.length) {
      this.chunks.push({
        buffer: this.ctx.device.createBuffer({
          label: `uniforms#${c}`,
          size: SLOTS_PER_CHUNK * this.slotBytes,
          usage: GPUBufferUsageFlags.UNIFORM | GPUBufferUsageFlags.COPY_DST,
        }),
        data: new Uint8Array(SLOTS_PER_CHUNK * this.slotBytes),
      });
    }
    const chunk = this.chunks[c];
    const offset = (this.slot % SLOTS_PER_CHUNK) * this.slotBytes;
    chunk.data.set(bytes, offset);
    this.slot++;
    // Uniform bindings need a size that is a multiple of 16 for WGSL struct layout.
    return { buffer: chunk.buffer, offset, size: roundUp(bytes.byteLength, 16) };
  }
}
