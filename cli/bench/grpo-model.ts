/**
 * `bench grpo --model 30m-shape|smollm-135m-shape|smollm-360m-shape|DIR [--lora]`: a GRPO step of a
 * model of real size, the measurement issue 25's targets are read against. 8 prompts × 4 samples of
 * the arithmetic task, 32 new ids (64 for the SmolLM shapes, as the PyTorch figures), one optimizer
 * step, full fine-tuning and LoRA (rank 16, alpha 32, every projection, the base held in bf16:
 * BENCH_LORA), or LoRA alone with `--lora`, on wasm × this machine's threads and on
 * WebGPU where a hardware adapter answers (a software one, SwiftShader, is left out: it measures
 * the CPU again, slowly). A shape is random weights of that shape (params.ts `initialWeights`)
 * written as a Hugging Face folder with the Llama 2 tokenizer (32000 pieces, node-fixture.ts) and
 * loaded through the folder loader, as a person's folder is; DIR is a person's folder.
 *
 * Per backend: the median s/step of steps 2.. and its split (sampling, training), the wasm heap's
 * peak beside what the memory plan (hf/memory.ts `wasmStepPlan`) predicted for the step, and
 * effective GFLOPS: 2·N·sampled ids for sampling (the prefill's time counted against it) and
 * 6·N·ids for training (forward and backward of every id), N the matmul parameters (the layers'
 * projections and the LM head; attention's score products left out); beside them the
 * GFLOPS of a decoding step's matmuls alone at 32 rows, which sampling is read against; and the
 * draw alone at 32 rows of the vocabulary: `Ops.sample` on wasm against its reference in JavaScript
 * (kernels/sample/sample.ref.ts, the draw before the op) on the same logits. After the rows,
 * PyTorch's same step on the same CPU with wasm's thread count (torch-peer.ts, when
 * `/usr/bin/python3` imports torch) and each row's time over it: both sides of the ratio from one run.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import { sampleRef } from '../../kernels/sample/sample.ref';
import { checkpointFromHf } from '../../worker/model/checkpoint';
import type { LoadedCheckpoint } from '../../worker/model/checkpoint';
import type { ModelConfig } from '../../worker/model/config';
import { kvDim } from '../../worker/model/config';
import { initialWeights } from '../../worker/model/params';
import { loadHfFolder } from '../../worker/hf/folder';
import { loadCheckpointDir } from '../../worker/hf/node-hf-dir';
import { llamaTokenizerFiles } from '../../worker/hf/node-fixture';
import { writeHfFolder } from '../../worker/hf/write';
import { median } from '../../worker/selftest';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import type { GrpoRunOptions } from '../../worker/contract/options';
import { loraFromOptions } from '../../worker/model/lora';
import { wasmStepPlan } from '../../worker/hf/memory';
import type { WasmOps } from '../../kernels/backends/wasm';
import { cliBackend, describeBackend } from '../backend';
import { torchPeer } from './torch-peer';
import type { BenchArgs } from './args';

const shape = (c: Omit<ModelConfig, 'ropeTheta' | 'normEps' | 'tiedEmbeddings' | 'maxSeq'>): ModelConfig => ({
  ...c,
  maxSeq: 2048,
  tiedEmbeddings: true,
  ropeTheta: 10000,
  normEps: 1e-5,
});

/**
 * The shapes of issue 25's PyTorch figures, with their new ids: a 31M Llama (32) and SmolLM-135M's
 * (64; 125M parameters tied); and SmolLM-360M's (64; 362M parameters tied), issue 38's model in a tab.
 */
export const MODEL_SHAPES: Record<string, { config: ModelConfig; maxNew: number }> = {
  '30m-shape': {
    config: shape({ layers: 12, dModel: 384, heads: 6, kvHeads: 2, ffn: 1024, vocab: 32000 }),
    maxNew: 32,
  },
  'smollm-135m-shape': {
    config: shape({ layers: 30, dModel: 576, heads: 9, kvHeads: 3, ffn: 1536, vocab: 49152 }),
    maxNew: 64,
  },
  'smollm-360m-shape': {
    config: shape({ layers: 32, dModel: 960, heads: 15, kvHeads: 5, ffn: 2560, vocab: 49152 }),
    maxNew: 64,
  },
};

