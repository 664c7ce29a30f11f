/**
 * Micro-batches (`rowsPerPass`: a batch scored and differentiated a few rows at a time, each
 * pass's forward run again before its backward) and frozen models (weights only).
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mulberry32 } from '../../kernels/common/random';
import { testGpuOps } from '../../kernels/common/node-test-gpu';
import { expectClose } from '../../kernels/testing/expect-close';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Model } from './model';
import type { PackedInput } from './packing';
import { rowPerSequence } from './packing';
import { initialWeights } from './params';

const CONFIG: ModelConfig = { ...modelPreset('tiny', 9), layers: 2, heads: 4, kvHeads: 2, tiedEmbeddings: true };
/** Five rows, two of them two chains each (packed), one shorter than the width. */
const BATCH: PackedInput = (() => {
  const b = rowPerSequence(
    [
      [1, 4, 2, 6, 3, 8],
      [2, 5, 5],
      [6, 1, 3, 0, 7, 7],
      [3, 3],
      [8, 2, 4, 1, 5, 6],
    ],
    6,
  );
  const segmentIds = Int32Array.from(b.segmentIds);
  const positions = Int32Array.from(b.positions);
  for (const r of [0, 4]) for (let t = 3; t < 6; t++) [segmentIds[r * 6 + t], positions[r * 6 + t]] = [2, t - 3];
  return { ...b, segmentIds, positions };
})();
const rand = mulberry32(11);
const SEED = Float32Array.from({ length: 30 }, () => rand() - 0.5);
const VALUE_SEED = Float32Array.from({ length: 30 }, () => rand() - 0.5);
const BIAS = Float32Array.from({ length: 30 * CONFIG.vocab }, () => (rand() < 0.2 ? -1e9 : 0));

async function trainedOnce(rowsPerPass: number | undefined, ops = createCpuOps()) {
  // The batch is 6 ids wide: rows × 6 ids a pass; 6r + 5 still makes r rows.
  const idsPerPass = rowsPerPass && 6 * rowsPerPass + (rowsPerPass % 2) * 5;
  const model = new Model(ops, CONFIG, { valueHead: true, ...(idsPerPass ? { idsPerPass } : {}) });
  model.setWeights(initialWeights(CONFIG, 4));
  model.setValueHead(Float32Array.from({ length: CONFIG.dModel }, (_, i) => Math.cos(i) / 4));
  const scored = await model.score(BATCH, BIAS, { temperature: 0.7 });
  model.zeroGrad();
  await model.backward(SEED, VALUE_SEED);
  const grads = await model.getGradients();
  return { scored, grads, valueGrad: (await model.getValueHeadGradient())! };
}

describe('idsPerPass: a batch in passes of a few rows', () => {
  for (const per of [1, 2, 3])
    it(`${per} row(s) a pass: the log-probs, entropies, values and gradients of one pass bit for bit`, async () => {
      const whole = await trainedOnce(undefined);
      const passes = await trainedOnce(per);
      expect(passes.scored.logp).toEqual(whole.scored.logp);
      expect(passes.scored.entropy).toEqual(whole.scored.entropy);
      expect(passes.scored.values).toEqual(whole.scored.values);
      // Every weight gradient is summed token by token in order, going on from the last pass's sum
      // (tied embeddings: the lookup's apart from the LM head's until the step).
      for (const [name, g] of whole.grads) expect(passes.grads.get(name), `${per} a pass: ${name}`).toEqual(g);
      expect(passes.valueGrad).toEqual(whole.valueGrad);
    });

  it('on wasm too, and the activations then scale with the pass, not the batch', async () => {
    const ops = await nodeWasmOps(1);
    const whole = await trainedOnce(undefined, ops);
    const peakWhole = ops.memoryStats().peakBytes;
    const ops2 = await nodeWasmOps(1);
    const passes = await trainedOnce(1, ops2);
    expect(passes.scored.logp).toEqual(whole.scored.logp);
    for (const [name, g] of whole.grads) expect(passes.grads.get(name), `wasm: ${name}`).toEqual(g);
    expect(passes.valueGrad).toEqual(whole.valueGrad);
    expect(ops2.memoryStats().peakBytes).toBeLessThan(peakWhole);
  });

  it('refuses an idsPerPass that is not a positive integer, naming it', () => {
    expect(() => new Model(createCpuOps(), CONFIG, { idsPerPass: 0 })).toThrow(
      /^Model: idsPerPass = 0; expected an integer ≥ 1/,
    );
  });
});

