/**
 * Train-step throughput (forward + backward + clipping + AdamW) of the SFT step for the default
 * model preset and a larger one, on WebGPU, wasm and the CPU backend, in one run; and the share
 * of step time per kernel: GPU timestamp queries where the adapter has them, wall time per call
 * on wasm and the CPU (their ops run synchronously). `--model gpt-ref`: gpt-ref.ts.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import type { WebGpuOps } from '../../kernels/backends/webgpu';
import { GpuProfiler } from '../../kernels/common/profiler';
import type { Ops } from '../../kernels/ops';
import type { ModelPresetName } from '../../worker/model/config';
import { median } from '../../worker/selftest';
import { SFT_ARITH, SftRun } from '../../worker/train/sft';
import { cliBackend } from '../backend';
import { benchGptRef } from './gpt-ref';
import type { BenchArgs } from './args';

const PRESETS: ModelPresetName[] = ['small', 'medium'];

interface Row {
  preset: ModelPresetName;
  backend: 'webgpu' | 'wasm' | 'cpu';
  tokensPerStep: number;
  stepMs: number;
  tokensPerS: number;
  /** Kernel label → share of the summed kernel time of one profiled step. */
  kernelShares: Record<string, number>;
  timing: 'timestamp-query' | 'wall-clock per call';
}

/** Wraps every op of a synchronous backend (wasm, CPU) to sum wall time per op name. */
function timedSyncOps(ops: Ops, totals: Map<string, number>): Ops {
  const wrapped: Record<string, unknown> = { ...ops };
  for (const [name, fn] of Object.entries(ops)) {
    if (typeof fn !== 'function' || ['alloc', 'upload', 'read', 'flush', 'sync', 'free'].includes(name)) continue;
    wrapped[name] = (...args: unknown[]) => {
      const t0 = performance.now();
      const r = (fn as (...a: unknown[]) => unknown)(...args);
      totals.set(name, (totals.get(name) ?? 0) + (performance.now() - t0) * 1e6);
      return r;
    };
  }
  return wrapped as unknown as Ops;
}

function shares(totals: Map<string, number>): Record<string, number> {
  const sum = [...totals.values()].reduce((a, b) => a + b, 0);
  return Object.fromEntries(
    [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, sum > 0 ? v / sum : 0]),
  );
}

async function measure(preset: ModelPresetName, backend: Row['backend'], baseOps: Ops, runs: number): Promise<Row> {
  const cpuTotals = new Map<string, number>();
  const ops = backend === 'webgpu' ? baseOps : timedSyncOps(baseOps, cpuTotals);
  const run = new SftRun(ops, { ...SFT_ARITH, model: preset, evalEvery: 0, evalN: 1 });
  await run.next(); // warm-up: pipeline compilation, allocation
  const times: number[] = [];
  let tokens = 0;
  for (let i = 0; i < runs; i++) {
    const m = await run.next();
    times.push(m['perf/step_ms']);
    tokens = (m['perf/tokens_per_s'] * m['perf/step_ms']) / 1000;
  }
  let kernelShares: Record<string, number>;
  let timing: Row['timing'] = 'wall-clock per call';
  if (backend === 'webgpu') {
    const gpu = baseOps as WebGpuOps;
    if (GpuProfiler.supported(gpu.ctx)) {
      const profiler = new GpuProfiler(gpu.ctx);
      gpu.rt.profiler = profiler;
      await run.next();
      gpu.rt.profiler = null;
      await profiler.collect();
      kernelShares = shares(profiler.totals);
      timing = 'timestamp-query';
    } else kernelShares = {};
  } else {
    cpuTotals.clear();
    await run.next();
    kernelShares = shares(cpuTotals);
  }
  const stepMs = median(times);
  return { preset, backend, tokensPerStep: tokens, stepMs, tokensPerS: tokens / (stepMs / 1000), kernelShares, timing };
}

export async function benchTrain(args: BenchArgs) {
  if (args.model === 'gpt-ref') return benchGptRef(args.runs);
  const runs = args.runs ?? 3;
  const gpu = await cliBackend('webgpu').catch(() => null);
  const { ops: wasmOps } = await cliBackend('wasm');
  const rows: Row[] = [];
  for (const preset of PRESETS) {
    if (gpu) {
      process.stderr.write(`train ${preset}: webgpu\n`);
      rows.push(await measure(preset, 'webgpu', gpu.ops, runs));
    }
    process.stderr.write(`train ${preset}: wasm\n`);
    rows.push(await measure(preset, 'wasm', wasmOps, runs));
    process.stderr.write(`train ${preset}: cpu\n`);
    rows.push(await measure(preset, 'cpu', createCpuOps(), runs));
  }
  const adapter = gpu?.info.adapter
    ? `${gpu.info.adapter.vendor}/${gpu.info.adapter.architecture} ${gpu.info.adapter.description}`
    : 'no WebGPU adapter';
  const json = {
    bench: 'train',
    step: 'SFT: forward + backward + clip + AdamW',
    batch: { rows: SFT_ARITH.rows, width: SFT_ARITH.width, examples: SFT_ARITH.examples },
    runs,
    statistic: 'median step time',
    adapter,
    rows,
  };
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `train step (SFT batch ${SFT_ARITH.rows}x${SFT_ARITH.width}), median of ${runs}, ${adapter}`,
    '| preset | backend | step ms | tokens/s | top kernels (share of kernel time) |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.preset} | ${r.backend} | ${r.stepMs.toFixed(0)} | ${r.tokensPerS.toFixed(0)} | ${Object.entries(
          r.kernelShares,
        )
          .slice(0, 5)
          .map(([k, v]) => `${k} ${pct(v)}`)
          .join(', ')} (${r.timing}) |`,
    ),
  ];
  return { table: `${lines.join('\n')}\n`, json };
}
