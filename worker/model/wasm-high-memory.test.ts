/**
 * The wasm memory reaches 4 GiB (memory32's limit): tensors placed above the 2 GiB byte offset, where
 * a signed pointer would turn negative, give the numbers of the same tensors low in the memory. A
 * Model's score, backward, AdamW step and decoding run every kernel kind on them, on one thread and
 * on two. The filler is never written, so the memory it reserves is not touched.
 */
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { ModelConfig } from './config';
import { Model } from './model';
import { numel, paramSpecs } from './params';
import { rowPerSequence } from './packing';
import { generate } from '../rollout/generate';

const CONFIG: ModelConfig = {
  layers: 2,
  dModel: 16,
  heads: 4,
  kvHeads: 2,
  ffn: 24,
  vocab: 11,
  maxSeq: 32,
  tiedEmbeddings: false,
  ropeTheta: 10000,
  normEps: 1e-5,
};

function weights(): Map<string, Float32Array> {
  const rand = mulberry32(3);
  return new Map(
    paramSpecs(CONFIG).map((s) => [s.name, Float32Array.from({ length: numel(s.shape) }, () => rand() - 0.5)]),
  );
}

async function everyKernel(threads: number, fillerBytes: number) {
  const ops = await nodeWasmOps(threads);
  const filler = fillerBytes ? ops.alloc('filler', fillerBytes / 4) : null;
  const model = new Model(ops, CONFIG);
  model.setWeights(weights());
  const batch = rowPerSequence([
    [1, 4, 2, 6, 3, 9],
    [2, 5, 5, 10],
  ]);
  const { logp } = await model.score(batch);
  model.zeroGrad();
  await model.backward(Float32Array.from(logp, (_, i) => Math.sin(i + 1)));
  const grads = await model.getGradients();
  await model.step({ step: 1, lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 });
  const after = await model.getWeights();
  const sampled = await generate(model, [[1, 2], [3]], { maxNew: 5, eos: 0, seed: 7, temperature: 1 });
  const stats = ops.memoryStats();
  if (filler) ops.free(filler);
  return {
    numbers: {
      logp: Array.from(logp),
      grads: [...grads].map(([n, g]) => [n, Array.from(g)]),
      after: [...after].map(([n, w]) => [n, Array.from(w)]),
      sampled: sampled.map((g) => [Array.from(g.sampledIds), Array.from(g.behaviorLogProbs)]),
    },
    peakBytes: stats.peakBytes,
  };
}

describe('wasm memory above 2 GiB', () => {
  for (const threads of [1, 2])
    it(`${threads} thread(s): a model's tensors past the 2 GiB offset give the numbers they give low in the memory`, async () => {
      const low = await everyKernel(threads, 0);
      const high = await everyKernel(threads, 2.25 * 2 ** 30);
      expect(high.peakBytes).toBeGreaterThan(2.25 * 2 ** 30);
      expect(high.numbers).toEqual(low.numbers);
    });
});
