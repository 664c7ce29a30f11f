/**
 * Matmul GFLOPS per shape and layout: the straightforward, tiled and register-blocked WGSL kernels
 * on WebGPU and the CPU reference, on square sizes and on the shapes the model trains on. Each
 * cell is the median of several runs of a batch of dispatches ending in a sync; the variants of a
 * shape are measured interleaved, run by run, so that their ratios share the machine's load.
 * Also prints which kernel `auto` picks (chooseMatmulVariant) beside the fastest one measured.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import { selectBackend } from '../../kernels/backends/select';
import { nodeGpu } from '../../kernels/common/node-gpu';
import { randomArray } from '../../kernels/common/random';
import type { MatmulLayout, MatmulVariant } from '../../kernels/matmul/layout';
import { chooseMatmulVariant } from '../../kernels/matmul/matmul';
import type { Ops, Tensor } from '../../kernels/ops';
import { median } from '../../worker/selftest';
import type { BenchArgs } from './args';

type Kernel = Exclude<MatmulVariant, 'auto'>;
const KERNELS: readonly Kernel[] = ['naive', 'tiled', 'register'];

interface Shape {
  M: number;
  K: number;
  N: number;
  layout: MatmulLayout;
  /** Where the shape occurs (model dims: N = 3072 tokens, C = 64, F = 176, V = 25). */
  note: string;
}

const shape = (M: number, K: number, N: number, layout: MatmulLayout, note: string): Shape => ({
  M,
  K,
  N,
  layout,
  note,
});

const SHAPES: Shape[] = [
  shape(256, 256, 256, 'nn', 'square'),
  shape(512, 512, 512, 'nn', 'square'),
  shape(1024, 1024, 1024, 'nn', 'square'),
  shape(3072, 64, 176, 'nt', 'gate/up forward'),
  shape(3072, 64, 176, 'nn', 'dh backward'),
  shape(3072, 64, 176, 'tn', 'layout check'),
  shape(3072, 176, 64, 'nt', 'down forward'),
  shape(3072, 176, 64, 'nn', 'dln2 backward'),
  shape(3072, 64, 64, 'nt', 'q/k/v/o forward'),
  shape(3072, 64, 25, 'nt', 'logits forward'),
  shape(3072, 25, 64, 'nn', 'dlnf backward'),
  shape(64, 3072, 176, 'tn', 'dWd'),
  shape(176, 3072, 64, 'tn', 'dWg, dWu'),
  shape(64, 3072, 64, 'tn', 'dWq..dWo'),
  shape(25, 3072, 64, 'tn', 'dW lm head'),
  shape(3072, 64, 1, 'nt', 'value head'),
  shape(1, 3072, 64, 'tn', 'value head dw'),
  shape(3072, 1, 64, 'nn', 'value head dlnf'),
  shape(64, 64, 64, 'nn', 'small'),
  shape(33, 20, 70, 'nn', 'small'),
  shape(16, 16, 16, 'nn', 'small'),
  shape(17, 33, 5, 'nn', 'small'),
  shape(2, 3, 2, 'nn', 'tiny'),
];

/** Target time of one timed batch, so that tiny shapes are not all dispatch overhead. */
const BATCH_MS = 150;
const MAX_BATCH = 64;

interface MatmulRow extends Shape {
  naive: number | null;
  tiled: number | null;
  register: number | null;
  cpu: number;
  auto: Kernel;
  fastest: Kernel | null;
  registerOverTiled: number | null;
  registerOverNaive: number | null;
}

export async function benchMatmul(args: BenchArgs) {
  const runs = args.runs ?? 3;
  const selected = await selectBackend({ gpu: await nodeGpu() }, 'webgpu');
  if (!selected.ok) throw new Error(selected.reason);
  const gpu = selected.info.backend === 'webgpu' ? selected.ops : null;
  const cpu = createCpuOps();
  const rows: MatmulRow[] = [];
  for (const s of SHAPES) {
    progress(`matmul ${s.M}x${s.K}x${s.N} ${s.layout}`);
    const g = gpu ? await shapeGflops(gpu, s, KERNELS, runs) : null;
    const [cpuGflops] = await shapeGflops(cpu, s, ['naive'], runs);
    const fastest = g ? KERNELS[g.indexOf(Math.max(...g))] : null;
    const [naive, tiled, register] = g ?? [null, null, null];
    rows.push({
      ...s,
      naive,
      tiled,
      register,
      cpu: cpuGflops,
      auto: chooseMatmulVariant(s.M, s.K, s.N),
      fastest,
      registerOverTiled: register && tiled ? register / tiled : null,
      registerOverNaive: register && naive ? register / naive : null,
    });
  }
  const adapter = selected.info.adapter;
  const json = {
    bench: 'matmul',
    unit: 'GFLOPS',
    runs,
    statistic: 'median over runs of a batch of dispatches ending in a sync; variants interleaved',
    backend: selected.info.backend,
    adapter: adapter
      ? { vendor: adapter.vendor, architecture: adapter.architecture, description: adapter.description }
      : null,
    fallbackReason: selected.info.fallbackReason,
    rows,
  };
  const fmt = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  const ratio = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(2)}×`);
  const lines = [
    `matmul GFLOPS (median of ${runs}), ${adapter ? `${adapter.vendor}/${adapter.architecture} ${adapter.description}` : `no WebGPU: ${selected.info.fallbackReason}`}`,
    '| M×K×N | layout | use | naive | tiled | register | cpu ref | register / tiled | register / naive | fastest | auto |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows
      .map((r) =>
        [
          `${r.M}×${r.K}×${r.N}`,
          r.layout,
          r.note,
          fmt(r.naive),
          fmt(r.tiled),
          fmt(r.register),
          fmt(r.cpu),
          ratio(r.registerOverTiled),
          ratio(r.registerOverNaive),
          r.fastest ?? 'n/a',
          r.auto,
        ].join(' | '),
      )
      .map((l) => `| ${l} |`),
  ];
  return { table: `${lines.join('\n')}\n`, json };
}

/** GFLOPS (2·M·K·N flops per call) of each variant on one shape, runs interleaved. */
async function shapeGflops(ops: Ops, s: Shape, variants: readonly Kernel[], runs: number): Promise<number[]> {
  const { M, K, N, layout } = s;
  const a = ops.alloc('bench.a', M * K);
  const b = ops.alloc('bench.b', K * N);
  const out = ops.alloc('bench.out', M * N);
  ops.upload(a, randomArray(M * K, 1));
  ops.upload(b, randomArray(K * N, 2));
  const batch = async (variant: Kernel, reps: number): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) ops.matmul(out, a, b, M, K, N, layout, { variant });
    await ops.sync();
    return (performance.now() - t0) / reps;
  };
  const reps: number[] = [];
  for (const v of variants) {
    await batch(v, 1); // warm-up: pipeline compilation
    reps.push(Math.max(1, Math.min(MAX_BATCH, Math.round(BATCH_MS / Math.max(await batch(v, 1), 1e-3)))));
  }
  const times: number[][] = variants.map(() => []);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < variants.length; i++) times[i].push(await batch(variants[i], reps[i]));
  }
  for (const t of [a, b, out] as Tensor[]) ops.free(t);
  return times.map((t) => (2 * M * K * N) / (median(t) / 1000) / 1e9);
}

function progress(msg: string): void {
  process.stderr.write(`${msg}\n`);
}
