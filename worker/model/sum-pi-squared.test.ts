import { describe, expect, it } from 'vitest';
import { testBackends } from '../../kernels/common/node-test-gpu';
import { mulberry32 } from '../../kernels/common/random';
import { logprobForwardRef } from '../../kernels/logprob/logprob.ref';
import { expectClose } from '../../kernels/testing/expect-close';
import type { ModelConfig } from './config';
import { modelPreset } from './config';
import { Model } from './model';
import type { PackedInput } from './packing';
import { OUTSIDE_SUPPORT, sumPiSquaredOf } from './packing';
import { numel, paramSpecs } from './params';

// Model.score's Σ_v π_v² (verl calculate_sum_pi_squared_from_logits), what OTB's path variance reads:
// exp(logsumexp(2s·l) − 2·logsumexp(s·l)) from the log-prob kernel at 2s and s, against the softmax itself.

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
const continues = (i: number) =>
  i % BATCH.width > 0 && BATCH.segmentIds[i] !== 0 && BATCH.segmentIds[i] === BATCH.segmentIds[i - 1];

/** Spread-out weights, so that the distributions are far from uniform (Σπ² well above 1/V). */
function randomWeights(seed: number, spread = 1.5): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const w = new Map<string, Float32Array>();
  for (const s of paramSpecs(C)) {
    const values = () => (s.shape.length === 1 ? 1 + 0.4 * (rand() - 0.5) : spread * (rand() * 2 - 1));
    w.set(s.name, Float32Array.from({ length: numel(s.shape) }, values));
  }
  return w;
}

/** Σ_v softmax(z/T)_v², in float64, over the ids `kept` (all when absent). */
function direct(z: ArrayLike<number>, temperature: number, kept?: Set<number>): number {
  const s = Array.from(z, (x, v) => (kept && !kept.has(v) ? -Infinity : x / temperature));
  const m = Math.max(...s);
  const e = s.map((x) => Math.exp(x - m));
  const Z = e.reduce((a, b) => a + b, 0);
  return e.reduce((a, x) => a + (x / Z) ** 2, 0);
}

const { backends } = await testBackends();

describe.each(backends)('Model.score sumPiSquared (%s)', (_name, makeOps) => {
  it('is Σπ² of softmax(l / T) at each id, 0 where no position predicts one; the other outputs are unchanged', async () => {
    const model = new Model(makeOps(), C);
    model.setWeights(randomWeights(11));
    const logits = await model.logitsAt(
      BATCH,
      Array.from({ length: N }, (_, i) => i),
    );
    const plain = await model.score(BATCH, undefined, { temperature: T });
    const scored = await model.score(BATCH, undefined, { temperature: T, sumPiSquared: true });
    expect(plain.sumPiSquared).toBeUndefined();
    expect(scored.logp).toEqual(plain.logp);
    expect(scored.entropy).toEqual(plain.entropy);
    const want = Float64Array.from({ length: N }, (_, i) => (continues(i) ? direct(logits[i - 1], T) : 0));
    expectClose(scored.sumPiSquared!, want, { atol: 1e-6, rtol: 1e-4, label: `Σπ² at T = ${T}` });
    // Far from uniform and from one-hot: the comparison could fail.
    const on = want.filter((x) => x > 0);
    expect(Math.min(...on)).toBeGreaterThan(1.5 / C.vocab);
    expect(Math.max(...on)).toBeLessThan(0.99);
  });

  it('sums over the support under a logit bias, and agrees across LM-head chunks and passes', async () => {
    const V = C.vocab;
    const w = randomWeights(12);
    const model = new Model(makeOps(), C);
    model.setWeights(w);
    const logits = await model.logitsAt(
      BATCH,
      Array.from({ length: N }, (_, i) => i),
    );
    const bias = new Float32Array(N * V);
    const want = new Float64Array(N);
    for (let i = 1; i < N; i++) {
      if (!continues(i)) continue;
      const kept = new Set([0, 1, 2, BATCH.inputIds[i]]);
      for (let v = 0; v < V; v++) if (!kept.has(v)) bias[(i - 1) * V + v] = OUTSIDE_SUPPORT;
      want[i] = direct(logits[i - 1], T, kept);
    }
    const whole = await model.score(BATCH, bias, { temperature: T, sumPiSquared: true });
    expectClose(whole.sumPiSquared!, want, { atol: 1e-6, rtol: 1e-4, label: 'Σπ² over the support' });
    for (const options of [{ headRows: 4 }, { idsPerPass: 9 }]) {
      const split = new Model(makeOps(), C, options);
      split.setWeights(w);
      const s = await split.score(BATCH, bias, { temperature: T, sumPiSquared: true });
      expectClose(s.sumPiSquared!, whole.sumPiSquared!, { atol: 1e-12, rtol: 0, label: JSON.stringify(options) });
    }
  });

  it('leaves the backward as it was: the gradients after a score with Σπ² are those after one without', async () => {
    const seed = Float32Array.from({ length: N }, (_, i) => Math.sin(1.7 * i + 0.3));
    const gradsAfter = async (sumPiSquared: boolean, headRows?: number) => {
      const model = new Model(makeOps(), C, headRows ? { headRows } : {});
      model.setWeights(randomWeights(13));
      await model.score(BATCH, undefined, { temperature: T, sumPiSquared });
      model.zeroGrad();
      await model.backward(seed);
      return model.getGradients();
    };
    for (const headRows of [undefined, 4]) {
      const [a, b] = [await gradsAfter(false, headRows), await gradsAfter(true, headRows)];
      for (const [name, g] of a) expect(b.get(name), `${name} (headRows ${headRows ?? 'all'})`).toEqual(g);
    }
  });
});

describe('sumPiSquaredOf (the host side of the identity)', () => {
  it("matches softmax², verl's extreme-value case included (logits ±1000, fp64 to 1e-10)", () => {
    // verl tests/utils/test_torch_functional.py test_calculate_sum_pi_squared_from_logits_extreme_values.
    const logits = [1000, 1001, 999, -1000, -999, -998];
    const [lse, lse2, scratch] = [new Float64Array(2), new Float64Array(2), new Float64Array(2)];
    logprobForwardRef(scratch, new Float64Array(2), lse, logits, [-1, -1], 2, 3, 1);
    logprobForwardRef(scratch, new Float64Array(2), lse2, logits, [-1, -1], 2, 3, 2);
    // Aligned with ids: entries 1 and 2 of one chain carry positions 0 and 1.
    const out = sumPiSquaredOf([0, lse[0], lse[1]], [0, lse2[0], lse2[1]], [1, 1, 1], 3);
    expect(out[0]).toBe(0);
    for (const k of [0, 1]) {
      const want = direct(logits.slice(3 * k, 3 * k + 3), 1);
      expect(Math.abs(out[k + 1] - want), `row ${k}`).toBeLessThan(1e-10);
    }
  });
});
