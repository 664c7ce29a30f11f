/**
 * LoRA (lora.ts) on the model: the adapted forward against the merged weights W + s·B·A on a plain
 * model, the adapters' gradients against the chain rule through the full model's weight gradient
 * (dB = s·G·Aᵀ, dA = s·Bᵀ·G) and against finite differences, the base frozen through a step, the
 * base alone (the reference policy), decoding, micro-batches and the weights' round trip.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mulberry32 } from '../../kernels/common/random';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { expectClose } from '../../kernels/testing/expect-close';
import { numericGradAsync, relativeError } from '../../kernels/testing/finite-diff';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Decoder } from './kv-cache';
import type { LoraConfig } from './lora';
import {
  adapterMaskSeed,
  allocAdapterSet,
  initialAdapters,
  loraActs,
  loraScale,
  loraSpecs,
  mergeAdapters,
  validateLoraConfig,
} from './lora';
import { adapt } from './forward';
import { allocActs } from './tensors';
import type { LayerParams } from './tensors';
import { dropoutRef } from '../../kernels/dropout/dropout.ref';
import { Model } from './model';
import type { PackedInput } from './packing';
import { rowPerSequence } from './packing';
import { initialWeights } from './params';

/** Grouped-query (2 heads over 1 kv head, hs 4: WebGPU's attention needs hs a multiple of 4), untied. */
const CONFIG: ModelConfig = { ...modelPreset('tiny', 9), layers: 2, kvHeads: 1, tiedEmbeddings: false };
const ALL: LoraConfig = { rank: 3, alpha: 5, dropout: 0, targetModules: ['all-linear'] };
const BATCH: PackedInput = rowPerSequence(
  [
    [1, 4, 2, 6, 3, 8],
    [2, 5, 5],
    [6, 1, 3, 0, 7, 7],
    [3, 3],
  ],
  6,
);
const rand = mulberry32(5);
const SEED = Float32Array.from({ length: 24 }, () => rand() - 0.5);
const BASE = initialWeights(CONFIG, 1);

/** Adapters of PEFT's init, with B random too (B = 0 would make the adapted model the base and dA zero). */
function adapters(lora: LoraConfig, seed: number): Map<string, Float32Array> {
  const r = mulberry32(seed);
  const out = initialAdapters(CONFIG, lora, seed);
  for (const [name, t] of out) if (name.includes('lora_B')) for (let i = 0; i < t.length; i++) t[i] = 0.3 * (r() - 0.5);
  return out;
}

async function lossOf(model: Model, dropoutSeed?: number): Promise<number> {
  const { logp } = await model.score(BATCH, undefined, dropoutSeed === undefined ? {} : { dropoutSeed });
  return logp.reduce((s, x, i) => s + SEED[i] * x, 0);
}

const { backends } = await testBackends();

describe('LoRA config', () => {
  it('names each bad field and the allowed values', () => {
    expect(validateLoraConfig(ALL)).toEqual([]);
    const p = validateLoraConfig({ rank: 0, alpha: -1, dropout: 1, targetModules: ['q_proj', 'qkv'] });
    expect(p.join('\n')).toMatch(/lora\.rank = 0; expected an integer ≥ 1/);
    expect(p.join('\n')).toMatch(/lora\.alpha = -1/);
    expect(p.join('\n')).toMatch(/lora\.dropout = 1; expected a number in \[0, 1\) \(PEFT lora_dropout\)/);
    expect(validateLoraConfig({ ...ALL, dropout: 0.1 })).toEqual([]);
    expect(p.join('\n')).toMatch(
      /'qkv'; expected some of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj/,
    );
    expect(() => new Model(createCpuOps(), CONFIG, { lora: { ...ALL, targetModules: [] } })).toThrow(
      /lora\.targetModules is empty/,
    );
  });

  it('names adapters as PEFT does, A (r, in) and B (out, r)', () => {
    const specs = loraSpecs(CONFIG, { ...ALL, targetModules: ['v_proj', 'down_proj'] });
    expect(specs.map((s) => `${s.name} [${s.shape}]`)).toEqual([
      'model.layers.0.self_attn.v_proj.lora_A.weight [3,8]',
      'model.layers.0.self_attn.v_proj.lora_B.weight [4,3]',
      'model.layers.0.mlp.down_proj.lora_A.weight [3,12]',
      'model.layers.0.mlp.down_proj.lora_B.weight [8,3]',
      'model.layers.1.self_attn.v_proj.lora_A.weight [3,8]',
      'model.layers.1.self_attn.v_proj.lora_B.weight [4,3]',
      'model.layers.1.mlp.down_proj.lora_A.weight [3,12]',
      'model.layers.1.mlp.down_proj.lora_B.weight [8,3]',
    ]);
  });
});

