/**
 * Compute pipeline cache. A shader's `#include` lines are resolved first (wgsl-include.ts; an
 * unknown include or a cycle throws at once). Every shader module and pipeline is created under a
 * validation error scope; a failure is reported as a `ShaderCompileError` carrying the shader's
 * label and its `getCompilationInfo()` messages (file:line:column, in the included file where the
 * line came from one). Creation is synchronous so that ops can be encoded without awaiting; the
 * verdict is collected by `check()` (awaited before every submit in the WebGPU backend) or by
 * `compile()` for eager use.
 */
import type { GpuContext } from './context';
import { GpuError } from './errors';
import { resolveIncludes } from './wgsl-include';

export interface PipelineSpec {
  /** Shader label, e.g. `matmul_tiled`: names the module, the pipeline and any error. */
  label: string;
  /** WGSL source; its `#include "dir/name_lib.wgsl"` lines are resolved by wgsl-include.ts. */
  code: string;
  /** Entry point; defaults to `label`'s file name convention (entry point == file name). */
  entryPoint?: string;
  /** Values for the shader's `override` constants. */
  constants?: Record<string, number>;
}

interface Entry {
  pipeline: GPUComputePipeline;
  verdict: Promise<GpuError | null>;
}

export class PipelineCache {
  private readonly entries = new Map<string, Entry>();
  private readonly unchecked = new Set<Promise<GpuError | null>>();

  constructor(private readonly ctx: GpuContext) {}

  /** Number of distinct pipelines created so far. */
  get size(): number {
    return this.entries.size;
  }

  /** The pipeline for a spec, created on first use. */
  get(spec: PipelineSpec): GPUComputePipeline {
    const key = cacheKey(spec);
    const hit = this.entries.get(key);
    if (hit) return hit.pipeline;
    const { device } = this.ctx;
    const entryPoint = spec.entryPoint ?? spec.label;
    const shader = resolveIncludes(spec.label, spec.code);
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: spec.label, code: shader.code });
    const pipeline = device.createComputePipeline({
      label: pipelineLabel(spec),
      layout: 'auto',
      compute: { module, entryPoint, constants: spec.constants ?? {} },
    });
    const verdict = device.popErrorScope().then(async (err) => {
      if (!err) return null;
      const info = await module.getCompilationInfo();
      const lines = info.messages.map((m) => {
        const from = shader.lines[m.lineNum - 1] ?? { file: `${spec.label}.wgsl`, line: m.lineNum };
        return `  ${from.file}:${from.line}:${m.linePos} ${m.type}: ${m.message}`;
      });
      return new GpuError(
        'ShaderCompileError',
        `shader '${spec.label}' (entry point '${entryPoint}') failed to compile: ${err.message}` +
          (lines.length ? `\n${lines.join('\n')}` : ''),
      );
    });
    this.entries.set(key, { pipeline, verdict });
    this.unchecked.add(verdict);
    return pipeline;
  }

  /** Creates the pipeline and waits for its verdict; throws `ShaderCompileError` on failure. */
  async compile(spec: PipelineSpec): Promise<GPUComputePipeline> {
    const pipeline = this.get(spec);
    const error = await this.entries.get(cacheKey(spec))!.verdict;
    if (error) throw error;
    return pipeline;
  }

  /** Waits for the verdicts of pipelines created since the last check; throws the first error. */
  async check(): Promise<void> {
    if (this.unchecked.size === 0) return;
    const pending = [...this.unchecked];
    this.unchecked.clear();
    for (const error of await Promise.all(pending)) if (error) throw error;
  }
}

function pipelineLabel(spec: PipelineSpec): string {
  const c = spec.constants;
  if (!c || Object.keys(c).length === 0) return spec.label;
  return `${spec.label}{${Object.entries(c)
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;
}

function cacheKey(spec: PipelineSpec): string {
  return `${pipelineLabel(spec)}@${spec.entryPoint ?? ''}#${spec.code.length}:${hashCode(spec.code)}`;
}

function hashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}
