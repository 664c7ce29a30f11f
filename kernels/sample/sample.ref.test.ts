import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../common/random';
import { samplingDistribution } from './distribution.ref';
import { sampleToken } from './sample.ref';

const constant = (u: number) => () => u;
const logitsOf = (probs: number[]) => probs.map(Math.log);

describe('sampleToken: inverse CDF over the support in ascending id order', () => {
  // Support [1, 3, 4] with probabilities [.2, .3, .5]: u in [0, .2) → 1, [.2, .5) → 3, [.5, 1) → 4.
  const dist = samplingDistribution([-Infinity, Math.log(0.2), -Infinity, Math.log(0.3), Math.log(0.5)]);

  it('hand values on each side of each boundary', () => {
    const ids = [0, 0.19, 0.21, 0.49, 0.51, 0.9999].map((u) => sampleToken(dist, constant(u)).id);
    expect(ids).toEqual([1, 1, 3, 3, 4, 4]);
  });

  it('intervals are half-open: u exactly on a boundary draws the next id', () => {
    const exact = samplingDistribution([0, 0, Math.LN2]); // exactly [.25, .25, .5] in float64
    expect([0, 0.25, 0.5, 0.75].map((u) => sampleToken(exact, constant(u)).id)).toEqual([0, 1, 2, 2]);
  });

  it('returns the behavior and raw log-probs of the drawn id', () => {
    const t = sampleToken(dist, constant(0.3));
    expect(t.id).toBe(3);
    expect(t.behaviorLogProb).toBe(dist.logProbs[1]);
    expect(t.rawLogProb).toBe(dist.rawLogProbs[3]);
    expect(t.behaviorLogProb).toBeCloseTo(Math.log(0.3), 14);

    const filtered = samplingDistribution(logitsOf([0.1, 0.2, 0.3, 0.4]), { topK: 2 });
    const f = sampleToken(filtered, constant(0.1));
    expect(f.id).toBe(2);
    expect(f.behaviorLogProb).toBeCloseTo(Math.log(3 / 7), 14);
    expect(f.rawLogProb).toBeCloseTo(Math.log(0.3), 14);
  });

  it('greedy always returns the arg-max with behavior log-prob 0', () => {
    const greedy = samplingDistribution([0.5, 2, -1], { temperature: 0 });
    for (const u of [0, 0.5, 0.999999])
      expect(sampleToken(greedy, constant(u))).toEqual({
        id: 1,
        behaviorLogProb: 0,
        rawLogProb: greedy.rawLogProbs[1],
      });
  });

  it('an id whose probability underflows to 0 is never drawn, even at u just below 1', () => {
    // Support [0, 1] in id order, the last with probability e^{-800} = 0 in float64.
    const dist0 = {
      support: Int32Array.of(0, 1),
      logProbs: Float64Array.of(0, -800),
      rawLogProbs: Float64Array.of(0, -800),
    };
    expect(sampleToken(dist0, constant(1 - 2 ** -53)).id).toBe(0);
  });

  it('refuses a uniform outside [0, 1) and an empty or misaligned distribution', () => {
    for (const u of [1, -0.1, NaN])
      expect(() => sampleToken(dist, constant(u))).toThrow(/expected a number in \[0, 1\)/);
    const empty = { support: new Int32Array(0), logProbs: new Float64Array(0), rawLogProbs: new Float64Array(3) };
    expect(() => sampleToken(empty, constant(0))).toThrow(/support has 0 ids/);
    const misaligned = { support: Int32Array.of(0, 1), logProbs: Float64Array.of(0), rawLogProbs: new Float64Array(2) };
    expect(() => sampleToken(misaligned, constant(0))).toThrow(/support has 2 ids and logProbs 1 entries/);
  });
});

describe('sampleToken: frequencies over 20k seeded draws', () => {
  const N = 20_000;

  /** Pearson's chi-square of the counts against hand probabilities over the full vocabulary. */
  function chiSquare(counts: number[], expected: number[]): number {
    let chi2 = 0;
    expected.forEach((p, id) => {
      if (p === 0) expect(counts[id], `id ${id} has probability 0`).toBe(0);
      else chi2 += (counts[id] - N * p) ** 2 / (N * p);
    });
    return chi2;
  }

  function countDraws(logits: number[], options: Parameters<typeof samplingDistribution>[1], seed: number): number[] {
    const dist = samplingDistribution(logits, options);
    const rand = mulberry32(seed); // a Sampler's stream (worker/rollout/sample.ts)
    const counts = new Array<number>(logits.length).fill(0);
    for (let i = 0; i < N; i++) counts[sampleToken(dist, rand).id]++;
    return counts;
  }

  // Critical values at p = 0.001: a correct sampler fails one in a thousand seeds (these seeds are
  // fixed and pass); a wrong distribution fails by orders of magnitude or draws a zero-probability id.
  it('temperature 0.5 over [.1 .2 .3 .4]: [1 4 9 16]/30 (3 degrees of freedom)', () => {
    const counts = countDraws(logitsOf([0.1, 0.2, 0.3, 0.4]), { temperature: 0.5 }, 1);
    expect(chiSquare(counts, [1 / 30, 4 / 30, 9 / 30, 16 / 30])).toBeLessThan(16.27);
  });

  it('temperature 0.5, top-3, top-p 0.85: only ids 2 and 3, as 9/25 and 16/25 (1 degree of freedom)', () => {
    // A wrong filter order keeps id 1 (probability 4/29 ≈ 0.14): ~2800 draws where 0 are allowed.
    const counts = countDraws(logitsOf([0.1, 0.2, 0.3, 0.4]), { temperature: 0.5, topK: 3, topP: 0.85 }, 2);
    expect(chiSquare(counts, [0, 0, 9 / 25, 16 / 25])).toBeLessThan(10.83);
  });

  it('masked ids and top-k ties: [.25 masked .25 .5] at top-2 keeps all three finite ids', () => {
    const counts = countDraws([0, -Infinity, 0, Math.LN2], { topK: 2 }, 3);
    expect(chiSquare(counts, [0.25, 0, 0.25, 0.5])).toBeLessThan(13.82);
  });
});
