/**
 * `npm run bench:gpu` (`dewpoint bench gpu --json [--quick]`): the WebGPU path on whatever adapter
 * Dawn finds, in one JSON object, for a machine with a real GPU:
 * - the adapter (vendor, architecture, description, features) and which optional kernels run:
 *   subgroup reductions (the dispatcher's choice), f16 operands natively or as packed words;
 * - matmul GFLOPS at square sizes: f32 (the register-tiled and the shared-memory tiled kernels)
 *   and f16 operands with f32 accumulation (matmul-f16.ts: packed words everywhere, native f16
 *   where the device has `shader-f16`), each against the adapter's published peak where the table
 *   below knows it (null and "unknown" otherwise);
 * - a GRPO step of the SmolLM-135M shape (125M parameters tied; grpo-model.ts's step: 8 prompts ×
 *   4 samples, 64 new ids, random weights) on WebGPU: s/step split into sampling, training and the
 *   rest, and the GPU time per kernel of one more step (timestamp queries, where the device has them).
 * `--quick` shrinks everything (two layers of that shape, 2 prompts × 2 samples, 8 new ids, smaller
 * matmuls) so that a software adapter (SwiftShader) finishes in a couple of minutes: it checks the
 * script, not the GPU. Timings are medians of `--runs` (default 3; 1 with `--quick`); a software
 * adapter's drift 2× between runs.
 */
import { selectBackend } from '../../kernels/backends/select';
import type { WebGpuOps } from '../../kernels/backends/webgpu';
import { nodeGpu } from '../../kernels/common/node-gpu';
import { GpuProfiler } from '../../kernels/common/profiler';
import { randomArray } from '../../kernels/common/random';
import type { GpuTensor } from '../../kernels/common/tensor';
import { createTensor, uploadTensor } from '../../kernels/common/tensor';
import { packF16 } from '../../kernels/f16/f16.ref';
import { matmulF16 } from '../../kernels/matmul/matmul-f16';
import { matmul } from '../../kernels/matmul/matmul';
import type { ModelConfig } from '../../worker/model/config';
import { median } from '../../worker/selftest';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import type { BenchArgs } from './args';
import { MODEL_SHAPES, STEP, matmulParams, randomBase } from './grpo-model';

/**
 * Published peaks in TFLOPS of the vector units (not tensor cores: WGSL reaches none), from the
 * vendors' datasheets (NVIDIA's H100 and A100 whitepapers, the L4 and RTX 4090 datasheets); the
 * first pattern matching the adapter's description wins. f16 is the non-tensor FP16 rate.
 */
const PEAKS: { match: RegExp; name: string; f32: number; f16: number }[] = [
  { match: /H100.*PCIe/i, name: 'NVIDIA H100 PCIe', f32: 51.2, f16: 102.4 },
  { match: /H100|H200|GH200/i, name: 'NVIDIA H100/H200 SXM', f32: 66.9, f16: 133.8 },
  { match: /A100/i, name: 'NVIDIA A100', f32: 19.5, f16: 78 },
  { match: /\bL4\b/i, name: 'NVIDIA L4', f32: 30.3, f16: 30.3 },
  { match: /RTX 4090/i, name: 'NVIDIA GeForce RTX 4090', f32: 82.6, f16: 82.6 },
];

export function publishedPeak(description: string): { name: string; f32: number; f16: number } | null {
  const hit = PEAKS.find((p) => p.match.test(description));
  return hit ? { name: hit.name, f32: hit.f32, f16: hit.f16 } : null;
}

/** Target time of one timed batch of dispatches. */
const BATCH_MS = 200;
const MAX_BATCH = 64;

/** Median ms per call of `fn` over `runs` batches (sized to BATCH_MS), after a warm-up call. */
async function msPerCall(gpu: WebGpuOps, fn: () => void, runs: number): Promise<number> {
  const batch = async (reps: number) => {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    await gpu.rt.sync();
    return (performance.now() - t0) / reps;
  };
  await batch(1);
  const reps = Math.max(1, Math.min(MAX_BATCH, Math.round(BATCH_MS / Math.max(await batch(1), 1e-3))));
  const times: number[] = [];
  for (let r = 0; r < runs; r++) times.push(await batch(reps));
  return median(times);
}

async function matmulRows(gpu: WebGpuOps, sizes: number[], runs: number, peak: ReturnType<typeof publishedPeak>) {
  const { ctx, rt } = gpu;
  const hasF16 = ctx.adapter.features.includes('shader-f16');
  const rows = [];
  for (const n of sizes) {
    process.stderr.write(`bench gpu: matmul ${n}³\n`);
    const made: GpuTensor[] = [];
    const tensor = (label: string, data: ArrayLike<number>) => {
      const t = createTensor(ctx, label, data.length);
      uploadTensor(ctx, t, data);
      made.push(t);
      return t;
    };
    const [a, b] = [randomArray(n * n, 1), randomArray(n * n, 2)];
    const [a32, b32, a16, b16] = [tensor('a', a), tensor('b', b), tensor('a16', packF16(a)), tensor('b16', packF16(b))];
    const out = tensor('out', new Float32Array(n * n));
    const kernels: [string, 'f32' | 'f16', () => void][] = [
      ['f32 register', 'f32', () => matmul(rt, out, a32, b32, n, n, n, 'nn', false, 'register')],
      ['f32 tiled', 'f32', () => matmul(rt, out, a32, b32, n, n, n, 'nn', false, 'tiled')],
      ['f16 packed', 'f16', () => matmulF16(rt, out, a16, b16, n, n, n, 'nn', false, 'packed')],
    ];
    if (hasF16) kernels.push(['f16 native', 'f16', () => matmulF16(rt, out, a16, b16, n, n, n, 'nn', false, 'native')]);
    for (const [kernel, precision, fn] of kernels) {
      const gflops = (2 * n ** 3) / (await msPerCall(gpu, fn, runs)) / 1e6;
      const of = peak ? peak[precision] * 1000 : null;
      rows.push({ size: n, kernel, gflops, peakGflops: of, ofPeak: of ? gflops / of : null });
    }
    for (const t of made) t.buffer.destroy();
  }
  return rows;
}