describe.each(backends)('LoRA on the model (%s)', (_name, makeOps) => {
  it('starts as the base (B = 0), and the adapted log-probs equal a plain model on the merged weights', async () => {
    const ops = makeOps();
    const lora = new Model(ops, CONFIG, { lora: ALL });
    lora.setWeights(BASE);
    const plain = new Model(ops, CONFIG, { frozen: true });
    plain.setWeights(BASE);
    expectClose((await lora.score(BATCH)).logp, (await plain.score(BATCH)).logp, {
      label: 'B = 0: the base',
      atol: 1e-6,
      rtol: 0,
    });

    const ad = adapters(ALL, 7);
    lora.setWeights(new Map([...BASE, ...ad]));
    const merged = mergeAdapters(CONFIG, ALL, BASE, ad);
    plain.setWeights(merged);
    const adapted = await lora.score(BATCH);
    const want = await plain.score(BATCH);
    expectClose(adapted.logp, want.logp, { label: 'adapted vs merged', atol: 1e-4, rtol: 0 });
    // The adapters change the model: the check is not the base against itself.
    plain.setWeights(BASE);
    const base = await plain.score(BATCH);
    expect(Math.max(...adapted.logp.map((x, i) => Math.abs(x - base.logp[i])))).toBeGreaterThan(1e-2);
    // The base alone (the reference policy under LoRA) is the plain base model's.
    expectClose((await lora.score(BATCH, undefined, { adapters: false })).logp, base.logp, {
      label: 'adapters off: the base',
      atol: 1e-6,
      rtol: 0,
    });
    await expect(lora.backward(SEED)).rejects.toThrow(/scored without the adapters/);
  });

  it("gradients: the chain rule through the full model's weight gradient, dB = s·G·Aᵀ and dA = s·Bᵀ·G", async () => {
    const ops = makeOps();
    const lora = new Model(ops, CONFIG, { lora: ALL });
    const ad = adapters(ALL, 9);
    lora.setWeights(new Map([...BASE, ...ad]));
    await lora.score(BATCH);
    lora.zeroGrad();
    await lora.backward(SEED);
    const g = await lora.getGradients();
    expect([...g.keys()]).toEqual(loraSpecs(CONFIG, ALL).map((s) => s.name));

    const full = new Model(ops, CONFIG);
    full.setWeights(mergeAdapters(CONFIG, ALL, BASE, ad));
    await full.score(BATCH);
    full.zeroGrad();
    await full.backward(SEED);
    const G = await full.getGradients();
    const s = loraScale(ALL),
      r = ALL.rank;
    for (const sp of loraSpecs(CONFIG, ALL)) {
      if (sp.part !== 'a') continue;
      const Gw = G.get(sp.weight)!;
      const A = ad.get(sp.name)!,
        B = ad.get(sp.name.replace('lora_A', 'lora_B'))!;
      const inDim = sp.shape[1],
        outDim = B.length / r;
      const dA = new Float64Array(r * inDim),
        dB = new Float64Array(outDim * r);
      for (let i = 0; i < outDim; i++)
        for (let j = 0; j < inDim; j++)
          for (let k = 0; k < r; k++) {
            dA[k * inDim + j] += s * B[i * r + k] * Gw[i * inDim + j];
            dB[i * r + k] += s * Gw[i * inDim + j] * A[k * inDim + j];
          }
      const scaleOf = (x: ArrayLike<number>) => Math.max(1e-3, ...Array.from(x, Math.abs));
      expectClose(g.get(sp.name)!, dA, { label: sp.name, atol: 2e-3 * scaleOf(dA), rtol: 0 });
      expectClose(g.get(sp.name.replace('lora_A', 'lora_B'))!, dB, {
        label: `${sp.name} (B)`,
        atol: 2e-3 * scaleOf(dB),
        rtol: 0,
      });
    }
  });

  it('a step moves the adapters and leaves every base weight as it was; the optimizer state holds the adapters alone', async () => {
    const ops = makeOps();
    const lora = new Model(ops, CONFIG, { lora: { ...ALL, targetModules: ['q_proj', 'v_proj'] } });
    lora.setWeights(BASE);
    lora.initAdapters(3);
    const before = await lora.getWeights();
    await lora.score(BATCH);
    lora.zeroGrad();
    await lora.backward(SEED);
    await lora.step({ lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, step: 1 });
    const after = await lora.getWeights();
    for (const [name, w] of BASE) expect(after.get(name), name).toEqual(w);
    const changed = [...after.keys()].filter(
      (n) => n.includes('lora_') && after.get(n)!.some((x, i) => x !== before.get(n)![i]),
    );
    expect(changed.length).toBe(8); // A and B of q_proj and v_proj in 2 layers
    const st = await lora.getOptimizerState();
    expect([...st.m.keys()].every((n) => n.includes('.lora_'))).toBe(true);
    expect(st.m.size).toBe(8);
  });

  it('samples with the KV cache as the merged model does', async () => {
    const ops = makeOps();
    const lora = new Model(ops, CONFIG, { lora: ALL, frozen: true });
    const ad = adapters(ALL, 4);
    lora.setWeights(new Map([...BASE, ...ad]));
    const plain = new Model(ops, CONFIG, { frozen: true });
    plain.setWeights(mergeAdapters(CONFIG, ALL, BASE, ad));
    const run = async (m: Model) => {
      const d = new Decoder(m, 2, 8);
      const out = [await d.prefill([[1, 2, 3], [4]])];
      out.push(await d.step([5, 6]), await d.step([7, 1]));
      d.free();
      return out;
    };
    const [a, b] = [await run(lora), await run(plain)];
    for (let k = 0; k < a.length; k++) expectClose(a[k], b[k], { label: `decoding step ${k}`, atol: 1e-4, rtol: 0 });
  });
});

