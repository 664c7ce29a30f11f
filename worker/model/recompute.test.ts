/**
 * Per-layer recomputation (ModelOptions `recomputeLayers`): each layer keeps its input alone and the
 * backward runs each layer's forward again; the numbers are those of the model that keeps every
 * layer's activations, bit for bit, on every backend (with a value head, a logit bias and
 * temperature, LoRA with adapter dropout, and a batch in passes). Frozen models hold one layer.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mulberry32 } from '../../kernels/common/random';
import { testBackends } from '../../kernels/common/node-test-gpu';
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { initialAdapters } from './lora';
import type { LoraConfig } from './lora';
import type { ModelOptions } from './model';
import { Model } from './model';
import { rowPerSequence } from './packing';
import { initialWeights } from './params';
import { allocActs } from './tensors';

/** Grouped-query, hs 4 (WebGPU's attention reads heads as vec4). */
const CONFIG: ModelConfig = { ...modelPreset('tiny', 9), layers: 3, heads: 2, kvHeads: 1, tiedEmbeddings: true };
const BATCH = rowPerSequence(
  [
    [1, 4, 2, 6, 3, 8],
    [2, 5, 5],
    [6, 1, 3, 0, 7, 7],
    [3, 3, 1, 2],
  ],
  6,
);
const rand = mulberry32(3);
const SEED = Float32Array.from({ length: 24 }, () => rand() - 0.5);
const VALUE_SEED = Float32Array.from({ length: 24 }, () => rand() - 0.5);
const BIAS = Float32Array.from({ length: 24 * CONFIG.vocab }, () => (rand() < 0.2 ? -1e9 : 0));
const LORA: LoraConfig = { rank: 2, alpha: 4, dropout: 0.2, targetModules: ['all-linear'] };

async function trained(ops: Ops, options: ModelOptions) {
  const model = new Model(ops, CONFIG, options);
  const adapters = options.lora ? initialAdapters(CONFIG, options.lora, 5) : new Map<string, Float32Array>();
  for (const [name, t] of adapters) if (name.includes('lora_B')) t.forEach((_, i) => (t[i] = Math.sin(i) / 5));
  model.setWeights(new Map([...initialWeights(CONFIG, 4), ...adapters]));
  if (options.valueHead) model.setValueHead(Float32Array.from({ length: CONFIG.dModel }, (_, i) => Math.cos(i) / 4));
  const scored = await model.score(BATCH, options.lora ? undefined : BIAS, { temperature: 0.7, dropoutSeed: 7 });
  model.zeroGrad();
  await model.backward(SEED, options.valueHead ? VALUE_SEED : null);
  const grads = await model.getGradients();
  const arrays = (m: Map<string, Float32Array>) => Object.fromEntries([...m].map(([k, v]) => [k, Array.from(v)]));
  return {
    logp: Array.from(scored.logp),
    values: scored.values && Array.from(scored.values),
    grads: arrays(grads),
    valueGrad: Array.from((await model.getValueHeadGradient()) ?? []),
  };
}

const { backends } = await testBackends();

describe.each(backends)('recomputeLayers (%s)', (_name, makeOps) => {
  it('the log-probs, values and every gradient of the model that keeps all layers, bit for bit', async () => {
    const ops = makeOps();
    const kept = await trained(ops, { valueHead: true });
    expect(await trained(ops, { valueHead: true, recomputeLayers: true })).toEqual(kept);
  });

  it('with LoRA and adapter dropout (the masks drawn a third time), and in passes of two rows', async () => {
    const ops = makeOps();
    const kept = await trained(ops, { lora: LORA });
    expect(await trained(ops, { lora: LORA, recomputeLayers: true })).toEqual(kept);
    const passes = await trained(ops, { lora: LORA, recomputeLayers: true, idsPerPass: 12 });
    expect(passes.logp).toEqual(kept.logp);
    expect(passes.grads).toEqual((await trained(ops, { lora: LORA, idsPerPass: 12 })).grads);
  });
});

describe('activation memory', () => {
  /** Values allocActs asks for. */
  const count = (o: Parameters<typeof allocActs>[4]) => {
    let n = 0;
    const ops = { alloc: (_l: string, len: number) => ((n += len), {}) } as unknown as Ops;
    allocActs(ops, CONFIG, 4, 32, o);
    return n;
  };

  it("recomputation keeps every layer's input and one layer's other activations; a frozen model one layer's", () => {
    const [all, recompute, shared] = [count({}), count({ recompute: true }), count({ sharedLayers: true })];
    const N = 4 * 32,
      layerValues = (all - shared) / (CONFIG.layers - 1); // one layer's activations
    expect(recompute).toBe(shared + (CONFIG.layers - 1) * N * CONFIG.dModel);
    expect(all).toBe(shared + (CONFIG.layers - 1) * layerValues);
    expect(layerValues).toBeGreaterThan(5 * N * CONFIG.dModel);
    expect(() => count({ recompute: true, sharedLayers: true })).toThrow(/exclude each other/);
  });

  it('a frozen model scores as a trained one does, from its one layer of activations', async () => {
    const ops = createCpuOps();
    const weights = initialWeights(CONFIG, 4);
    const [frozen, full] = [new Model(ops, CONFIG, { frozen: true }), new Model(ops, CONFIG)];
    frozen.setWeights(weights);
    full.setWeights(weights);
    expect((await frozen.score(BATCH, BIAS)).logp).toEqual((await full.score(BATCH, BIAS)).logp);
  });
});