/** The step's shape: SmolLM-135M's, or two of its layers with a smaller batch (`--quick`). */
function stepShape(quick: boolean): {
  config: ModelConfig;
  name: string;
  maxNew: number;
  prompts: number;
  group: number;
} {
  const { config, maxNew } = MODEL_SHAPES['smollm-135m-shape'];
  if (!quick) return { config, name: 'smollm-135m-shape', maxNew, prompts: STEP.prompts ?? 8, group: STEP.group ?? 4 };
  return {
    config: { ...config, layers: 2 },
    name: 'smollm-135m-shape, 2 layers (--quick)',
    maxNew: 8,
    prompts: 2,
    group: 2,
  };
}

async function grpoStep(gpu: WebGpuOps, quick: boolean, runs: number) {
  const s = stepShape(quick);
  const base = await randomBase(s.config, s.name);
  const steps = runs + 2; // a warm-up step, `runs` timed ones, one profiled
  const run = new GrpoRun(
    gpu,
    { ...GRPO_ARITH, ...STEP, prompts: s.prompts, group: s.group, maxNew: s.maxNew, steps },
    base,
  );
  const timed: Record<string, number>[] = [];
  const profiler = GpuProfiler.supported(gpu.ctx) ? new GpuProfiler(gpu.ctx) : null;
  let ids = 0;
  let dispatches = 0;
  try {
    for (let i = 0; i < steps; i++) {
      process.stderr.write(`bench gpu: GRPO step ${i + 1}/${steps}${i === steps - 1 ? ' (profiled)' : ''}\n`);
      const profiled = i === steps - 1 && profiler !== null;
      if (profiled) {
        gpu.rt.profiler = profiler;
        dispatches = gpu.rt.dispatchCount;
      }
      const step = await run.next();
      if (profiled) {
        await gpu.rt.sync();
        await profiler.collect();
        gpu.rt.profiler = null;
        dispatches = gpu.rt.dispatchCount - dispatches;
      }
      if (i > 0 && i <= runs) timed.push(step.metrics);
      ids = step.generated.reduce((n, g) => n + g.sampledIds.length + g.promptIds.length, 0);
    }
  } finally {
    gpu.rt.profiler = null;
    run.close();
  }
  const med = (k: string) => median(timed.map((m) => m[k])) / 1000;
  const [stepS, sampleS, trainS] = [med('perf/step_ms'), med('perf/sample_ms'), med('perf/train_ms')];
  const kernels = profiler
    ? [...profiler.totals.entries()]
        .sort((x, y) => y[1] - x[1])
        .map(([label, ns]) => ({ label, ms: ns / 1e6, passes: profiler.counts.get(label) ?? 0 }))
    : null;
  const gpuMs = kernels?.reduce((t, k) => t + k.ms, 0) ?? null;
  return {
    model: s.name,
    config: s.config,
    matmulParams: matmulParams(s.config),
    batch: `${s.prompts} prompts x ${s.group} samples, ${s.maxNew} new ids`,
    statistic: `median of ${runs} steps after a warm-up`,
    stepS,
    sampleS,
    trainS,
    otherS: stepS - sampleS - trainS,
    idsPerStep: ids,
    trainGflops: (6 * matmulParams(s.config) * ids) / trainS / 1e9,
    profiledStep: kernels
      ? {
          gpuKernelMs: gpuMs,
          // The profiler times at most 2047 passes per submit: fewer timed than dispatched means a part is missing.
          dispatches,
          timedPasses: kernels.reduce((n, k) => n + k.passes, 0),
          kernels: kernels.slice(0, 15),
        }
      : 'the device lacks timestamp-query: no per-kernel split',
  };
}

export async function benchGpu(args: BenchArgs) {
  const runs = args.runs ?? (args.quick ? 1 : 3);
  const selected = await selectBackend({ gpu: await nodeGpu() }, 'webgpu');
  if (!selected.ok || selected.info.backend !== 'webgpu')
    throw new Error(`bench gpu: no WebGPU adapter: ${selected.ok ? selected.info.reason : selected.reason}`);
  const gpu = selected.ops as WebGpuOps;
  const a = gpu.ctx.adapter;
  const peak = publishedPeak(a.description);
  const sizes = args.quick ? [128, 256] : [1024, 2048, 4096];
  const matmuls = await matmulRows(gpu, sizes, runs, peak);
  const grpo = await grpoStep(gpu, args.quick, runs);
  const json = {
    bench: 'gpu',
    quick: args.quick,
    adapter: {
      vendor: a.vendor,
      architecture: a.architecture,
      device: a.device,
      description: a.description,
      isFallbackAdapter: a.isFallbackAdapter,
      features: a.features,
    },
    kernels: {
      subgroupReductions: gpu.rt.subgroups,
      f16Matmul: a.features.includes('shader-f16') ? 'native (shader-f16)' : 'packed words (no shader-f16)',
    },
    peak: peak ? { ...peak, unit: 'TFLOPS', source: 'vendor datasheet, vector units (no tensor cores)' } : 'unknown',
    matmul: { unit: 'GFLOPS', statistic: `median of ${runs} batches`, rows: matmuls },
    grpo,
  };
  const table = `${JSON.stringify(json, null, 2)}\n`;
  return { table, json };
}