/**
 * Every adapter tensor's gradient against central finite differences of the loss (cpu), the forward
 * scored with `dropoutSeed` (its masks drawn again by the backward and by every probe) when given.
 */
async function expectFiniteDifferences(lora: LoraConfig, dropoutSeed?: number): Promise<void> {
  const model = new Model(createCpuOps(), CONFIG, { lora });
  const ad = adapters(lora, 12);
  // A wider spread than the init (std 0.3), so that every gradient stands well above float32 noise.
  const base = new Map([...BASE].map(([n, w]) => [n, n.includes('norm') ? w : w.map((x) => 15 * x)]));
  const weights = new Map([...base, ...ad]);
  model.setWeights(weights);
  await model.score(BATCH, undefined, dropoutSeed === undefined ? {} : { dropoutSeed });
  model.zeroGrad();
  await model.backward(SEED);
  const grads = await model.getGradients();
  for (const [name, w] of ad) {
    const fd = await numericGradAsync(
      w,
      async () => {
        model.setWeights(weights);
        return lossOf(model, dropoutSeed);
      },
      1e-2,
    );
    model.setWeights(weights);
    const { error, fdNormSq } = relativeError(grads.get(name)!, fd);
    expect(fdNormSq, `${name}: the finite-difference gradient is zero; the check would be vacuous`).toBeGreaterThan(
      1e-10,
    );
    expect(error, `${name}: relative error`).toBeLessThan(1e-2);
  }
}

