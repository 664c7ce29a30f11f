import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../common/random';
import { samplingDistribution, samplingOptionProblems, type SamplingOptions } from './distribution.ref';

/** Logits whose softmax is exactly the given probabilities (up to one shared constant). */
const logitsOf = (probs: number[]) => probs.map(Math.log);
/** Probabilities over the support, for hand comparisons. */
const probsOf = (d: { logProbs: Float64Array }) => Array.from(d.logProbs, Math.exp);

function expectProbs(actual: number[], expected: number[], digits = 13) {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((p, j) => expect(p, `index ${j}`).toBeCloseTo(expected[j], digits));
}

/**
 * Hugging Face's warpers written out literally (logits_process.py): scores / T; remove
 * scores < k-th largest; sort ascending, cumsum of softmax, remove cumsum ≤ 1 − p except the last.
 * An independent check of the pipeline on tie-free logits. Returns the probability of every id.
 */
function hfReference(logits: number[], { temperature = 1, topK = 0, topP = 1 }: SamplingOptions): number[] {
  let scores = logits.map((x) => x / temperature);
  if (topK > 0) {
    const kth = [...scores].sort((a, b) => b - a)[Math.min(topK, scores.length) - 1];
    scores = scores.map((s) => (s < kth ? -Infinity : s));
  }
  const softmax = (x: number[]) => {
    const m = Math.max(...x);
    const e = x.map((v) => Math.exp(v - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / z);
  };
  if (topP < 1) {
    const ascending = scores.map((_, i) => i).sort((a, b) => scores[a] - scores[b]);
    const sortedProbs = softmax(ascending.map((i) => scores[i]));
    let cumsum = 0;
    const remove = sortedProbs.map((p) => (cumsum += p) <= 1 - topP);
    remove[remove.length - 1] = false;
    ascending.forEach((i, j) => {
      if (remove[j]) scores[i] = -Infinity;
    });
  }
  return softmax(scores);
}

describe('samplingDistribution: raw log-probs and the defaults', () => {
  const logits = logitsOf([0.1, 0.2, 0.3, 0.4]);

  it('raw log-probs are the log-softmax of the logits at the temperature, whatever top-k and top-p', () => {
    const plain = samplingDistribution(logits);
    expectProbs(Array.from(plain.rawLogProbs), [0.1, 0.2, 0.3, 0.4].map(Math.log));
    expect(samplingDistribution(logits, { temperature: 1, topK: 2, topP: 0.5 }).rawLogProbs).toEqual(plain.rawLogProbs);
    // T = 0.5 squares the probabilities before any filter: [.1 .2 .3 .4] → [1 4 9 16] / 30.
    const tempered = samplingDistribution(logits, { temperature: 0.5 });
    expectProbs(
      Array.from(tempered.rawLogProbs),
      [1, 4, 9, 16].map((k) => Math.log(k / 30)),
    );
    const filtered = samplingDistribution(logits, { temperature: 0.5, topK: 2, topP: 0.5 });
    expect(filtered.rawLogProbs).toEqual(tempered.rawLogProbs);
    // Greedy (T = 0) has no tempered distribution: its raw log-probs are the untempered model's.
    expect(samplingDistribution(logits, { temperature: 0 }).rawLogProbs).toEqual(plain.rawLogProbs);
    // Shift invariance: adding a constant to every logit changes nothing.
    expectProbs(
      Array.from(samplingDistribution(logits.map((x) => x + 1000)).rawLogProbs),
      Array.from(plain.rawLogProbs),
    );
  });

  it('temperature 1, topK 0, topP 1: support is every id and behavior equals raw exactly', () => {
    for (const options of [{}, { temperature: 1, topK: 0, topP: 1 }, { topK: 4 }, { topK: 99 }]) {
      const d = samplingDistribution(logits, options);
      expect(Array.from(d.support)).toEqual([0, 1, 2, 3]);
      expect(d.logProbs).toEqual(d.rawLogProbs);
    }
  });

  it('masked ids (−Infinity) are outside the support and have raw log-prob −Infinity', () => {
    const d = samplingDistribution([Math.log(0.25), -Infinity, Math.log(0.75), -Infinity]);
    expect(Array.from(d.support)).toEqual([0, 2]);
    expectProbs(probsOf(d), [0.25, 0.75]);
    expect(d.rawLogProbs[1]).toBe(-Infinity);
    expect(d.rawLogProbs[3]).toBe(-Infinity);
    expect(Array.from(d.logProbs)).toEqual([d.rawLogProbs[0], d.rawLogProbs[2]]);
  });

  it('accepts a Float32Array (the GPU readback)', () => {
    const d = samplingDistribution(Float32Array.of(0, Math.LN2), { topK: 1 });
    expect(Array.from(d.support)).toEqual([1]);
    expect(d.logProbs[0]).toBe(0);
  });
});

describe('samplingDistribution: temperature', () => {
  it('T = 0.5 squares the probabilities: [.1 .2 .3 .4] → [1 4 9 16] / 30', () => {
    const d = samplingDistribution(logitsOf([0.1, 0.2, 0.3, 0.4]), { temperature: 0.5 });
    expect(Array.from(d.support)).toEqual([0, 1, 2, 3]);
    expectProbs(probsOf(d), [1 / 30, 4 / 30, 9 / 30, 16 / 30]);
  });

  it('T = 2 takes square roots: [1 4 9 16] / 30 → [1 2 3 4] / 10', () => {
    const d = samplingDistribution(logitsOf([1 / 30, 4 / 30, 9 / 30, 16 / 30]), { temperature: 2 });
    expectProbs(probsOf(d), [0.1, 0.2, 0.3, 0.4]);
  });

  it('T = 0 is greedy: the arg-max with log-prob 0, lowest id on ties, filters irrelevant', () => {
    const d = samplingDistribution([1, 3, 2, 3], { temperature: 0 });
    expect(Array.from(d.support)).toEqual([1]);
    expect(Array.from(d.logProbs)).toEqual([0]);
    expect(d.rawLogProbs).toHaveLength(4);
    expect(samplingDistribution([1, 3, 2, 3], { temperature: 0, topK: 3, topP: 0.1 }).support).toEqual(d.support);
    expect(Array.from(samplingDistribution([-Infinity, -5, -Infinity], { temperature: 0 }).support)).toEqual([1]);
  });

  it('a vanishing temperature drops ids whose scaled logit underflows, keeping log-probs finite', () => {
    const d = samplingDistribution([0, 1, 1], { temperature: 1e-310 });
    expect(Array.from(d.support)).toEqual([1, 2]);
    expectProbs(probsOf(d), [0.5, 0.5]);
  });
});

describe('samplingDistribution: top-k', () => {
  it('top-2 of [.1 .2 .3 .4] keeps ids 2, 3 renormalised to 3/7, 4/7', () => {
    const d = samplingDistribution(logitsOf([0.1, 0.2, 0.3, 0.4]), { topK: 2 });
    expect(Array.from(d.support)).toEqual([2, 3]);
    expectProbs(probsOf(d), [3 / 7, 4 / 7]);
  });

  it('every id tied with the k-th largest logit is kept (HF and vLLM threshold on the value)', () => {
    const top1 = samplingDistribution([1, 3, 3, 2], { topK: 1 });
    expect(Array.from(top1.support)).toEqual([1, 2]);
    expectProbs(probsOf(top1), [0.5, 0.5]);
    expect(Array.from(samplingDistribution([1, 3, 2, 2], { topK: 2 }).support)).toEqual([1, 2, 3]);
    expect(Array.from(samplingDistribution([2, 2, 2, 2], { topK: 1 }).support)).toEqual([0, 1, 2, 3]);
  });

  it('top-k larger than the finite ids keeps them all; masked ids never count', () => {
    const d = samplingDistribution([0, -Infinity, 1, -Infinity], { topK: 3 });
    expect(Array.from(d.support)).toEqual([0, 2]);
  });
});

describe('samplingDistribution: top-p', () => {
  const logits = logitsOf([0.1, 0.2, 0.3, 0.4]);

  it('p = 0.5 keeps .4 then .3 (cumulative .7 ≥ .5), renormalised to 3/7, 4/7', () => {
    const d = samplingDistribution(logits, { topP: 0.5 });
    expect(Array.from(d.support)).toEqual([2, 3]);
    expectProbs(probsOf(d), [3 / 7, 4 / 7]);
  });

  it('p = 0.8 keeps three, p = 0.95 keeps all four', () => {
    expect(Array.from(samplingDistribution(logits, { topP: 0.8 }).support)).toEqual([1, 2, 3]);
    expectProbs(probsOf(samplingDistribution(logits, { topP: 0.8 })), [2 / 9, 3 / 9, 4 / 9]);
    expect(Array.from(samplingDistribution(logits, { topP: 0.95 }).support)).toEqual([0, 1, 2, 3]);
  });

  it('reaching p exactly is enough (≥, not >): exact probabilities [.25 .25 .5]', () => {
    const exact = [0, 0, Math.LN2]; // softmax is exactly [0.25, 0.25, 0.5] in float64
    expect(Array.from(samplingDistribution(exact, { topP: 0.5 }).support)).toEqual([2]);
    expect(Array.from(samplingDistribution(exact, { topP: 0.5000001 }).support)).toEqual([0, 2]);
  });

  it('ties at the boundary: the lower id is kept', () => {
    const exact = [0, 0, Math.LN2];
    const d = samplingDistribution(exact, { topP: 0.75 });
    expect(Array.from(d.support)).toEqual([0, 2]);
    expectProbs(probsOf(d), [1 / 3, 2 / 3]);
    expect(Array.from(samplingDistribution([5, 5, 5, 5], { topP: 0.5 }).support)).toEqual([0, 1]);
  });

  it('a tiny p still keeps the most probable id; p = 1 is off', () => {
    const d = samplingDistribution(logits, { topP: 1e-9 });
    expect(Array.from(d.support)).toEqual([3]);
    expect(d.logProbs[0]).toBe(0);
    expect(samplingDistribution(logits, { topP: 1 }).logProbs).toEqual(samplingDistribution(logits).rawLogProbs);
  });
});

describe('samplingDistribution: temperature, then top-k, then top-p', () => {
  // [.1 .2 .3 .4] at T = 0.5 → [1 4 9 16]/30; top-3 → [4 9 16]/29 = [.138 .310 .552];
  // top-p .85: .552, .862 ≥ .85 → {9, 16}/25. Any other order keeps three ids:
  // top-p before top-k sees [.533 .833 .967] (needs 3), top-p before temperature sees [.4 .7 .9] (3).
  const logits = logitsOf([0.1, 0.2, 0.3, 0.4]);

  it('hand values that every other order gets wrong', () => {
    const d = samplingDistribution(logits, { temperature: 0.5, topK: 3, topP: 0.85 });
    expect(Array.from(d.support)).toEqual([2, 3]);
    expectProbs(probsOf(d), [9 / 25, 16 / 25]);
    expect(Array.from(samplingDistribution(logits, { temperature: 0.5, topP: 0.85 }).support)).toEqual([1, 2, 3]);
    expect(Array.from(samplingDistribution(logits, { topK: 3, topP: 0.85 }).support)).toEqual([1, 2, 3]);
  });

  it('temperature and top-k: T = 2 then top-2 of [1 4 9 16]/30 → [3/7, 4/7]', () => {
    const d = samplingDistribution(logitsOf([1 / 30, 4 / 30, 9 / 30, 16 / 30]), { temperature: 2, topK: 2 });
    expect(Array.from(d.support)).toEqual([2, 3]);
    expectProbs(probsOf(d), [3 / 7, 4 / 7]);
  });

  it('matches the literal Hugging Face warpers on seeded random logits', () => {
    const rand = mulberry32(11);
    const grid: SamplingOptions[] = [];
    for (const temperature of [0.3, 0.7, 1, 1.6])
      for (const topK of [0, 1, 5, 17, 40])
        for (const topP of [0.05, 0.5, 0.9, 0.99, 1]) grid.push({ temperature, topK, topP });
    for (let trial = 0; trial < 5; trial++) {
      const logits = Array.from({ length: 40 }, () => 6 * (rand() - 0.5));
      for (const options of grid) {
        const d = samplingDistribution(logits, options);
        const expected = hfReference(logits, options);
        const full = new Array<number>(logits.length).fill(0);
        d.support.forEach((id, j) => (full[id] = Math.exp(d.logProbs[j])));
        full.forEach((p, id) => expect(p, `${JSON.stringify(options)} id ${id}`).toBeCloseTo(expected[id], 12));
        expect(d.support.length).toBe(expected.filter((p) => p > 0).length);
      }
    }
  });
});

describe('samplingDistribution: invariants on seeded random logits', () => {
  it('support ascending, probabilities sum to 1, raw = log_softmax(l / T), log-prob differences are raw differences', () => {
    const rand = mulberry32(5);
    for (let trial = 0; trial < 50; trial++) {
      const V = 1 + Math.floor(rand() * 60);
      const logits = Array.from({ length: V }, () => (rand() < 0.1 ? -Infinity : 10 * (rand() - 0.5)));
      logits[Math.floor(rand() * V)] = 0; // at least one finite logit
      const options = { temperature: 0.2 + 2 * rand(), topK: Math.floor(rand() * 8), topP: 0.05 + 0.95 * rand() };
      const d = samplingDistribution(logits, options);
      expect(d.support.length).toBeGreaterThan(0);
      for (let j = 1; j < d.support.length; j++) expect(d.support[j]).toBeGreaterThan(d.support[j - 1]);
      expect(probsOf(d).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      const [a] = d.support;
      d.support.forEach((id, j) => {
        expect(Number.isFinite(d.logProbs[j])).toBe(true);
        expect(d.logProbs[j] - d.logProbs[0]).toBeCloseTo(d.rawLogProbs[id] - d.rawLogProbs[a], 9);
      });
      const scaled = logits.map((x) => x / options.temperature);
      const lse = Math.log(scaled.reduce((z, x) => z + Math.exp(x), 0));
      scaled.forEach((x, id) =>
        x === -Infinity ? expect(d.rawLogProbs[id]).toBe(-Infinity) : expect(d.rawLogProbs[id]).toBeCloseTo(x - lse, 9),
      );
      // Top-k: fewer than k logits are strictly above any kept one (ties at the k-th value are kept).
      if (options.topK > 0)
        for (const id of d.support) expect(logits.filter((x) => x > logits[id]).length).toBeLessThan(options.topK);
      let rawMass = 0;
      for (const p of d.rawLogProbs) rawMass += Math.exp(p);
      expect(rawMass).toBeCloseTo(1, 12);
    }
  });
});

describe('samplingDistribution: refusals', () => {
  const logits = [0, 1, 2];

  it('options name the field and the allowed range', () => {
    expect(() => samplingDistribution(logits, { temperature: -0.1 })).toThrow(
      /temperature = -0\.1: expected a finite number ≥ 0/,
    );
    expect(() => samplingDistribution(logits, { temperature: NaN })).toThrow(/temperature = NaN/);
    expect(() => samplingDistribution(logits, { temperature: Infinity })).toThrow(/temperature = Infinity/);
    expect(() => samplingDistribution(logits, { topK: -1 })).toThrow(/topK = -1: expected an integer ≥ 0/);
    expect(() => samplingDistribution(logits, { topK: 1.5 })).toThrow(/topK = 1\.5/);
    expect(() => samplingDistribution(logits, { topP: 0 })).toThrow(/topP = 0: expected a number in \(0, 1\]/);
    expect(() => samplingDistribution(logits, { topP: 1.01 })).toThrow(/topP = 1\.01/);
    expect(() => samplingDistribution(logits, { topP: NaN })).toThrow(/topP = NaN/);
  });

  it('samplingOptionProblems lists every bad field and nothing for good ones', () => {
    expect(samplingOptionProblems({})).toEqual([]);
    expect(samplingOptionProblems({ temperature: 0, topK: 50, topP: 1 })).toEqual([]);
    const problems = samplingOptionProblems({ temperature: -1, topK: 2.5, topP: 2 });
    expect(problems).toHaveLength(3);
    expect(problems.map((p) => p.split(' ')[0])).toEqual(['temperature', 'topK', 'topP']);
  });

  it('NaN and +Infinity logits are refused with their index; all-masked and empty vectors too', () => {
    expect(() => samplingDistribution([0, 1, NaN, 2])).toThrow(/logits\[2\] = NaN at index 2/);
    expect(() => samplingDistribution([0, Infinity])).toThrow(/logits\[1\] = Infinity at index 1/);
    expect(() => samplingDistribution([-Infinity, -Infinity])).toThrow(/all 2 logits are −Infinity/);
    expect(() => samplingDistribution([])).toThrow(/logits are empty/);
  });
});
