import { afterAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testGpuOps } from '../../kernels/common/node-test-gpu';
import { randomArray } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import { compareClose, expectClose } from '../../kernels/testing/expect-close';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { FlowModelConfig } from './config';
import { buildInputs, FLOW_2D, flowParamSpecs, layerDims, timeFeatures, validateFlowModelConfig } from './config';
import { VelocityField } from './model';

const SMALL: FlowModelConfig = { dim: 2, width: 8, hidden: 2, timeFeatures: 4, maxFrequency: 8 };

/** The MLP written from its formula in float64 (the spec the Ops forward is checked against). */
function mlpRef(
  c: FlowModelConfig,
  w: Map<string, Float32Array>,
  x: ArrayLike<number>,
  t: ArrayLike<number>,
): Float64Array {
  let a: Float64Array = Float64Array.from(buildInputs(x, t, c));
  const N = t.length;
  layerDims(c).forEach(([i, o], l) => {
    const W = w.get(`layers.${l}.weight`)!;
    const b = w.get(`layers.${l}.bias`)!;
    const z = new Float64Array(N * o);
    for (let r = 0; r < N; r++) {
      for (let j = 0; j < o; j++) {
        let s = b[j];
        for (let k = 0; k < i; k++) s += a[r * i + k] * W[j * i + k];
        z[r * o + j] = l < c.hidden ? s / (1 + Math.exp(-s)) : s;
      }
    }
    a = z;
  });
  return a;
}

function rows(N: number, seed: number) {
  return { x: randomArray(2 * N, seed, -2, 2), t: Float64Array.from(randomArray(N, seed + 1, 0, 1)) };
}

describe('flow model config', () => {
  it('lists (out, in) weights and biases per layer, and the time features by formula', () => {
    expect(flowParamSpecs(SMALL).map((s) => `${s.name}:${s.shape}`)).toEqual([
      'layers.0.weight:8,6',
      'layers.0.bias:8',
      'layers.1.weight:8,8',
      'layers.1.bias:8',
      'layers.2.weight:2,8',
      'layers.2.bias:2',
    ]);
    const f = new Float64Array(4);
    timeFeatures(f, 0, 0.3, SMALL); // ω = 1, 8
    expect(Array.from(f)).toEqual([Math.sin(0.3), Math.sin(2.4), Math.cos(0.3), Math.cos(2.4)]);
    expect(validateFlowModelConfig(FLOW_2D)).toEqual([]);
    expect(validateFlowModelConfig({ ...FLOW_2D, timeFeatures: 5, hidden: 0 })).toEqual([
      'hidden = 0: expected an integer in [1, 16]',
      'timeFeatures = 5: expected an even number (sin and cos per frequency)',
    ]);
  });
});

