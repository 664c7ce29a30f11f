/**
 * Grouped-query attention at the model level: the config rule, the k_proj/v_proj shapes, the
 * identity "GQA = multi-head attention with each kv head's k_proj/v_proj rows repeated over its
 * group" (transformers' repeat_kv moved onto the weights, since RoPE and attention act per head),
 * and sampling with the KV cache (kvHeads · hs per position) against the full forward, on every
 * backend. The gradient check of a GQA model is in model.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { compareClose } from '../../kernels/testing/expect-close';
import type { ModelConfig } from './config';
import { kvDim, modelPreset, validateModelConfig } from './config';
import { Decoder } from './kv-cache';
import { Model } from './model';
import { rowPerSequence } from './packing';
import { numel, paramSpecs, parameterCount } from './params';

/** 4 query heads over 2 kv heads, hs = 4 (WebGPU reads heads as vec4). */
const GQA: ModelConfig = {
  ...modelPreset('tiny', 13),
  layers: 2,
  dModel: 16,
  heads: 4,
  kvHeads: 2,
  ffn: 24,
  maxSeq: 16,
  tiedEmbeddings: false,
};
const hs = GQA.dModel / GQA.heads;

function randomWeights(c: ModelConfig, seed: number): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  return new Map(
    paramSpecs(c).map((s) => [
      s.name,
      Float32Array.from({ length: numel(s.shape) }, () =>
        s.shape.length === 1 ? 1 + 0.2 * (rand() - 0.5) : 0.5 * (rand() * 2 - 1),
      ),
    ]),
  );
}

const isKv = (name: string) => /\.self_attn\.[kv]_proj\.weight$/.test(name);

/** MHA weights for `gqa`'s config with kvHeads = heads: head h of k_proj/v_proj is kv head h / G's rows. */
function repeatKvWeights(gqa: Map<string, Float32Array>, c: ModelConfig): Map<string, Float32Array> {
  const G = c.heads / c.kvHeads;
  const C = c.dModel;
  const out = new Map<string, Float32Array>();
  for (const [name, w] of gqa) {
    if (!isKv(name)) {
      out.set(name, w);
      continue;
    }
    const big = new Float32Array(c.heads * hs * C);
    for (let h = 0; h < c.heads; h++)
      big.set(w.subarray(Math.floor(h / G) * hs * C, (Math.floor(h / G) + 1) * hs * C), h * hs * C);
    out.set(name, big);
  }
  return out;
}

/** The adjoint: sums the G row blocks of each kv head's group, (heads·hs, C) → (kvHeads·hs, C). */
function sumGroups(g: Float32Array, c: ModelConfig): Float64Array {
  const G = c.heads / c.kvHeads;
  const block = hs * c.dModel;
  const out = new Float64Array(c.kvHeads * block);
  for (let h = 0; h < c.heads; h++)
    for (let i = 0; i < block; i++) out[Math.floor(h / G) * block + i] += g[h * block + i];
  return out;
}

describe('grouped-query attention config and parameters', () => {
  it('accepts kvHeads dividing heads and refuses any other, naming kvHeads, heads and the rule', () => {
    const base = modelPreset('small', 25); // heads 4
    for (const kvHeads of [1, 2, 4]) expect(validateModelConfig({ ...base, kvHeads })).toEqual([]);
    expect(validateModelConfig({ ...base, kvHeads: 3 })).toEqual([
      'kvHeads (3) must divide heads (4): each group of heads/kvHeads query heads shares one key/value head',
    ]);
    expect(validateModelConfig({ ...base, kvHeads: 8 })).toEqual([
      'kvHeads (8) must divide heads (4): each group of heads/kvHeads query heads shares one key/value head',
    ]);
    expect(validateModelConfig({ ...base, kvHeads: 0 })).toEqual(['kvHeads must be a positive integer, got 0']);
    expect(() => new Model(createCpuOps(), { ...base, kvHeads: 3 })).toThrow(/kvHeads \(3\) must divide heads \(4\)/);
  });

  it('shapes k_proj and v_proj (kvHeads·hs, C) and counts parameters accordingly', () => {
    const mha = modelPreset('small', 25); // C = 64, hs = 16, 2 layers
    const gqa = { ...mha, kvHeads: 1 };
    expect(kvDim(gqa)).toBe(16);
    const specs = paramSpecs(gqa);
    expect(specs.find((s) => s.name === 'model.layers.1.self_attn.k_proj.weight')?.shape).toEqual([16, 64]);
    expect(specs.find((s) => s.name === 'model.layers.1.self_attn.v_proj.weight')?.shape).toEqual([16, 64]);
    expect(specs.find((s) => s.name === 'model.layers.1.self_attn.q_proj.weight')?.shape).toEqual([64, 64]);
    expect(specs.find((s) => s.name === 'model.layers.1.self_attn.o_proj.weight')?.shape).toEqual([64, 64]);
    // Per layer, k_proj and v_proj lose (64 − 16) · 64 values each.
    expect(parameterCount(gqa)).toBe(parameterCount(mha) - 2 * 2 * 48 * 64);
  });
});