describe('frozen: weights only', () => {
  it('scores as a trained model does, holds a quarter of its memory, and refuses to train, naming why', async () => {
    const ops = await nodeWasmOps(1);
    const before = ops.memoryStats().liveBytes;
    const frozen = new Model(ops, CONFIG, { frozen: true });
    const frozenBytes = ops.memoryStats().liveBytes - before;
    const trained = new Model(ops, CONFIG);
    const trainedBytes = ops.memoryStats().liveBytes - before - frozenBytes;
    expect(frozenBytes).toBeLessThan(trainedBytes / 3);
    const w = initialWeights(CONFIG, 4);
    frozen.setWeights(w);
    trained.setWeights(w);
    expect((await frozen.score(BATCH)).logp).toEqual((await trained.score(BATCH)).logp);
    expect(frozen.frozen).toBe(true);
    await expect(frozen.backward(SEED)).rejects.toThrow(/^backward: this model is frozen \(weights only/);
    await expect(
      frozen.step({ step: 1, lr: 1, beta1: 0.9, beta2: 0.9, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 }),
    ).rejects.toThrow(/^step: this model is frozen/);
    await expect(frozen.getOptimizerState()).rejects.toThrow(/frozen/);
  });
});

const gpu = await testGpuOps();

describe('the LM head in chunks: no (positions × vocabulary) buffer past 64 MiB', () => {
  // Vocabulary 32000: 524 positions' logits fit 64 MiB, so a batch of 600 runs the head in two chunks.
  const BIG: ModelConfig = { ...CONFIG, heads: 2, kvHeads: 1, vocab: 32000, maxSeq: 300 }; // hs 4: WebGPU reads heads as vec4
  const rows = [0, 1].map((r) => Array.from({ length: 300 }, (_, t) => (r * 7919 + t * 104729) % 32000));
  const batch = rowPerSequence(rows, 300);
  const seed = Float32Array.from({ length: 600 }, (_, i) => Math.sin(i) / 10);
  const bias = Float32Array.from({ length: 600 * 32000 }, (_, i) => (i % 7 === 3 ? -1e9 : 0));

  it('a chunked head: the log-probs and gradients of an unchunked one (bit for bit on CPU and wasm)', async () => {
    for (const ops of [createCpuOps(), await nodeWasmOps(1), ...(gpu ? [gpu] : [])]) {
      const run = async (idsPerPass?: number) => {
        const model = new Model(ops, BIG, { valueHead: true, ...(idsPerPass ? { idsPerPass } : {}) });
        model.setWeights(initialWeights(BIG, 2));
        const scored = await model.score(batch, bias, { temperature: 0.9 });
        model.zeroGrad();
        await model.backward(seed, seed);
        return { scored, grads: await model.getGradients() };
      };
      const chunked = await run(); // 600 positions: two chunks of the head
      const unchunked = await run(300); // two passes of 300: one chunk each
      if (ops.backend === 'webgpu') {
        // WebGPU picks its matmul kernel by shape, so a chunk's sums may run in another order: close, not equal.
        for (const k of ['logp', 'entropy', 'values'] as const)
          expectClose(chunked.scored[k]!, unchunked.scored[k]!, { atol: 1e-5, rtol: 1e-5, label: `webgpu: ${k}` });
      } else {
        expect(chunked.scored.logp).toEqual(unchunked.scored.logp);
        expect(chunked.scored.entropy).toEqual(unchunked.scored.entropy);
        expect(chunked.scored.values).toEqual(unchunked.scored.values);
      }
      for (const [name, g] of unchunked.grads)
        if (ops.backend === 'webgpu')
          expectClose(chunked.grads.get(name)!, g, { atol: 1e-6, rtol: 1e-4, label: `${ops.backend}: ${name}` });
        else expect(chunked.grads.get(name), `${ops.backend}: ${name}`).toEqual(g);
    }
  });

  it('logitsAt reads any position of a chunked head', async () => {
    const model = new Model(createCpuOps(), BIG);
    model.setWeights(initialWeights(BIG, 2));
    const [early, late] = await model.logitsAt(batch, [5, 590]);
    const [early1] = await model.logitsAt(rowPerSequence([rows[0]], 300), [5]);
    const [late1] = await model.logitsAt(rowPerSequence([rows[1]], 300), [290]);
    expect(early).toEqual(early1);
    expect(late).toEqual(late1);
  });
});