describe('velocity MLP on the CPU backend', () => {
  it('forward equals the float64 formula', async () => {
    const m = new VelocityField(createCpuOps(), FLOW_2D);
    m.initWeights(3);
    const { x, t } = rows(13, 5);
    const r = compareClose(await m.forward(x, t), mlpRef(FLOW_2D, await m.getWeights(), x, t), {
      atol: 1e-5,
      rtol: 1e-4,
      label: 'v',
    });
    expect(r.ok, r.message).toBe(true);
  });

  it('backward matches central finite differences of L = Σ w·v for every parameter', async () => {
    const ops = createCpuOps();
    const m = new VelocityField(ops, SMALL);
    m.initWeights(11);
    const N = 5;
    const { x, t } = rows(N, 7);
    const seed = Float64Array.from(randomArray(2 * N, 9));
    const lossOf = (v: Float32Array) => v.reduce((s, vi, i) => s + vi * seed[i], 0);
    await m.forward(x, t);
    m.zeroGrad();
    m.backward(seed);
    const grads = await m.getGradients();
    const weights = await m.getWeights();
    const h = 1e-2; // f32 forward: the step keeps rounding (~1e-7/h) below the O(h²) truncation
    for (const [name, w] of weights) {
      const fd = new Float64Array(w.length);
      for (let i = 0; i < w.length; i++) {
        const w0 = w[i];
        const at = async (value: number) => {
          w[i] = value;
          m.setWeights(weights);
          return lossOf(await m.forward(x, t));
        };
        fd[i] = ((await at(w0 + h)) - (await at(w0 - h))) / (2 * h);
        w[i] = w0;
      }
      m.setWeights(weights);
      const r = compareClose(grads.get(name)!, fd, { atol: 2e-4, rtol: 2e-3, label: `d${name}` });
      expect(r.ok, r.message).toBe(true);
    }
  });

  it('accumulates gradients until zeroGrad, and AdamW moves every parameter', async () => {
    const m = new VelocityField(createCpuOps(), SMALL);
    m.initWeights(1);
    const { x, t } = rows(4, 2);
    const dv = randomArray(8, 3);
    await m.forward(x, t);
    m.zeroGrad();
    m.backward(dv);
    const once = await m.getGradients();
    m.backward(dv);
    const twice = await m.getGradients();
    // The second backward's sums go on from the first's (kernels/matmul: accumulate), so twice is 2g up to float32 rounding.
    for (const [k, g] of once)
      expectClose(
        twice.get(k)!,
        Array.from(g, (v) => 2 * v),
        { atol: 1e-7, rtol: 1e-5, label: k },
      );
    const before = await m.getWeights();
    const norm = await m.step({
      lr: 1e-2,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0,
      maxGradNorm: 1e9,
      step: 1,
    });
    expect(norm).toBeGreaterThan(0);
    for (const [k, w] of await m.getWeights()) expect(Array.from(w)).not.toEqual(Array.from(before.get(k)!));
    expect(m.optimizerSteps).toBe(1);
  });

  it('refuses backward before forward and a wrong-sized seed', async () => {
    const m = new VelocityField(createCpuOps(), SMALL);
    expect(() => m.backward(new Float32Array(4))).toThrow(/before forward/);
    await m.forward(new Float32Array(4), [0.5, 0.5]);
    expect(() => m.backward(new Float32Array(3))).toThrow(/expected N·D = 2·2/);
  });
});

const wasm = await nodeWasmOps(1);
const gpu = await testGpuOps();

/** Forward, backward and one AdamW step of the default model on `ops`. */
async function oneStep(ops: Ops) {
  const m = new VelocityField(ops, FLOW_2D);
  m.initWeights(21);
  const N = 37;
  const { x, t } = rows(N, 22);
  const v = await m.forward(x, t);
  m.zeroGrad();
  m.backward(randomArray(2 * N, 23));
  const grads = await m.getGradients();
  const norm = await m.step({
    lr: 1e-3,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
    weightDecay: 0.01,
    maxGradNorm: 0.5,
    step: 1,
  });
  return { v, grads, norm, weights: await m.getWeights() };
}

describe.each([
  ['wasm', wasm],
  ['WebGPU', gpu],
] as const)('velocity MLP on %s ≡ CPU', (name, other) => {
  afterAll(() => {
    if (name === 'WebGPU') gpu?.ctx.device.destroy();
  });
  it.runIf(other)('forward, gradients, norm and AdamW step', async () => {
    const want = await oneStep(createCpuOps());
    const got = await oneStep(other!);
    const close = (a: ArrayLike<number>, b: ArrayLike<number>, label: string) => {
      const r = compareClose(a, b, { atol: 1e-5, rtol: 1e-4, label });
      expect(r.ok, r.message).toBe(true);
    };
    close(got.v, want.v, 'v');
    for (const [k, g] of want.grads) close(got.grads.get(k)!, g, `d${k}`);
    expect(got.norm).toBeCloseTo(want.norm, 4);
    for (const [k, w] of want.weights) close(got.weights.get(k)!, w, k);
  });
});

describe('seeded init', () => {
  it('is reproducible and within ±1/√fan_in', async () => {
    const a = new VelocityField(createCpuOps(), FLOW_2D);
    const b = new VelocityField(createCpuOps(), FLOW_2D);
    a.initWeights(5);
    b.initWeights(5);
    const [wa, wb] = [await a.getWeights(), await b.getWeights()];
    for (const [k, w] of wa) expect(Array.from(w)).toEqual(Array.from(wb.get(k)!));
    const w0 = wa.get('layers.0.weight')!;
    expect(Math.max(...w0.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(18));
    expect(a.size).toBe(9666);
  });
});