const { backends, gpu } = await testBackends();
afterAll(() => gpu?.ctx.device.destroy());

describe('GQA ≡ multi-head attention with repeated kv heads (repeat_kv on k_proj, v_proj)', () => {
  const batch = rowPerSequence([
    [1, 4, 2, 6, 3, 9, 10, 2],
    [2, 5, 5, 7],
    [6, 1, 3, 0, 8, 12],
  ]);
  const seed = Float32Array.from({ length: batch.rows * batch.width }, (_, i) => Math.sin(1.3 * i + 0.4));

  async function run(ops: Ops, c: ModelConfig, w: Map<string, Float32Array>) {
    const model = new Model(ops, c);
    model.setWeights(w);
    const { logp } = await model.score(batch);
    model.zeroGrad();
    await model.backward(seed);
    return { logp, grads: await model.getGradients() };
  }

  it.each(backends)(
    'on %s: equal log-probs; k_proj and v_proj gradients are the group sums, the others equal',
    async (name, makeOps) => {
      const ops = makeOps();
      const w = randomWeights(GQA, 21);
      const gqa = await run(ops, GQA, w);
      const mha = await run(ops, { ...GQA, kvHeads: GQA.heads }, repeatKvWeights(w, GQA));
      // The CPU references see the very same numbers head by head: equal bit for bit there.
      const exact = name === 'cpu';
      const r = compareClose(gqa.logp, mha.logp, {
        atol: exact ? 0 : 2e-6,
        rtol: exact ? 0 : 1e-5,
        label: `${name} logp`,
      });
      expect(r.ok, r.message).toBe(true);
      expect(Math.min(...gqa.logp)).toBeLessThan(-0.5); // not trivially zero
      for (const [p, g] of gqa.grads) {
        const want = isKv(p) ? sumGroups(mha.grads.get(p)!, GQA) : mha.grads.get(p)!;
        const scale = Math.max(...Array.from(want, Math.abs));
        expect(scale, `${p}: gradient is not trivially zero`).toBeGreaterThan(1e-4);
        const c = compareClose(g, want, { atol: 1e-5 * scale, rtol: 1e-4, label: `${name} ${p}` });
        expect(c.ok, c.message).toBe(true);
      }
    },
  );
});

describe('sampling a GQA model with the KV cache equals the full forward', () => {
  // Uneven prompts, then three steps of one id per row: the cache holds kvHeads · hs per position.
  const prompts = [[1, 4, 2], [3], [5, 6, 1, 2, 4]];
  const steps = [
    [2, 5, 6],
    [1, 1, 3],
    [4, 2, 0],
  ];

  it.each(backends)('on %s: prefill and every step give the logits of the whole sequence', async (name, makeOps) => {
    const ops = makeOps();
    const model = new Model(ops, GQA);
    model.setWeights(randomWeights(GQA, 33));
    const V = GQA.vocab;
    const decoder = new Decoder(model, prompts.length, 9);
    const got = [await decoder.prefill(prompts)];
    for (const ids of steps) got.push(await decoder.step(ids));
    decoder.free();
    const full = prompts.map((p, b) => [...p, ...steps.map((s) => s[b])]);
    const batch = rowPerSequence(full);
    for (let i = 0; i <= steps.length; i++) {
      const at = prompts.map((p, b) => b * batch.width + p.length - 1 + i);
      const want = await model.logitsAt(batch, at);
      prompts.forEach((_, b) => {
        const r = compareClose(got[i].subarray(b * V, (b + 1) * V), want[b], {
          atol: 1e-5,
          rtol: 1e-5,
          label: `${name} row ${b} after ${i} steps`,
        });
        expect(r.ok, r.message).toBe(true);
      });
    }
    expect(decoder.cache.k[0].length).toBe(prompts.length * 9 * kvDim(GQA));
  });
});
