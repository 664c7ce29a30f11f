/**
 * The entropy seed through the whole model: Model.backward(dlogp, null, dentropy) gives the
 * gradient of L = Σ c_t · logp_t + Σ e_t · H_t (H the per-token entropy `score` reports, at the
 * scored temperature), checked against central finite differences, with the LM head whole and in
 * chunks and the batch in one pass and in several; and the same gradients on every shape.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import { numericGradAsync, relativeError } from '../../kernels/testing/finite-diff';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Model, type ModelOptions } from './model';
import { rowPerSequence } from './packing';
import { numel, paramSpecs } from './params';

const CONFIG: ModelConfig = { ...modelPreset('tiny', 7), layers: 2, tiedEmbeddings: false };
const BATCH = rowPerSequence([
  [1, 4, 2, 6, 3],
  [2, 5, 5, 1],
  [6, 1, 3, 0, 2],
]);
const N = BATCH.rows * BATCH.width;
const C = Float32Array.from({ length: N }, (_, i) => Math.sin(1.7 * i + 0.3));
const E = Float32Array.from({ length: N }, (_, i) => Math.cos(0.9 * i + 0.2));
const TEMPERATURE = 0.7;

function randomWeights(seed: number): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  return new Map(
    paramSpecs(CONFIG).map((s) => [
      s.name,
      Float32Array.from({ length: numel(s.shape) }, () =>
        s.shape.length === 1 ? 1 + 0.4 * (rand() - 0.5) : 0.4 * (rand() * 2 - 1),
      ),
    ]),
  );
}

async function loss(model: Model): Promise<number> {
  const { logp, entropy } = await model.score(BATCH, undefined, { temperature: TEMPERATURE });
  let L = 0;
  for (let i = 0; i < N; i++) L += C[i] * logp[i] + E[i] * entropy[i];
  return L;
}

async function gradients(
  makeOps: () => ReturnType<typeof createCpuOps>,
  options: ModelOptions,
  weights: Map<string, Float32Array>,
) {
  const model = new Model(makeOps(), CONFIG, options);
  model.setWeights(weights);
  await model.score(BATCH, undefined, { temperature: TEMPERATURE });
  model.zeroGrad();
  await model.backward(C, null, E);
  return { model, grads: await model.getGradients() };
}

const { wasm } = await testBackends();
const SHAPES: [string, ModelOptions][] = [
  ['the head whole, one pass', {}],
  ['the head in chunks of 4 positions', { headRows: 4 }],
  ['two passes (idsPerPass 10)', { idsPerPass: 10 }],
];

describe.each([
  ['cpu', createCpuOps],
  ['wasm', () => wasm],
] as const)('the entropy gradient on %s', (_backend, makeOps) => {
  it('matches central finite differences of Σ c·logp + Σ e·H for every parameter tensor', async () => {
    const weights = randomWeights(11);
    const { model, grads } = await gradients(makeOps, {}, weights);
    for (const s of paramSpecs(CONFIG)) {
      const fd = await numericGradAsync(
        weights.get(s.name)!,
        async () => {
          model.setWeights(weights);
          return loss(model);
        },
        2e-3,
      );
      model.setWeights(weights);
      const { error, fdNormSq } = relativeError(grads.get(s.name)!, fd);
      expect(fdNormSq, `${s.name}: the check would be vacuous`).toBeGreaterThan(1e-8);
      expect(error, `${s.name}: relative error`).toBeLessThan(1e-2);
    }
  });

  it('the entropy seed changes the gradients, and the head in chunks or the batch in passes gives the same ones', async () => {
    const weights = randomWeights(12);
    const whole = (await gradients(makeOps, {}, weights)).grads;
    const plain = new Model(makeOps(), CONFIG);
    plain.setWeights(weights);
    await plain.score(BATCH, undefined, { temperature: TEMPERATURE });
    plain.zeroGrad();
    await plain.backward(C);
    const withoutEntropy = await plain.getGradients();
    let moved = 0;
    for (const [name, g] of whole) moved = Math.max(moved, relativeError(g, withoutEntropy.get(name)!).error);
    expect(moved, 'dropping the entropy seed must change some gradient').toBeGreaterThan(1e-2);
    for (const [label, options] of SHAPES.slice(1)) {
      const other = (await gradients(makeOps, options, weights)).grads;
      for (const [name, g] of whole)
        expect(relativeError(other.get(name)!, g).error, `${label}: ${name}`).toBeLessThan(1e-5);
    }
  });
});
