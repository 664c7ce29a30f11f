/**
 * Seconds per `grpo-arith` step (16 prompts × 8 samples from arith-base, one optimizer step) and
 * its split into sampling and training (the update's forward, backward, clipping and AdamW), for
 * every backend this machine has, in one run. Each backend runs the same seeded steps 1..1+runs
 * (step 1 is the warm-up: allocation, pipeline compilation); the table gives the median of steps
 * 2.., and checks that every backend drew the same rewards and losses as the CPU references.
 * `--threads 1,2,auto` runs wasm at each of those thread counts (auto: this machine's cores, the
 * backend `--backend wasm` gets) in the same run, and compares auto with the best fixed count.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { Ops } from '../../kernels/ops';
import type { WasmOps } from '../../kernels/backends/wasm';
import { importCheckpoint } from '../../worker/model/checkpoint';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { median } from '../../worker/selftest';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import { cliBackend, describeBackend } from '../backend';
import type { BenchArgs } from './args';
import { benchGrpoModel } from './grpo-model';

interface Row {
  backend: string;
  /**
   * wasm: the ops that could split across threads in the timed steps, how many did, and the
   * multiply-adds a thread's part needed at the end (WasmOps.splitStats, SplitTuner).
   */
  splitOps: { ops: number; split: number; minWork: number } | null;
  firstStepS: number;
  stepS: number;
  sampleS: number;
  trainS: number;
  /** reward/mean and loss/total of every step, in order. */
  rewards: number[];
  losses: number[];
}

async function measure(label: string, ops: Ops, steps: number): Promise<Row> {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const run = new GrpoRun(ops, { ...GRPO_ARITH, evalEvery: 0 }, base);
  const m: Record<string, number>[] = [];
  const stats = (ops as Partial<WasmOps>).splitStats;
  let before = { ops: 0, split: 0, minWork: 0 };
  for (let s = 0; s <= steps; s++) {
    process.stderr.write(`grpo ${label}: step ${s + 1}/${steps + 1}\r`);
    m.push((await run.next()).metrics);
    if (s === 0 && stats) before = stats();
  }
  const after = stats?.();
  process.stderr.write('\n');
  const timed = m.slice(1);
  const med = (k: string) => median(timed.map((x) => x[k])) / 1000;
  return {
    backend: label,
    splitOps: after ? { ops: after.ops - before.ops, split: after.split - before.split, minWork: after.minWork } : null,
    firstStepS: m[0]['perf/step_ms'] / 1000,
    stepS: med('perf/step_ms'),
    sampleS: med('perf/sample_ms'),
    trainS: med('perf/train_ms'),
    rewards: m.map((x) => x['reward/mean']),
    losses: m.map((x) => x['loss/total']),
  };
}

/** 'split / splittable (threshold)' of a wasm row, '—' elsewhere; the threshold in Mi multiply-adds a thread. */
function splitCell(o: Row['splitOps']): string {
  return o ? `${o.split} / ${o.ops} (${(o.minWork / 2 ** 20).toFixed(0)} Mi)` : '—';
}

export async function benchGrpo(args: BenchArgs) {
  if (args.model !== null) return benchGrpoModel({ ...args, model: args.model });
  const steps = args.runs ?? 3;
  const rows: Row[] = [];
  const wasm = await cliBackend('wasm');
  const threads = wasm.info.threads;
  const simd = wasm.info.simd === 'relaxed' ? ', relaxed SIMD' : '';
  type Maker = [string, () => Promise<Ops | null>];
  const counts = args.threads ?? ['auto', ...(threads > 1 ? [1] : [])];
  const wasmRow = (n: number | 'auto'): Maker =>
    n === 'auto'
      ? [`wasm × ${threads} threads (auto)${simd}`, async () => wasm.ops]
      : [`wasm × ${n} thread${n === 1 ? '' : 's'}${simd}`, () => nodeWasmOps(n)];
  const backends: Maker[] = [
    ...counts.map(wasmRow),
    // The same threads on the plain build: what the fused multiply-adds are worth (by default only).
    ...(simd && !args.threads
      ? [[`wasm × ${threads} threads, plain SIMD`, () => nodeWasmOps(threads, 'plain')] as Maker]
      : []),
    [
      'webgpu',
      async () =>
        cliBackend('webgpu').then(
          (b) => b.ops,
          () => null,
        ),
    ],
    ['cpu', async () => createCpuOps()],
  ];
  let adapter = 'no WebGPU adapter';
  for (const [name, make] of backends) {
    const ops = await make();
    if (!ops) continue;
    if (name === 'webgpu') adapter = describeBackend((await cliBackend('webgpu')).info);
    rows.push(await measure(name, ops, steps));
    if (ops !== wasm.ops) (ops as Partial<{ close(): void }>).close?.();
  }
  (wasm.ops as Partial<{ close(): void }>).close?.();
  const cpu = rows.find((r) => r.backend === 'cpu')!;
  const agreement = rows.map((r) => ({
    backend: r.backend,
    sameRewards: r.rewards.every((x, i) => x === cpu.rewards[i]),
    maxLossDiff: Math.max(...r.losses.map((x, i) => Math.abs(x - cpu.losses[i]))),
  }));
  // auto against the best fixed thread count measured beside it (when --threads asked for both).
  const auto = rows.find((r) => r.backend.includes('(auto)'));
  const fixed = rows.filter((r) => /^wasm × \d+ threads?(, relaxed SIMD)?$/.test(r.backend));
  const best = fixed.length ? fixed.reduce((a, b) => (b.stepS < a.stepS ? b : a)) : null;
  const threadChoice =
    auto && best ? { auto: auto.backend, bestFixed: best.backend, autoOverBestFixed: auto.stepS / best.stepS } : null;
  const json = {
    bench: 'grpo',
    preset: 'grpo-arith',
    batch: `${GRPO_ARITH.prompts} prompts x ${GRPO_ARITH.group} samples`,
    steps: steps + 1,
    statistic: `median of steps 2..${steps + 1}`,
    adapter,
    split: wasm.info.split,
    rows,
    threadChoice,
    agreement,
    speedupVsCpu: Object.fromEntries(rows.map((r) => [r.backend, cpu.stepS / r.stepS])),
  };
  const s = (x: number) => x.toFixed(3);
  const table = [
    `grpo-arith step (${json.batch}), ${json.statistic}; webgpu: ${adapter}; wasm: ${wasm.info.split}` +
      (threadChoice
        ? `; auto / best fixed (${threadChoice.bestFixed}): ${threadChoice.autoOverBestFixed.toFixed(3)}`
        : ''),
    '| backend | s/step | sample s | train s | first step s | × cpu | same rewards as cpu | max |Δ loss| | ops split / splittable (threshold at the end) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r, i) =>
        `| ${r.backend} | ${s(r.stepS)} | ${s(r.sampleS)} | ${s(r.trainS)} | ${s(r.firstStepS)} | ` +
        `${(cpu.stepS / r.stepS).toFixed(1)} | ${agreement[i].sameRewards ? 'yes' : 'no'} | ` +
        `${agreement[i].maxLossDiff.toExponential(1)} | ${splitCell(r.splitOps)} |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