/**
 * The step of issue 25's PyTorch figures. Random weights earn no reward and rarely stop, so every
 * group ties and every response is truncated: `maskZeroAdvantage` off and truncation `score` train
 * on them anyway (a zero loss through the same arithmetic), as the PyTorch step did.
 */
export const STEP: Partial<GrpoRunOptions> = {
  prompts: 8,
  group: 4,
  evalEvery: 0,
  maskZeroAdvantage: false,
  truncation: 'score',
};

/** Parameters a token passes through as a matmul operand: q, k, v, o, gate, up, down per layer, and the LM head. */
export function matmulParams(c: ModelConfig): number {
  const C = c.dModel;
  return c.layers * (2 * C * C + 2 * C * kvDim(c) + 3 * C * c.ffn) + c.vocab * C;
}

/**
 * GFLOPS of the matmuls of one decoding step at `rows` rows, alone: each layer's q, k, v, o, gate,
 * up and down and the LM head, (rows, K) · (N, K)ᵀ over weights of the model's size (distinct per
 * layer, so they come from memory as a decoding step's do), median of `reps` timed passes.
 */
async function decodeMatmulGflops(ops: Ops, c: ModelConfig, rows = 32, reps = 3): Promise<number> {
  const C = c.dModel,
    KV = kvDim(c),
    F = c.ffn;
  const shapes: [number, number][] = [];
  for (let l = 0; l < c.layers; l++) shapes.push([C, C], [C, KV], [C, KV], [C, C], [C, F], [C, F], [F, C]);
  shapes.push([C, c.vocab]);
  const rand = mulberry32(2);
  const random = (n: number) => Float32Array.from({ length: n }, () => rand() - 0.5);
  const x = ops.alloc('probe:x', rows * Math.max(C, F));
  const out = ops.alloc('probe:out', rows * Math.max(C, F, c.vocab));
  const w = shapes.map(([K, N], i) => ops.alloc(`probe:w${i}`, K * N));
  try {
    ops.upload(x, random(rows * Math.max(C, F)));
    shapes.forEach(([K, N], i) =>
      ops.upload(
        w[i],
        random(K * N).map((v) => v * 0.02),
      ),
    );
    const pass = () => shapes.forEach(([K, N], i) => ops.matmul(out, x, w[i], rows, K, N, 'nt'));
    pass();
    await ops.read(out);
    const flops = shapes.reduce((f, [K, N]) => f + 2 * rows * K * N, 0);
    const times: number[] = [];
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      pass();
      await ops.read(out);
      times.push((performance.now() - t) / 1000);
    }
    return flops / median(times) / 1e9;
  } finally {
    for (const t of [x, out, ...w]) ops.free(t);
  }
}

/** Random weights of `config` (seed 1) as a Hugging Face folder with the Llama 2 tokenizer, loaded as a person's folder is. */
export async function randomBase(config: ModelConfig, name: string): Promise<LoadedCheckpoint> {
  const tok = llamaTokenizerFiles();
  const files = writeHfFolder(config, initialWeights(config, 1), tok.tokenizerBytes, tok.configBytes);
  return checkpointFromHf(await loadHfFolder(files), name);
}

/**
 * Milliseconds of one draw of `rows` ids from logits (rows, V) (temperature 1, nothing filtered, as
 * the step samples): `Ops.sample` on `ops`, and its reference on the logits read back (what
 * sampling ran before the op); medians of `reps`. Seeded logits in [−10, 10).
 */
async function sampleOpMs(
  ops: Ops,
  V: number,
  rows = 32,
  reps = 5,
): Promise<{ kernelMs: number; referenceMs: number }> {
  const rand = mulberry32(3);
  const logits = ops.alloc('probe:logits', rows * V);
  try {
    ops.upload(
      logits,
      Float32Array.from({ length: rows * V }, () => 20 * rand() - 10),
    );
    const u = () => Float64Array.from({ length: rows }, rand);
    const time = async (f: () => Promise<unknown>) => {
      await f();
      const times: number[] = [];
      for (let r = 0; r < reps; r++) {
        const t = performance.now();
        await f();
        times.push(performance.now() - t);
      }
      return median(times);
    };
    return {
      kernelMs: await time(() => ops.sample(logits, u(), rows, V, {})),
      referenceMs: await time(async () => sampleRef(await ops.read(logits), u(), rows, V, {})),
    };
  } finally {
    ops.free(logits);
  }
}