describe('LoRA gradients by finite differences (cpu)', () => {
  it('every adapter tensor of a 2-layer model, LoRA on every projection', async () => {
    await expectFiniteDifferences(ALL);
  });
});

describe('LoRA weights', () => {
  it('getWeights holds base and adapters; a new LoRA model loads them, a plain one refuses them', async () => {
    const ops = createCpuOps();
    const a = new Model(ops, CONFIG, { lora: ALL });
    a.setWeights(new Map([...BASE, ...adapters(ALL, 2)]));
    const w = await a.getWeights();
    expect(w.size).toBe(BASE.size + loraSpecs(CONFIG, ALL).length);
    const b = new Model(ops, CONFIG, { lora: ALL });
    b.setWeights(w);
    expect((await b.score(BATCH)).logp).toEqual((await a.score(BATCH)).logp);
    expect(() => new Model(ops, CONFIG).setWeights(w)).toThrow(/hold LoRA adapters .* this model has none/);
    const missing = new Map(w);
    missing.delete('model.layers.1.mlp.up_proj.lora_B.weight');
    expect(() => b.setWeights(missing)).toThrow(/'model\.layers\.1\.mlp\.up_proj\.lora_B\.weight' missing/);
    const merged = await a.getMergedWeights();
    expect([...merged.keys()].some((n) => n.includes('lora_'))).toBe(false);
    const plain = new Model(ops, CONFIG, { frozen: true });
    plain.setWeights(merged);
    expectClose((await plain.score(BATCH)).logp, (await a.score(BATCH)).logp, {
      label: 'merged weights',
      atol: 1e-5,
      rtol: 0,
    });
  });

  it('a batch in passes gives the gradients of one pass', async () => {
    const ops = createCpuOps();
    const grads = async (idsPerPass?: number) => {
      const m = new Model(ops, CONFIG, { lora: ALL, ...(idsPerPass ? { idsPerPass } : {}) });
      m.setWeights(new Map([...BASE, ...adapters(ALL, 6)]));
      await m.score(BATCH);
      m.zeroGrad();
      await m.backward(SEED);
      return m.getGradients();
    };
    const one = await grads(),
      three = await grads(7);
    for (const [name, g] of one) expectClose(three.get(name)!, g, { label: name, atol: 1e-6, rtol: 1e-5 });
  });
});

