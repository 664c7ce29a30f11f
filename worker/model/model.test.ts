import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { compareClose, expectClose } from '../../kernels/testing/expect-close';
import { numericGradAsync, relativeError } from '../../kernels/testing/finite-diff';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import type { PackedInput } from './packing';
import { Model } from './model';
import { numel, paramSpecs } from './params';

/** Random weights with a larger spread than the init, so that every gradient is well above float32 noise. */
function randomWeights(c: ModelConfig, seed: number, scale = 0.4): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const w = new Map<string, Float32Array>();
  for (const s of paramSpecs(c)) {
    const n = numel(s.shape);
    w.set(
      s.name,
      Float32Array.from({ length: n }, () =>
        s.shape.length === 1 ? 1 + scale * (rand() - 0.5) : scale * (rand() * 2 - 1),
      ),
    );
  }
  return w;
}

/** Packs chains (lists of ids) into rows given as lists of chain indices. */
function packRows(chains: number[][], rows: number[][], width: number): PackedInput {
  const inputIds = new Int32Array(rows.length * width);
  const segmentIds = new Int32Array(rows.length * width);
  const positions = new Int32Array(rows.length * width);
  rows.forEach((row, r) => {
    let t = 0;
    row.forEach((ci, s) => {
      chains[ci].forEach((id, p) => {
        inputIds[r * width + t] = id;
        segmentIds[r * width + t] = s + 1;
        positions[r * width + t] = p;
        t++;
      });
    });
    if (t > width) throw new Error('row overflow');
  });
  return { rows: rows.length, width, inputIds, segmentIds, positions };
}

const TINY: ModelConfig = { ...modelPreset('tiny', 7), layers: 2, tiedEmbeddings: false };
/** Grouped-query attention: 4 query heads over 2 kv heads (hs = 2), k_proj and v_proj (4, 8). */
const TINY_GQA: ModelConfig = { ...TINY, heads: 4, kvHeads: 2 };
const CHAINS = [
  [1, 4, 2, 6, 3],
  [2, 5, 5],
  [6, 1, 3, 0],
];
const BATCH = packRows(CHAINS, [[0, 1], [2]], 9);
/** Fixed per-id seed: L = Σ_t c_t · logp_t. */
const SEED = Float32Array.from({ length: BATCH.rows * BATCH.width }, (_, i) => Math.sin(1.7 * i + 0.3));

async function lossOf(model: Model, batch: PackedInput, c: ArrayLike<number>): Promise<number> {
  const { logp } = await model.score(batch);
  let L = 0;
  for (let i = 0; i < logp.length; i++) L += c[i] * logp[i];
  return L;
}

const { backends, wasm, gpu } = await testBackends();

describe.each([
  ['cpu', createCpuOps],
  ['wasm', () => wasm],
] as const)('model gradient check (%s backend, central finite differences)', (_backend, makeOps) => {
  // Untied: every tensor on its own. Tied (the shipped base): the embedding's gradient is the sum
  // of the lookup's and the LM head's, both accumulated into one tensor.
  it.each([
    ['untied', TINY],
    ['tied', { ...TINY, tiedEmbeddings: true }],
    ['grouped-query (heads 4, kvHeads 2)', TINY_GQA],
    ['multi-query (heads 2, kvHeads 1)', { ...TINY, kvHeads: 1 }],
  ] as const)('every parameter tensor of a 2-layer %s model', async (_name, config: ModelConfig) => {
    const ops = makeOps();
    const model = new Model(ops, config);
    const weights = randomWeights(config, 3);
    model.setWeights(weights);
    await model.score(BATCH);
    model.zeroGrad();
    await model.backward(SEED);
    const grads = await model.getGradients();
    for (const s of paramSpecs(config)) {
      const fd = await numericGradAsync(
        weights.get(s.name)!,
        async () => {
          model.setWeights(weights);
          return lossOf(model, BATCH, SEED);
        },
        2e-3,
      );
      model.setWeights(weights);
      const { error, fdNormSq } = relativeError(grads.get(s.name)!, fd);
      expect(fdNormSq, `${s.name}: finite-difference gradient is zero, the check would be vacuous`).toBeGreaterThan(
        1e-8,
      );
      expect(error, `${s.name}: relative error of the analytic gradient`).toBeLessThan(1e-2);
    }
  });
});

async function logpOfChain(
  ops: Ops,
  c: ModelConfig,
  w: Map<string, Float32Array>,
  batch: PackedInput,
  row: number,
  start: number,
  len: number,
) {
  const model = new Model(ops, c);
  model.setWeights(w);
  const { logp } = await model.score(batch);
  return logp.slice(row * batch.width + start, row * batch.width + start + len);
}

describe.each(backends)('packing invariance on %s', (_name, makeOps) => {
  it('a chain gets the same log-probs alone, packed after others, and with chains permuted', async () => {
    const ops = makeOps();
    const w = randomWeights(TINY, 5);
    const alone = await logpOfChain(ops, TINY, w, packRows(CHAINS, [[0]], 9), 0, 0, 5);
    const after = await logpOfChain(ops, TINY, w, packRows(CHAINS, [[1, 0]], 9), 0, 3, 5);
    const permuted = await logpOfChain(ops, TINY, w, packRows(CHAINS, [[2], [1, 0]], 9), 1, 3, 5);
    expect(alone[0]).toBe(0); // a chain start predicts nothing
    expect(Math.min(...alone.slice(1))).toBeLessThan(0);
    expectClose(after, alone, { atol: 2e-6, rtol: 1e-5, label: 'packed after another chain' });
    expectClose(permuted, alone, { atol: 2e-6, rtol: 1e-5, label: 'permuted across rows' });
  });
});

