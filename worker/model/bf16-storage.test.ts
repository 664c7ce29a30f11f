/**
 * Layer matrices stored as bf16 (ModelOptions `storage`): a frozen model computes, bit for bit on
 * each backend, what an f32 model computes on the same weights rounded to bf16 (scoring, decoding
 * with the KV cache), holds its matrices in half the memory, and reads them back exactly; under
 * LoRA the bf16 base trains the adapters as an f32 base of those values does.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { packBf16, unpackBf16 } from '../../kernels/bf16/bf16.ref';
import { mulberry32 } from '../../kernels/common/random';
import { testBackends } from '../../kernels/common/node-test-gpu';
import type { Ops } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Decoder } from './kv-cache';
import { initialAdapters } from './lora';
import type { LoraConfig } from './lora';
import { Model } from './model';
import { rowPerSequence } from './packing';
import { initialWeights, isLayerMatrix } from './params';
import { weightBytes } from '../hf/memory';

const CONFIG: ModelConfig = { ...modelPreset('tiny', 9), layers: 3, heads: 2, kvHeads: 1, tiedEmbeddings: false };
const WEIGHTS = initialWeights(CONFIG, 6);
/** The weights as the bf16 model holds them: layer matrices rounded, everything else as it is. */
const ROUNDED = new Map(
  [...WEIGHTS].map(([name, w]) => [name, isLayerMatrix(name) ? unpackBf16(packBf16(w), w.length) : w]),
);
const BATCH = rowPerSequence(
  [
    [1, 4, 2, 6, 3, 8],
    [2, 5, 5],
    [6, 1, 3, 0, 7, 7],
  ],
  6,
);
const rand = mulberry32(8);
const SEED = Float32Array.from({ length: 18 }, () => rand() - 0.5);
const { backends } = await testBackends();

async function decode(m: Model) {
  const d = new Decoder(m, 2, 8);
  const out = [await d.prefill([[1, 2, 3], [4]])];
  out.push(await d.step([5, 6]), await d.step([7, 1]));
  d.free();
  return out.map((x) => Array.from(x));
}

describe.each(backends)('bf16 storage (%s)', (_name, makeOps) => {
  it('scores and decodes as an f32 model of the rounded weights, bit for bit; reads them back exactly', async () => {
    const ops = makeOps();
    const stored = new Model(ops, CONFIG, { frozen: true, storage: 'bf16' });
    stored.setWeights(WEIGHTS);
    const plain = new Model(ops, CONFIG, { frozen: true });
    plain.setWeights(ROUNDED);
    expect(Array.from((await stored.score(BATCH)).logp)).toEqual(Array.from((await plain.score(BATCH)).logp));
    expect(await decode(stored)).toEqual(await decode(plain));
    const back = await stored.getWeights();
    for (const [name, w] of ROUNDED) expect(Array.from(back.get(name)!), name).toEqual(Array.from(w));
    // The rounding is real: the f32 model of the original weights scores otherwise.
    const original = new Model(ops, CONFIG, { frozen: true });
    original.setWeights(WEIGHTS);
    expect(Array.from((await original.score(BATCH)).logp)).not.toEqual(Array.from((await plain.score(BATCH)).logp));
  });

  it('under LoRA the bf16 base trains the adapters as an f32 base of the rounded weights does', async () => {
    const ops = makeOps();
    const lora: LoraConfig = { rank: 2, alpha: 4, dropout: 0, targetModules: ['all-linear'] };
    const adapters = initialAdapters(CONFIG, lora, 3);
    for (const [name, t] of adapters) if (name.includes('lora_B')) t.forEach((_, i) => (t[i] = Math.cos(i) / 7));
    const grads = async (storage: 'f32' | 'bf16', weights: Map<string, Float32Array>) => {
      const m = new Model(ops, CONFIG, { lora, storage, recomputeLayers: true });
      m.setWeights(new Map([...weights, ...adapters]));
      const { logp } = await m.score(BATCH);
      m.zeroGrad();
      await m.backward(SEED);
      return { logp: Array.from(logp), grads: [...(await m.getGradients())].map(([n, g]) => [n, Array.from(g)]) };
    };
    expect(await grads('bf16', WEIGHTS)).toEqual(await grads('f32', ROUNDED));
  });
});

describe('bf16 storage: memory and refusals', () => {
  it("holds each layer matrix in half its f32 bytes, plus one layer's widened", () => {
    const bytes = (storage: 'f32' | 'bf16') => {
      let n = 0;
      const cpu = createCpuOps();
      const ops = {
        ...cpu,
        alloc: (l: string, len: number, d?: 'f32' | 'i32') => ((n += 4 * len), cpu.alloc(l, len, d)),
      } as Ops;
      new Model(ops, CONFIG, { frozen: true, storage });
      return n;
    };
    const C = CONFIG.dModel,
      F = CONFIG.ffn,
      KV = (C / CONFIG.heads) * CONFIG.kvHeads;
    const layer = 2 * C * C + 2 * C * KV + 3 * C * F; // the seven matrices' values
    expect(bytes('f32') - bytes('bf16')).toBe(4 * layer * CONFIG.layers - 2 * layer * CONFIG.layers - 4 * layer);
    // The memory plan's count (hf/memory.ts weightBytes) is what the model allocates.
    expect([bytes('f32'), bytes('bf16')]).toEqual([weightBytes(CONFIG), weightBytes(CONFIG, 'bf16')]);
  });

  it('refuses bf16 storage for weights a step changes', () => {
    expect(() => new Model(createCpuOps(), CONFIG, { storage: 'bf16' })).toThrow(
      /storage 'bf16' holds weights no step changes/,
    );
  });
});