async function baseOf(model: string): Promise<{ base: LoadedCheckpoint; source: string; maxNew: number }> {
  const named = MODEL_SHAPES[model];
  if (!named) return { base: await loadCheckpointDir(model), source: model, maxNew: 32 };
  return {
    base: await randomBase(named.config, model),
    source: `${model} (random weights, seed 1)`,
    maxNew: named.maxNew,
  };
}

/**
 * The LoRA the bench measures (verl's examples' shape: all-linear, alpha = 2·rank), as run options:
 * the adapters trained on a base held in bf16 (`frozenWeights`), what a model of 360M needs to fit
 * the wasm memory (issue 38). Per-layer recomputation, the LM head's chunks and `idsPerPass` are the
 * run's defaults (recomputation on from 100M parameters; passes of what fits 1 GiB of activations).
 */
const BENCH_LORA = { loraRank: 16, loraAlpha: 32, loraTargets: 'all-linear', frozenWeights: 'bf16' } as const;

export interface ModelRow {
  backend: string;
  /** 'full' fine-tuning, or 'LoRA r16, bf16 base' (BENCH_LORA). */
  training: string;
  stepS: number;
  sampleS: number;
  trainS: number;
  firstStepS: number;
  /** Prompt + sampled ids of a step, and sampled ids alone (medians); the longest prompt's ids. */
  ids: number;
  promptIds: number;
  sampledIds: number;
  sampleGflops: number;
  trainGflops: number;
  /** The matmuls of a decoding step alone at 32 rows (decodeMatmulGflops), and sampling's fraction of it. */
  matmulGflops32: number;
  sampleOfMatmul: number;
  /** The wasm heap's most live bytes (null on WebGPU); each wasm row runs on a fresh instance of its own. */
  peakHeapBytes: number | null;
  /** The wasm memory's size at the end: the live peak, the allocator's gaps and alignment (null on WebGPU). */
  memoryBytes: number | null;
  /**
   * What hf/memory.ts `wasmStepPlan` predicts for the step (its longest prompt), by part, the number the
   * trainer refuses a batch by, and the measured peak over it (null on WebGPU, which the plan does not hold).
   */
  plannedBytes: number | null;
  planParts: { part: string; bytes: number }[] | null;
  peakOverPlan: number | null;
  rewards: number[];
}

