/**
 * Matmul GFLOPS at 256, 512 and 1024 square: the straightforward and the tiled WGSL kernels on
 * WebGPU and the CPU reference, each the median of several runs ending in a readback, plus the
 * tiled/straightforward ratio measured in the same run.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import { selectBackend } from '../../kernels/backends/select';
import { nodeGpu } from '../../kernels/common/node-gpu';
import { matmulGflops } from '../../worker/selftest';
import type { BenchArgs } from './index';

const SIZES = [256, 512, 1024];

export interface MatmulRow {
  size: number;
  naive: number | null;
  tiled: number | null;
  cpu: number;
  tiledOverNaive: number | null;
}

export async function benchMatmul(args: BenchArgs) {
  const runs = args.runs ?? 3;
  const selected = await selectBackend({ gpu: await nodeGpu() }, 'webgpu');
  if (!selected.ok) throw new Error(selected.reason);
  const gpu = selected.info.backend === 'webgpu' ? selected.ops : null;
  const cpu = createCpuOps();
  const rows: MatmulRow[] = [];
  for (const size of SIZES) {
    progress(`matmul ${size}: naive`);
    const naive = gpu ? await matmulGflops(gpu, size, runs, 'naive') : null;
    progress(`matmul ${size}: tiled`);
    const tiled = gpu ? await matmulGflops(gpu, size, runs, 'tiled') : null;
    progress(`matmul ${size}: cpu reference`);
    const cpuGflops = await matmulGflops(cpu, size, runs);
    rows.push({ size, naive, tiled, cpu: cpuGflops, tiledOverNaive: naive && tiled ? tiled / naive : null });
  }
  const adapter = selected.info.adapter;
  const json = {
    bench: 'matmul',
    unit: 'GFLOPS',
    runs,
    statistic: 'median, each run ends in a readback',
    backend: selected.info.backend,
    adapter: adapter ? { vendor: adapter.vendor, architecture: adapter.architecture, description: adapter.description } : null,
    fallbackReason: selected.info.fallbackReason,
    rows,
  };
  const fmt = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  const lines = [
    `matmul GFLOPS (median of ${runs}), ${adapter ? `${adapter.vendor}/${adapter.architecture} ${adapter.description}` : `no WebGPU: ${selected.info.fallbackReason}`}`,
    '| size | webgpu naive | webgpu tiled | cpu reference | tiled / naive |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.size} | ${fmt(r.naive)} | ${fmt(r.tiled)} | ${fmt(r.cpu)} | ${r.tiledOverNaive === null ? 'n/a' : `${r.tiledOverNaive.toFixed(2)}×`} |`),
  ];
  return { table: `${lines.join('\n')}\n`, json };
}

function progress(msg: string): void {
  process.stderr.write(`${msg}\n`);
}
