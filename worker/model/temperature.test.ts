import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import { expectClose } from '../../kernels/testing/expect-close';
import { numericGradAsync, relativeError } from '../../kernels/testing/finite-diff';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Model } from './model';
import type { PackedInput } from './packing';
import { OUTSIDE_SUPPORT } from './packing';
import { numel, paramSpecs } from './params';

// Model.score at a sampling temperature T: log_softmax(l / T) of the untempered logits l, and a
// backward through the same 1/T (verl's actor: `logits.div_(temperature)` before the log-softmax).

const T = 0.7;
const C: ModelConfig = { ...modelPreset('tiny', 7), layers: 2, tiedEmbeddings: false };

/** Two rows: chains [1 4 2 6 3] and [2 5 5] in row 0, [6 1 3 0] and padding in row 1 (width 9). */
const BATCH: PackedInput = {
  rows: 2,
  width: 9,
  inputIds: Int32Array.of(1, 4, 2, 6, 3, 2, 5, 5, 0, 6, 1, 3, 0, 0, 0, 0, 0, 0),
  segmentIds: Int32Array.of(1, 1, 1, 1, 1, 2, 2, 2, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0),
  positions: Int32Array.of(0, 1, 2, 3, 4, 0, 1, 2, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0),
};
const N = BATCH.rows * BATCH.width;
/** Fixed per-id seed: L = Σ_t c_t · logp_t. */
const SEED = Float32Array.from({ length: N }, (_, i) => Math.sin(1.7 * i + 0.3));

/** Random weights with a larger spread than the init, so that every gradient is well above float32 noise. */
function randomWeights(seed: number, spread = 0.4): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const w = new Map<string, Float32Array>();
  for (const s of paramSpecs(C)) {
    const n = numel(s.shape);
    const values = () => (s.shape.length === 1 ? 1 + spread * (rand() - 0.5) : spread * (rand() * 2 - 1));
    w.set(s.name, Float32Array.from({ length: n }, values));
  }
  return w;
}

/** Whether entry i continues a chain (it has a log-prob, predicted by entry i − 1). */
const continues = (b: PackedInput, i: number) =>
  i % b.width > 0 && b.segmentIds[i] !== 0 && b.segmentIds[i] === b.segmentIds[i - 1];

/** log_softmax(z / T) and its entropy, in float64, from a row of untempered logits. */
function tempered(z: ArrayLike<number>, temperature: number): { logp: Float64Array; entropy: number } {
  const s = Array.from(z, (x) => x / temperature);
  const m = Math.max(...s);
  const lse = m + Math.log(s.reduce((a, x) => a + Math.exp(x - m), 0));
  const logp = Float64Array.from(s, (x) => x - lse);
  return { logp, entropy: -logp.reduce((h, lp) => h + Math.exp(lp) * lp, 0) };
}

const { backends, wasm } = await testBackends();