async function measure(
  label: string,
  ops: Ops,
  base: LoadedCheckpoint,
  maxNew: number,
  steps: number,
  matmulGflops32: number,
  lora: boolean,
): Promise<ModelRow> {
  const training = lora ? `LoRA r${BENCH_LORA.loraRank}, bf16 base` : 'full';
  const row = `${label}, ${training}`;
  const options: GrpoRunOptions = { ...GRPO_ARITH, ...STEP, maxNew, steps: steps + 1, ...(lora ? BENCH_LORA : {}) };
  const run = new GrpoRun(ops, options, base);
  const m: { metrics: Record<string, number>; ids: number; sampled: number; promptIds: number }[] = [];
  try {
    for (let s = 0; s <= steps; s++) {
      process.stderr.write(`grpo --model ${row}: step ${s + 1}/${steps + 1}\r`);
      const step = await run.next();
      const sampled = step.generated.reduce((n, g) => n + g.sampledIds.length, 0);
      const ids = sampled + step.generated.reduce((n, g) => n + g.promptIds.length, 0);
      if (!(step.metrics['batch/rows_needed'] > 0))
        throw new Error(
          `bench grpo --model: step ${s + 1} trained on nothing (no packed rows): the split would be wrong`,
        );
      const promptIds = Math.max(...step.generated.map((g) => g.promptIds.length));
      m.push({ metrics: step.metrics, ids, sampled, promptIds });
    }
  } finally {
    run.close();
  }
  process.stderr.write('\n');
  const timed = m.slice(1);
  const med = (f: (x: (typeof m)[number]) => number) => median(timed.map(f));
  const N = matmulParams(base.config);
  const sampleS = med((x) => x.metrics['perf/sample_ms']) / 1000;
  const trainS = med((x) => x.metrics['perf/train_ms']) / 1000;
  const ids = med((x) => x.ids);
  const sampledIds = med((x) => x.sampled);
  // Sampling's throughput counts the sampled ids (the prefill's time counts against it).
  const sampleGflops = (2 * N * sampledIds) / sampleS / 1e9;
  const wasm = ops.backend === 'wasm' ? (ops as WasmOps) : null;
  const stats = wasm?.memoryStats() ?? null;
  // The plan the trainer checked each batch against, at the longest prompt of any step measured.
  const loraConfig = loraFromOptions(options);
  const plan = wasm
    ? wasmStepPlan(
        base.config,
        { ...options, ...(loraConfig ? { lora: loraConfig } : {}) },
        Math.max(...m.map((x) => x.promptIds)),
      )
    : null;
  return {
    backend: row,
    training,
    stepS: med((x) => x.metrics['perf/step_ms']) / 1000,
    sampleS,
    trainS,
    firstStepS: m[0].metrics['perf/step_ms'] / 1000,
    ids,
    promptIds: Math.max(...m.map((x) => x.promptIds)),
    sampledIds,
    sampleGflops,
    trainGflops: (6 * N * ids) / trainS / 1e9,
    matmulGflops32,
    sampleOfMatmul: sampleGflops / matmulGflops32,
    peakHeapBytes: stats ? stats.peakBytes : null,
    memoryBytes: wasm ? wasm.memory.buffer.byteLength : null,
    plannedBytes: plan ? plan.total : null,
    planParts: plan ? plan.parts : null,
    peakOverPlan: plan && stats ? stats.peakBytes / plan.total : null,
    rewards: m.map((x) => x.metrics['reward/mean']),
  };
}

