/**
 * Batch-invariant scoring (issue 37 item 1): a sequence's log-probs do not depend on the batch it is
 * scored in, the pass split (`idsPerPass`), the LM head's chunking, the wasm thread count, or
 * whether the sampler produced them while decoding with the KV cache or the trainer by a full
 * forward — bit for bit on the CPU reference and on wasm. What holds on WebGPU is in
 * docs/rl-formulas.md "Mismatch".
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { ModelConfig } from '../model/config';
import { modelPreset } from '../model/config';
import type { ModelOptions } from '../model/model';
import { Model } from '../model/model';
import type { PackedInput } from '../model/packing';
import { initialWeights } from '../model/params';
import type { Generated } from './generate';
import { generate } from './generate';

/**
 * hs = 6: SIMD tails in attention's dot products; GQA; two layers; big enough that the trainer's
 * matmuls and attention split across 2 wasm threads (kernels/backends/wasm.ts PARALLEL_MIN_MACS).
 */
const CONFIG: ModelConfig = {
  ...modelPreset('tiny', 37),
  layers: 2,
  dModel: 36,
  heads: 6,
  kvHeads: 3,
  ffn: 100,
  maxSeq: 48,
  tiedEmbeddings: false,
};
const PROMPTS = [[1, 5, 6, 7], [1, 8], [1, 9, 9, 9, 10, 11], [1, 5, 6, 7], [3]];
const TEMPERATURE = 0.7;
const GEN = { maxNew: 14, eos: 2, seed: 5, temperature: TEMPERATURE };

/** Chains into rows: `perRow` chains a row (segments 1, 2, …), each row `width` ids wide (padding after); `at`: each chain's first index. */
function packChains(chains: number[][], perRow: number, width: number): PackedInput & { at: number[] } {
  const rows = Math.ceil(chains.length / perRow);
  const inputIds = new Int32Array(rows * width);
  const segmentIds = new Int32Array(rows * width);
  const positions = new Int32Array(rows * width);
  const at: number[] = [];
  chains.forEach((c, i) => {
    const r = Math.floor(i / perRow);
    let t = r * width;
    for (let j = i - (i % perRow); j < i; j++) t += chains[j].length;
    at.push(t);
    if (t + c.length > (r + 1) * width) throw new Error('packChains: a row overflows');
    c.forEach((id, k) => {
      inputIds[t + k] = id;
      segmentIds[t + k] = (i % perRow) + 1;
      positions[t + k] = k;
    });
  });
  return { rows, width, inputIds, segmentIds, positions, at };
}

/** The log-probs the trainer gives each generated row's sampled ids, scored in `batch` (its chains in order). */
async function scoredSampled(
  ops: Ops,
  options: ModelOptions,
  gens: Generated[],
  compose: (chains: number[][]) => PackedInput & { at: number[] },
): Promise<Float32Array[]> {
  const m = modelOn(ops, options);
  const chains = gens.map((g) => [...g.promptIds, ...g.sampledIds]);
  const batch = compose(chains);
  const { logp } = await m.score(batch, undefined, { temperature: TEMPERATURE });
  return gens.map((g, i) => {
    const start = batch.at[i] + g.promptIds.length;
    return logp.slice(start, start + g.sampledIds.length);
  });
}

function modelOn(ops: Ops, options: ModelOptions = {}): Model {
  const m = new Model(ops, CONFIG, options);
  const w = initialWeights(CONFIG, 3);
  // Larger weights than the init's: sharper distributions, larger logits (more bits to lose).
  const rand = mulberry32(9);
  for (const [name, x] of w)
    if (!name.includes('norm')) for (let i = 0; i < x.length; i++) x[i] += 0.3 * (rand() - 0.5);
  m.setWeights(w);
  return m;
}

const COMPOSITIONS: [string, ModelOptions, (chains: number[][]) => PackedInput & { at: number[] }][] = [
  ['one row per sequence', {}, (c) => packChains(c, 1, Math.max(...c.map((x) => x.length)))],
  ['each alone in a wider row', {}, (c) => packChains(c, 1, 40)],
  ['two chains a row', {}, (c) => packChains(c, 2, 44)],
  ['one row a pass (idsPerPass)', { idsPerPass: 44 }, (c) => packChains(c, 2, 44)],
  ['three rows a pass (idsPerPass)', { idsPerPass: 3 * 40 + 7 }, (c) => packChains(c, 1, 40)],
  ['LM head in chunks of 5 positions', { headRows: 5 }, (c) => packChains(c, 2, 44)],
];

const wasm1 = await nodeWasmOps(1);
const wasm2 = await nodeWasmOps(2, undefined, { partMinWork: 1 }); // splits every op that can be split
afterAll(() => wasm2.close());

const BACKENDS: [string, () => Ops][] = [
  ['cpu', createCpuOps],
  ['wasm (1 thread)', () => wasm1],
  ['wasm (2 threads)', () => wasm2],
];

describe.each(BACKENDS)('batch-invariant scoring on %s', (_name, ops) => {
  it.each(COMPOSITIONS)(
    "the sampler's raw and behaviour log-probs are the trainer's, bit for bit, scored %s",
    async (_what, options, compose) => {
      const gens = await generate(modelOn(ops()), PROMPTS, GEN);
      const scored = await scoredSampled(ops(), options, gens, compose);
      gens.forEach((g, r) => {
        expect(g.sampledIds.length).toBeGreaterThan(0);
        expect(Array.from(scored[r]), `row ${r}: raw`).toEqual(Array.from(g.rawLogProbs));
        expect(Array.from(scored[r]), `row ${r}: behaviour`).toEqual(Array.from(g.behaviorLogProbs));
      });
    },
  );

  it('decoding with and without the KV cache draws the same ids with the same log-probs, bit for bit', async () => {
    const m = modelOn(ops());
    const cached = await generate(m, PROMPTS, GEN);
    const uncached = await generate(m, PROMPTS, { ...GEN, useCache: false });
    expect(uncached).toEqual(cached);
  });
});

describe('across wasm thread counts', () => {
  it('1 and 2 threads sample the same ids with the same log-probs, bit for bit', async () => {
    const one = await generate(modelOn(wasm1), PROMPTS, GEN);
    const two = await generate(modelOn(wasm2), PROMPTS, GEN);
    expect(two).toEqual(one);
  });
});