describe.each([
  ['WebGPU', gpu],
  ['wasm', wasm],
] as const)('%s ≡ CPU', (_name, other) => {
  it.runIf(other).each([
    ['multi-head', 2, 2],
    ['grouped-query (heads 4, kvHeads 2)', 4, 2],
  ] as const)('%s: forward log-probs, entropies and every gradient agree', async (_kind, heads, kvHeads) => {
    const c = { ...modelPreset('tiny', 11), layers: 2, dModel: 16, heads, kvHeads, ffn: 40 };
    const w = randomWeights(c, 9, 0.2);
    const batch = packRows(
      [
        [1, 4, 2, 6, 3, 9, 10, 2],
        [2, 5, 5],
        [6, 1, 3, 0, 8],
        [7, 7, 1],
      ],
      [
        [0, 1],
        [2, 3],
      ],
      12,
    );
    const seed = Float32Array.from({ length: batch.rows * batch.width }, (_, i) => Math.cos(0.9 * i));
    const results = [];
    for (const ops of [createCpuOps(), other!]) {
      const model = new Model(ops, c);
      model.setWeights(w);
      const scored = await model.score(batch);
      model.zeroGrad();
      await model.backward(seed);
      results.push({ scored, grads: await model.getGradients() });
    }
    const [cpu, got] = results;
    expectClose(got.scored.logp, cpu.scored.logp, { atol: 1e-4, rtol: 1e-4, label: 'logp' });
    expectClose(got.scored.entropy, cpu.scored.entropy, { atol: 1e-4, rtol: 1e-4, label: 'entropy' });
    for (const [name, g] of cpu.grads) {
      const scale = Math.max(...g.map(Math.abs));
      const r = compareClose(got.grads.get(name)!, g, { atol: 1e-4 * scale, rtol: 1e-3, label: name });
      expect(r.ok, r.message).toBe(true);
    }
  });
});

describe('value head (PPO critic)', () => {
  const VALUE_SEED = Float32Array.from({ length: BATCH.rows * BATCH.width }, (_, i) => Math.cos(0.7 * i + 0.2));

  async function total(model: Model): Promise<number> {
    const { logp, values } = await model.score(BATCH);
    let L = 0;
    for (let i = 0; i < logp.length; i++) L += SEED[i] * logp[i] + VALUE_SEED[i] * values![i];
    return L;
  }

  it('gradients of logp and value terms together match finite differences (value head and trunk)', async () => {
    const ops = createCpuOps();
    const model = new Model(ops, TINY, { valueHead: true });
    const weights = randomWeights(TINY, 8);
    const head = Float32Array.from({ length: TINY.dModel }, (_, i) => Math.sin(i + 1) * 0.5);
    model.setWeights(weights);
    model.setValueHead(head);
    const { values } = await model.score(BATCH);
    expect(values).not.toBeNull();
    expect(values![0]).toBe(0); // aligned like logp: a chain start has no state before it
    model.zeroGrad();
    await model.backward(SEED, VALUE_SEED);
    const gHead = (await model.getValueHeadGradient())!;
    const gNorm = (await model.getGradients()).get('model.norm.weight')!;
    const h = 2e-3;
    for (let i = 0; i < head.length; i++) {
      const w = head.slice();
      w[i] = head[i] + h;
      model.setValueHead(w);
      const lp = await total(model);
      w[i] = head[i] - h;
      model.setValueHead(w);
      const lm = await total(model);
      expect(gHead[i]).toBeCloseTo((lp - lm) / (2 * h), 2);
    }
    model.setValueHead(head);
    const norm = weights.get('model.norm.weight')!;
    for (let i = 0; i < norm.length; i++) {
      const x = norm[i];
      norm[i] = x + h;
      model.setWeights(weights);
      const lp = await total(model);
      norm[i] = x - h;
      model.setWeights(weights);
      const lm = await total(model);
      norm[i] = x;
      expect(gNorm[i]).toBeCloseTo((lp - lm) / (2 * h), 2);
    }
  });

  it.each([
    ['WebGPU', gpu],
    ['wasm', wasm],
  ] as const)('runs the same on %s as on the CPU', async (_name, other) => {
    if (!other) return; // no adapter outside CI (testGpuOps throws under CI)
    const w = randomWeights(TINY, 9);
    const head = Float32Array.from({ length: TINY.dModel }, (_, i) => 0.3 - 0.05 * i);
    const out = [];
    for (const ops of [createCpuOps(), other]) {
      const m = new Model(ops, TINY, { valueHead: true });
      m.setWeights(w);
      m.setValueHead(head);
      const { values } = await m.score(BATCH);
      m.zeroGrad();
      await m.backward(SEED, VALUE_SEED);
      out.push({ values: values!, g: (await m.getValueHeadGradient())! });
    }
    expectClose(out[1].values, out[0].values, { atol: 1e-5, rtol: 1e-4, label: 'values' });
    expectClose(out[1].g, out[0].g, { atol: 1e-4, rtol: 1e-3, label: 'value head gradient' });
  });
});