describe('LoRA adapter dropout', () => {
  const DROP: LoraConfig = { ...ALL, dropout: 0.3 };

  it("the branch reads m ⊙ x / (1 − p), m the kernel's mask for its layer and projection (hand-computed)", async () => {
    const ops = createCpuOps();
    const [N, C, F, r, s] = [5, CONFIG.dModel, CONFIG.ffn, DROP.rank, loraScale(DROP)];
    const set = allocAdapterSet(ops, CONFIG, DROP, 't', s);
    const ad = adapters(DROP, 3);
    for (const [name, t] of set.byName) ops.upload(t, ad.get(name)!);
    const salts = set.layers.flatMap((l) => Object.values(l).map((a) => a.salt));
    expect(new Set(salts).size, 'every adapter draws a mask of its own').toBe(salts.length);
    const acts = allocActs(ops, CONFIG, 1, N, { lora: loraActs(DROP) });
    acts.lora!.dropout = { p: 0.3, seed: 77, offset: 11 };
    const r2 = mulberry32(4);
    const x = Float32Array.from({ length: N * F }, () => r2() - 0.5);
    const y0 = Float32Array.from({ length: N * C }, () => r2() - 0.5);
    const [inp, y] = [ops.alloc('inp', N * F), ops.alloc('y', N * C)];
    ops.upload(inp, x);
    ops.upload(y, y0);
    const ad1 = set.layers[1].wd!;
    adapt(ops, { adapters: set.layers[1] } as LayerParams, 'wd', acts.layers[1], acts, inp, y, N, F, C);

    // By hand: the mask as dropoutRef draws it for this adapter (its seed, offset · in), then y0 + s·(x̃·Aᵀ)·Bᵀ.
    const xd = new Float32Array(N * F);
    dropoutRef(xd, x, N * F, { p: 0.3, seed: adapterMaskSeed(77, ad1.salt), offset: 11 * F });
    const dropped = xd.filter((v, i) => v === 0 && x[i] !== 0).length;
    expect(dropped / (N * F)).toBeGreaterThan(0.15);
    expect(dropped / (N * F)).toBeLessThan(0.45);
    const A = ad.get('model.layers.1.mlp.down_proj.lora_A.weight')!,
      B = ad.get('model.layers.1.mlp.down_proj.lora_B.weight')!;
    const want = Float64Array.from(y0);
    for (let n = 0; n < N; n++)
      for (let k = 0; k < r; k++) {
        let u = 0;
        for (let j = 0; j < F; j++) u += xd[n * F + j] * A[k * F + j];
        for (let o = 0; o < C; o++) want[n * C + o] += s * u * B[o * r + k];
      }
    expectClose(await ops.read(y), want, { label: 'dropped-out branch', atol: 1e-5, rtol: 0 });
  });

  it('gradients by finite differences of every adapter tensor, the masks drawn again by the backward (cpu)', async () => {
    await expectFiniteDifferences(DROP, 5);
  });

  it('a batch in passes draws the masks of one pass: log-probs bit for bit, gradients to summation order (cpu)', async () => {
    const ops = createCpuOps();
    const run = async (idsPerPass?: number) => {
      const m = new Model(ops, CONFIG, { lora: DROP, ...(idsPerPass ? { idsPerPass } : {}) });
      m.setWeights(new Map([...BASE, ...adapters(DROP, 6)]));
      const { logp } = await m.score(BATCH, undefined, { dropoutSeed: 9 });
      m.zeroGrad();
      await m.backward(SEED);
      return { logp, grads: await m.getGradients() };
    };
    const one = await run(),
      three = await run(7);
    expect(Array.from(three.logp)).toEqual(Array.from(one.logp));
    for (const [name, g] of one.grads) expectClose(three.grads.get(name)!, g, { label: name, atol: 1e-6, rtol: 1e-5 });
  });

  describe.each(backends)('(%s)', (_name, makeOps) => {
    it("a seed draws its masks again, another seed others, none scores without dropout; the CPU's numbers", async () => {
      const ops = makeOps();
      const weights = new Map([...BASE, ...adapters(DROP, 8)]);
      const [m, plain] = [new Model(ops, CONFIG, { lora: DROP }), new Model(ops, CONFIG, { lora: ALL })];
      m.setWeights(weights);
      plain.setWeights(weights);
      const a = (await m.score(BATCH, undefined, { dropoutSeed: 1 })).logp;
      expect(Array.from((await m.score(BATCH, undefined, { dropoutSeed: 1 })).logp)).toEqual(Array.from(a));
      const b = (await m.score(BATCH, undefined, { dropoutSeed: 2 })).logp;
      expect(Math.max(...a.map((x, i) => Math.abs(x - b[i])))).toBeGreaterThan(1e-3);
      expect(Array.from((await m.score(BATCH)).logp)).toEqual(Array.from((await plain.score(BATCH)).logp));
      await expect(m.score(BATCH, undefined, { dropoutSeed: -1 })).rejects.toThrow(/dropoutSeed = -1/);

      const cpu = new Model(createCpuOps(), CONFIG, { lora: DROP });
      cpu.setWeights(weights);
      const gradsOf = async (model: Model) => {
        const { logp } = await model.score(BATCH, undefined, { dropoutSeed: 3 });
        model.zeroGrad();
        await model.backward(SEED);
        return { logp, grads: await model.getGradients() };
      };
      const [got, want] = [await gradsOf(m), await gradsOf(cpu)];
      expectClose(got.logp, want.logp, { label: 'log-probs under dropout', atol: 1e-4, rtol: 0 });
      for (const [name, g] of want.grads) expectClose(got.grads.get(name)!, g, { label: name, atol: 1e-4, rtol: 1e-3 });
    });
  });
});
