/**
 * `bench train --model gpt-ref`: training throughput of the peer bench's GPT shape
 * (docs/design.md "The peer benchmark": 2 layers, d 128, 4 heads, an MLP of ≈ the FLOPs of a 512 GELU MLP — here
 * SwiGLU with ffn 344 —, vocab 64, seq 64, batch 16 = 1,024 tokens per step), on each backend of
 * this machine in one run, so it can be put beside TensorFlow.js on the same CPU. The data is the
 * peer's synthetic learnable task x_t = (a + s·t) mod 64; the loss is the mean next-token NLL over
 * every position, AdamW (lr 1e-3, β 0.9/0.95, weight decay 0.1), one loss readback per step. The
 * loss must fall on every backend alike: a correctness check, not only a timing.
 */
import { createCpuOps } from '../../kernels/backends/cpu';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from '../../worker/model/config';
import { Model } from '../../worker/model/model';
import type { PackedInput } from '../../worker/model/packing';
import { median } from '../../worker/selftest';
import { cliBackend } from '../backend';

const GPT_REF: ModelConfig = {
  layers: 2,
  dModel: 128,
  heads: 4,
  kvHeads: 4,
  ffn: 344,
  vocab: 64,
  maxSeq: 64,
  tiedEmbeddings: true,
  ropeTheta: 10000,
  normEps: 1e-5,
};
const B = 16;
const T = 64;

/** Batch `step`: row b is (a + s·t) mod 64 for t < T, with a and s drawn from the seed. */
function batchOf(step: number): PackedInput {
  const rand = mulberry32(1000 + step);
  const inputIds = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    const a = Math.floor(rand() * 64);
    const s = 1 + Math.floor(rand() * 7);
    for (let t = 0; t < T; t++) inputIds[b * T + t] = (a + s * t) % 64;
  }
  return {
    rows: B,
    width: T,
    inputIds,
    segmentIds: new Int32Array(B * T).fill(1),
    positions: Int32Array.from({ length: B * T }, (_, i) => i % T),
  };
}

export interface GptRefRow {
  backend: string;
  stepMs: number;
  tokensPerS: number;
  firstStepMs: number;
  losses: number[];
}

async function measure(backend: string, ops: Ops, steps: number): Promise<GptRefRow> {
  const model = new Model(ops, GPT_REF);
  model.initWeights(1);
  const times: number[] = [];
  const losses: number[] = [];
  // Every position after a row's first predicts its id: −1/N seeds on those, 0 at chain starts.
  const n = B * (T - 1);
  const seed = Float32Array.from({ length: B * T }, (_, i) => (i % T === 0 ? 0 : -1 / n));
  for (let s = 0; s <= steps; s++) {
    process.stderr.write(`train gpt-ref ${backend}: step ${s + 1}/${steps + 1}\r`);
    const t0 = performance.now();
    const { logp } = await model.score(batchOf(s));
    model.zeroGrad();
    await model.backward(seed);
    await model.step({
      lr: 1e-3,
      beta1: 0.9,
      beta2: 0.95,
      eps: 1e-8,
      weightDecay: 0.1,
      step: s + 1,
      maxGradNorm: Infinity,
    });
    times.push(performance.now() - t0);
    let loss = 0;
    for (let i = 0; i < logp.length; i++) loss += seed[i] * logp[i];
    losses.push(loss);
  }
  process.stderr.write('\n');
  const stepMs = median(times.slice(1));
  return { backend, stepMs, tokensPerS: (B * T) / (stepMs / 1000), firstStepMs: times[0], losses };
}

export async function benchGptRef(runs: number | null) {
  const steps = runs ?? 10;
  const rows: GptRefRow[] = [];
  const wasm = await cliBackend('wasm');
  rows.push(await measure(`wasm × ${wasm.info.threads} threads`, wasm.ops, steps));
  if (wasm.info.threads > 1) rows.push(await measure('wasm × 1 thread', await nodeWasmOps(1), steps));
  const gpu = await cliBackend('webgpu').catch(() => null);
  let adapter = 'no WebGPU adapter';
  if (gpu) {
    adapter = `${gpu.info.adapter?.vendor}/${gpu.info.adapter?.architecture}`;
    rows.push(await measure('webgpu', gpu.ops, Math.min(steps, 4)));
  }
  rows.push(await measure('cpu', createCpuOps(), Math.min(steps, 3)));
  const json = {
    bench: 'train',
    model: 'gpt-ref',
    shape: GPT_REF,
    batch: { rows: B, width: T, tokensPerStep: B * T },
    statistic: 'median step time after the first',
    adapter,
    rows,
  };
  const table = [
    `train gpt-ref (2L d128 4 heads, SwiGLU 344, vocab 64, ${B}x${T} = ${B * T} tokens/step), median after the first step; webgpu: ${adapter}`,
    '| backend | steps timed | ms/step | tokens/s | first step ms | loss first → last |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.backend} | ${r.losses.length - 1} | ${r.stepMs.toFixed(0)} | ${r.tokensPerS.toFixed(0)} | ` +
        `${r.firstStepMs.toFixed(0)} | ${r.losses[0].toFixed(4)} → ` +
        `${r.losses[r.losses.length - 1].toFixed(4)} |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