export async function benchGrpoModel(args: BenchArgs & { model: string }) {
  const steps = args.runs ?? 2;
  const trainings = args.lora ? [true] : [false, true];
  const { base, source, maxNew } = await baseOf(args.model);
  const rows: ModelRow[] = [];
  // The trainings on a backend, beside the matmuls of a decoding step at 32 rows alone. On wasm
  // each training runs on a fresh instance: its heap peak is its own (a Model is never freed).
  const trainingsOn = async (label: string, backend: () => Promise<{ ops: Ops }>) => {
    process.stderr.write(`grpo --model ${label}: the matmuls of a decoding step at 32 rows\n`);
    const first = await backend();
    const matmul = await decodeMatmulGflops(first.ops, base.config, 32, 5);
    for (const [k, lora] of trainings.entries()) {
      if (k === 0 && lora) (first.ops as Partial<{ close(): void }>).close?.();
      const { ops } = lora ? await backend() : first;
      rows.push(await measure(label, ops, base, maxNew, steps, matmul, lora));
      (ops as Partial<{ close(): void }>).close?.();
    }
  };
  const wasm = await cliBackend('wasm');
  process.stderr.write(`grpo --model: the draw alone at 32 rows\n`);
  const sampleOp = {
    rows: 32,
    vocab: base.config.vocab,
    threads: wasm.info.threads,
    ...(await sampleOpMs(wasm.ops, base.config.vocab)),
  };
  (wasm.ops as Partial<{ close(): void }>).close?.();
  const relaxed = wasm.info.simd === 'relaxed';
  await trainingsOn(`wasm × ${wasm.info.threads} threads${relaxed ? ', relaxed SIMD' : ''}`, () => cliBackend('wasm'));
  // What the fused multiply-adds are worth: the same decoding matmuls on the plain build.
  let plainMatmulGflops32: number | null = null;
  if (relaxed) {
    const plain = await nodeWasmOps(wasm.info.threads, 'plain');
    plainMatmulGflops32 = await decodeMatmulGflops(plain, base.config, 32, 5);
    plain.close();
  }
  let webgpu = 'no WebGPU adapter';
  const gpu = await cliBackend('webgpu').catch(() => null);
  if (gpu) {
    webgpu = describeBackend(gpu.info);
    if (gpu.info.adapter?.isFallbackAdapter || /swiftshader/i.test(webgpu)) webgpu += ' (software: not measured)';
    else await trainingsOn('webgpu', async () => gpu);
  }
  const c = base.config;
  // PyTorch's same step on the same CPU, now, with wasm's threads (torch-peer.ts), and our rows over it.
  process.stderr.write('grpo --model: PyTorch, the same step (torch_step.py)\n');
  const peer = torchPeer(c, {
    prompts: STEP.prompts!,
    group: STEP.group!,
    promptLen: rows[0].promptIds,
    newTokens: maxNew,
    threads: wasm.info.threads,
    steps,
  });
  const overPeer = peer.ran
    ? rows.map((r) => ({
        backend: r.backend,
        sample: r.sampleS / peer.sampleS,
        train: r.trainS / peer.trainS,
        step: r.stepS / peer.stepS,
      }))
    : null;
  const json = {
    bench: 'grpo --model',
    model: source,
    config: c,
    matmulParams: matmulParams(c),
    batch: `${STEP.prompts} prompts x ${STEP.group} samples, ${maxNew} new ids`,
    steps: steps + 1,
    statistic: `median of steps 2..${steps + 1}`,
    webgpu,
    plainMatmulGflops32,
    sampleOp,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    rows,
    peer,
    overPeer,
  };
  const f = (x: number, d = 2) => x.toFixed(d);
  const MiB = (b: number | null) => (b === null ? '—' : `${(b / 2 ** 20).toFixed(0)} MiB`);
  const table = [
    `grpo step of ${source}: ${c.layers} layers, d ${c.dModel}, ${c.heads} heads / ${c.kvHeads} kv, ffn ${c.ffn}, ` +
      `vocab ${c.vocab}; ${json.batch}; ${json.statistic}; webgpu: ${webgpu}; peak RSS ${MiB(json.peakRssBytes)}` +
      (plainMatmulGflops32 === null
        ? ''
        : `; decode matmuls at 32 rows on plain SIMD: ${f(plainMatmulGflops32, 1)} GFLOPS`) +
      `; the draw of 32 ids from ${sampleOp.vocab} logits on wasm × ${sampleOp.threads}: ${f(sampleOp.kernelMs, 1)} ms ` +
      `(its JavaScript reference: ${f(sampleOp.referenceMs, 1)} ms)`,
    '| backend | s/step | sample s | train s | first step s | ids/step (sampled) | sample GFLOPS | train GFLOPS | ' +
      'decode matmuls at 32 rows, GFLOPS | sampling / matmuls | wasm heap peak | planned | peak / plan | wasm memory |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.backend} | ${f(r.stepS)} | ${f(r.sampleS)} | ${f(r.trainS)} | ${f(r.firstStepS)} | ${r.ids} (${r.sampledIds}) | ` +
        `${f(r.sampleGflops, 1)} | ${f(r.trainGflops, 1)} | ${f(r.matmulGflops32, 1)} | ${f(r.sampleOfMatmul * 100, 0)}% | ` +
        `${MiB(r.peakHeapBytes)} | ${MiB(r.plannedBytes)} | ${r.peakOverPlan === null ? '—' : f(r.peakOverPlan, 3)} | ` +
        `${MiB(r.memoryBytes)} |`,
    ),
    peer.ran
      ? `\nPyTorch (${peer.impl}, ${peer.threads} threads, BLAS ${peer.blas.join(', ') || 'built in'}, the same step, ` +
        `run after these rows): sample ${f(peer.sampleS)} s, ` +
        `train ${f(peer.trainS)} s, step ${f(peer.stepS)} s; ours over PyTorch: ` +
        overPeer!
          .map((o) => `${o.backend}: sample ${f(o.sample)}×, train ${f(o.train)}×, step ${f(o.step)}×`)
          .join('; ')
      : `\nPyTorch not run: ${peer.why}`,
  ].join('\n');
  return { table: `${table}\n`, json };
}