describe.each(backends)('Model.score at a temperature (%s)', (_name, makeOps) => {
  it('scores log_softmax(l / T) and its entropy, from the untempered logits; T = 1 is the default', async () => {
    const model = new Model(makeOps(), C);
    model.setWeights(randomWeights(3));
    const at = Array.from({ length: N }, (_, i) => i);
    const logits = await model.logitsAt(BATCH, at);
    const { logp, entropy } = await model.score(BATCH, undefined, { temperature: T });
    const untempered = await model.score(BATCH);
    const one = await model.score(BATCH, undefined, { temperature: 1 });
    expect(one.logp).toEqual(untempered.logp);
    const want = new Float64Array(N);
    const wantH = new Float64Array(N);
    const wantOne = new Float64Array(N);
    for (let i = 0; i < N; i++) {
      if (!continues(BATCH, i)) continue;
      const d = tempered(logits[i - 1], T);
      want[i] = d.logp[BATCH.inputIds[i]];
      wantH[i] = d.entropy;
      wantOne[i] = tempered(logits[i - 1], 1).logp[BATCH.inputIds[i]];
    }
    expectClose(logp, want, { atol: 2e-5, rtol: 1e-5, label: `logp at T = ${T}` });
    expectClose(entropy, wantH, { atol: 2e-5, rtol: 1e-5, label: `entropy at T = ${T}` });
    expectClose(untempered.logp, wantOne, { atol: 2e-5, rtol: 1e-5, label: 'logp at T = 1' });
    // The temperature changes the scores: the comparison above could fail.
    expect(Math.max(...want.map((x, i) => Math.abs(x - wantOne[i])))).toBeGreaterThan(1e-2);
  });

  it('divides the biased logits: a support bias then T gives log_softmax((l + bias) / T) over the support', async () => {
    const model = new Model(makeOps(), C);
    model.setWeights(randomWeights(4));
    const V = C.vocab;
    const logits = await model.logitsAt(
      BATCH,
      Array.from({ length: N }, (_, i) => i),
    );
    // Every position keeps ids {0, 1, 2} and its own target: outside them the bias is OUTSIDE_SUPPORT.
    const bias = new Float32Array(N * V);
    const want = new Float64Array(N);
    for (let i = 1; i < N; i++) {
      if (!continues(BATCH, i)) continue;
      const kept = new Set([0, 1, 2, BATCH.inputIds[i]]);
      const row = bias.subarray((i - 1) * V, i * V);
      for (let v = 0; v < V; v++) if (!kept.has(v)) row[v] = OUTSIDE_SUPPORT;
      const ids = [...kept];
      const lse = Math.log(ids.reduce((a, v) => a + Math.exp(logits[i - 1][v] / T), 0));
      want[i] = logits[i - 1][BATCH.inputIds[i]] / T - lse;
    }
    const { logp } = await model.score(BATCH, bias, { temperature: T });
    expectClose(logp, want, { atol: 2e-5, rtol: 1e-5, label: `logp over the support at T = ${T}` });
  });

  it('refuses a temperature that is not finite and > 0', async () => {
    const model = new Model(makeOps(), C);
    for (const bad of [0, -0.5, Infinity, NaN])
      await expect(model.score(BATCH, undefined, { temperature: bad })).rejects.toThrow(
        /temperature = .*expected a finite number > 0/,
      );
  });
});

describe.each([
  ['cpu', createCpuOps],
  ['wasm', () => wasm],
] as const)('model gradient check at T = 0.7 (%s backend, central finite differences)', (_backend, makeOps) => {
  it('backward differentiates the tempered scores of the last scored batch, every parameter tensor', async () => {
    const model = new Model(makeOps(), C);
    const weights = randomWeights(5);
    model.setWeights(weights);
    const lossAt = async (temperature: number) => {
      const { logp } = await model.score(BATCH, undefined, { temperature });
      return logp.reduce((L, lp, i) => L + SEED[i] * lp, 0);
    };
    await model.score(BATCH);
    model.zeroGrad();
    await model.backward(SEED);
    const untempered = await model.getGradients();
    await model.score(BATCH, undefined, { temperature: T });
    model.zeroGrad();
    await model.backward(SEED);
    const grads = await model.getGradients();
    for (const s of paramSpecs(C)) {
      const fd = await numericGradAsync(
        weights.get(s.name)!,
        async () => {
          model.setWeights(weights);
          return lossAt(T);
        },
        2e-3,
      );
      model.setWeights(weights);
      const tempered = relativeError(grads.get(s.name)!, fd);
      expect(
        tempered.fdNormSq,
        `${s.name}: finite-difference gradient is zero, the check would be vacuous`,
      ).toBeGreaterThan(1e-8);
      expect(tempered.error, `${s.name}: relative error of the gradient at T = ${T}`).toBeLessThan(1e-2);
      // The untempered gradient is not the tempered one: the check above can fail.
      expect(
        relativeError(untempered.get(s.name)!, fd).error,
        `${s.name}: the T = 1 gradient vs T = ${T}`,
      ).toBeGreaterThan(5e-2);
    }
  });
});
