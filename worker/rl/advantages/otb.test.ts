import { describe, expect, it } from 'vitest';
import { otbAdvantages, type OtbInput } from './otb';
import { otbPacked } from './otb-packed';

const EPS = 1e-8;
const log = Math.log;

/** Two members of group 'a' (lengths 3 and 2) and a singleton 'b'; π and Σπ² chosen so that w is simple. */
function table(): OtbInput {
  return {
    rows: 3,
    width: 3,
    // row 0 scores 1 on its last token, row 1 scores 0, row 2 (alone) scores 2.
    tokenRewards: [0, 0, 1, 0, 0, 0, 0, 2, 0],
    responseMask: [1, 1, 1, 1, 1, 0, 1, 1, 0],
    // w = 1 − 2π + Σπ²: row 0 → 0.5, 0.75, 0; row 1 → 0.5, 0.5; row 2 → 0.5, 0.5.
    oldLogp: [log(0.5), log(0.25), 0, log(0.5), log(0.5), 0, log(0.5), log(0.5), 0],
    sumPiSquared: [0.5, 0.25, 1, 0.5, 0.5, 0, 0.5, 0.5, 0],
    groups: ['a', 'a', 'b'],
  };
}

const close = (actual: ArrayLike<number>, expected: number[]) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i], `index ${i}`).toBeCloseTo(e, 14));
};

describe('otbAdvantages (verl compute_optimal_token_baseline_advantage)', () => {
  it('hand values: G reward-to-go, W the cumulated 1 − 2π + Σπ², B_t = Σ G·W / (Σ W + 1e-8), a lone longest tail 0', () => {
    const out = otbAdvantages(table());
    // W: row 0 = 0.5, 1.25, 1.25; row 1 = 0.5, 1.0; G: row 0 = 1, 1, 1; row 1 = 0, 0.
    close(out.pathVariance.subarray(0, 6), [0.5, 1.25, 1.25, 0.5, 1, 0]);
    const b0 = (1 * 0.5 + 0 * 0.5) / (1 + EPS);
    const b1 = (1 * 1.25 + 0 * 1) / (2.25 + EPS);
    // Row 0 is the only member of length 3: its baseline from column 2 (the second-longest length) on is 0.
    close(out.baselines, [b0, b1, 0, b0, b1, 0, 0, 0, 0]);
    close(out.advantages, [1 - b0, 1 - b1, 1, -b0, -b1, 0, 2, 2, 0]);
    close(out.returns, [1, 1, 1, 0, 0, 0, 2, 2, 0]);
    expect(out.members).toEqual([[0, 1], [2]]);
  });

  it('handleZeroTail false keeps the estimate past the second-longest: one member there gives G·W/(W + ε)', () => {
    const out = otbAdvantages(table(), { handleZeroTail: false });
    expect(out.baselines[2]).toBeCloseTo(1.25 / (1.25 + EPS), 15);
    expect(out.advantages[2]).toBeCloseTo(1 - 1.25 / (1.25 + EPS), 15);
    // A tie for the longest zeroes nothing either way.
    const tied = table();
    tied.responseMask = [1, 1, 1, 1, 1, 1, 1, 1, 0];
    tied.oldLogp = [log(0.5), log(0.25), 0, log(0.5), log(0.5), log(0.5), log(0.5), log(0.5), 0];
    tied.sumPiSquared = [0.5, 0.25, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0];
    expect(otbAdvantages(tied).baselines[2]).toBeCloseTo((1 * 1.25 + 0 * 1.5) / (2.75 + EPS), 15);
  });

  it('rollout IS weights multiply each w by ρ̄²', () => {
    const t = table();
    const out = otbAdvantages({ ...t, isWeights: [2, 1, 1, 0.5, 1, 1, 1, 1, 1] });
    // row 0: w = 0.5·4, 0.75 → W = 2, 2.75; row 1: w = 0.5·0.25, 0.5 → W = 0.125, 0.625.
    close(out.pathVariance.subarray(0, 5), [2, 2.75, 2.75, 0.125, 0.625]);
    expect(out.baselines[0]).toBeCloseTo(2 / (2.125 + EPS), 15);
    expect(out.baselines[1]).toBeCloseTo(2.75 / (3.375 + EPS), 15);
  });

  it('position against token alignment: a masked id inside a response (an observation) shifts only the TIR columns', () => {
    const input: OtbInput = {
      rows: 2,
      width: 3,
      tokenRewards: [0, 0, 1, 0, 0, 0],
      responseMask: [1, 0, 1, 1, 1, 0],
      oldLogp: Array(6).fill(log(0.5)),
      sumPiSquared: Array(6).fill(0.5), // w = 0.5 everywhere
      groups: [7, 7],
    };
    const pos = otbAdvantages(input);
    // Column 1 has only row 1 (G 0), column 2 only row 0 (G 1, W 1): lengths tie, no tail.
    close(pos.advantages, [1 - 0.5 / (1 + EPS), 0, 1 - 1 / (1 + EPS), -0.5 / (1 + EPS), 0, 0]);
    const tir = otbAdvantages(input, { align: 'token' });
    // Token 1 of each row: row 0's column 2 (G 1, W 1) and row 1's column 1 (G 0, W 1).
    close(tir.advantages, [1 - 0.5 / (1 + EPS), 0, 1 - 1 / (2 + EPS), -0.5 / (1 + EPS), -1 / (2 + EPS), 0]);
  });

  it('limiting cases: equal W in a group is the group-mean baseline (Dr. GRPO); equal rewards give ~0; a group of one keeps G', () => {
    const rewards = [1, 0, 0, 1];
    const input: OtbInput = {
      rows: 4,
      width: 2,
      tokenRewards: rewards.flatMap((r) => [0, r]),
      responseMask: Array(8).fill(1),
      oldLogp: Array(8).fill(log(0.3)),
      sumPiSquared: Array(8).fill(0.4),
      groups: [0, 0, 0, 0],
    };
    const out = otbAdvantages(input);
    for (let b = 0; b < 4; b++)
      for (let t = 0; t < 2; t++) expect(out.advantages[b * 2 + t]).toBeCloseTo(rewards[b] - 0.5, 7);
    const same = otbAdvantages({
      ...input,
      tokenRewards: Array(8)
        .fill(0)
        .map((_, i) => i % 2),
    });
    for (const a of same.advantages) expect(Math.abs(a)).toBeLessThan(1e-7);
    const alone = otbAdvantages({ ...input, groups: [0, 1, 2, 3] });
    expect(Array.from(alone.advantages)).toEqual(rewards.flatMap((r) => [r, r]));
  });

  it('TIR leaves a row without a masked token out of its group (verl skips it), so its partner is alone', () => {
    const input: OtbInput = {
      rows: 2,
      width: 2,
      tokenRewards: [0, 1, 0, 0],
      responseMask: [1, 1, 0, 0],
      oldLogp: [log(0.5), log(0.5), 0, 0],
      sumPiSquared: [0.5, 0.5, 0, 0],
      groups: ['g', 'g'],
    };
    expect(Array.from(otbAdvantages(input, { align: 'token' }).advantages)).toEqual([1, 1, 0, 0]);
    expect(otbAdvantages(input, { align: 'token' }).members).toEqual([[0]]);
    // Aligned by position the empty row is a member: the longest (row 0) is alone past length 0, so its baseline is 0 too.
    expect(Array.from(otbAdvantages(input).advantages)).toEqual([1, 1, 0, 0]);
  });

  it('refuses bad shapes, masks, values and options, naming them', () => {
    expect(() => otbAdvantages({ ...table(), oldLogp: [0] })).toThrow(
      /oldLogp: expected rows × width = 3 × 3 = 9 entries, got 1/,
    );
    expect(() => otbAdvantages({ ...table(), groups: ['a'] })).toThrow(/1 group keys for 3 rows/);
    const nan = table();
    nan.sumPiSquared = [NaN, 0.25, 1, 0.5, 0.5, 0, 0.5, 0.5, 0];
    expect(() => otbAdvantages(nan)).toThrow(/sumPiSquared\[0, 0\] = NaN/);
    expect(() => otbAdvantages({ ...table(), responseMask: Array(9).fill(0.5) })).toThrow(/expected 0 or 1/);
    expect(() => otbAdvantages(table(), { align: 'column' as 'token' })).toThrow(/align = "column"/);
  });
});

describe('otbPacked: each session a verl row, its trained ids in call order', () => {
  it('gives the verl-layout answer at the packed positions, whatever the rows and offsets', () => {
    const t = table();
    // The three sessions packed into 2 rows of width 6: session 1 (row 1 of the table) first, then 0; 2 alone.
    // Row 0: [prompt, s1 ids ×2, prompt, s0 ids ×3]… written out by hand below.
    const width = 6;
    const at = { s0: [3, 4, 5], s1: [1, 2], s2: [8, 9] };
    const n = 2 * width;
    const sessionIds = new Int32Array(n);
    const responseMask = new Float64Array(n);
    const callIndex = new Int32Array(n).fill(-1);
    const tokenRewards = new Float64Array(n);
    const oldLogp = new Float64Array(n);
    const sumPiSquared = new Float64Array(n);
    const place = (s: number, pos: number[], row: number) =>
      pos.forEach((p, k) => {
        sessionIds[p] = s + 1;
        responseMask[p] = 1;
        callIndex[p] = 0;
        tokenRewards[p] = t.tokenRewards[row * 3 + k];
        oldLogp[p] = t.oldLogp[row * 3 + k];
        sumPiSquared[p] = t.sumPiSquared[row * 3 + k];
      });
    place(0, at.s0, 0);
    place(1, at.s1, 1);
    place(2, at.s2, 2);
    sessionIds[0] = 2; // a prompt id of session 1, off the mask
    const out = otbPacked({
      rows: 2,
      width,
      sessionIds,
      callIndex,
      responseMask,
      tokenRewards,
      oldLogp,
      sumPiSquared,
      groupOf: (s) => ['a', 'a', 'b'][s],
    });
    const ref = otbAdvantages(t);
    at.s0.forEach((p, k) => expect(out.advantages[p]).toBe(ref.advantages[k]));
    at.s1.forEach((p, k) => expect(out.advantages[p]).toBe(ref.advantages[3 + k]));
    at.s2.forEach((p, k) => expect(out.advantages[p]).toBe(ref.advantages[6 + k]));
    expect(out.advantages[0]).toBe(0);
    expect(out.groups.map((g) => g.members)).toEqual([[0, 1], [2]]);
    expect(out.sessionAdvantages.get(2)).toBe(2);
    expect(out.sessionBaselines.get(0)).toBeCloseTo((ref.baselines[0] + ref.baselines[1] + ref.baselines[2]) / 3, 15);
  });

  it('orders an episode’s ids by call, then by place, so observations between actions are skipped (TIR)', () => {
    // One session, two calls in one chain: [prompt, a0, a1, obs, a2] with call indices 0, 0, -, 1; a partner of one call.
    const sessionIds = Int32Array.from([1, 1, 1, 1, 1, 2, 2, 2, 0, 0]);
    const callIndex = Int32Array.from([-1, 0, 0, -1, 1, -1, 0, 0, -1, -1]);
    const responseMask = Float64Array.from([0, 1, 1, 0, 1, 0, 1, 1, 0, 0]);
    const tokenRewards = Float64Array.from([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
    const oldLogp = new Float64Array(10).fill(log(0.5));
    const sumPiSquared = new Float64Array(10).fill(0.5);
    const out = otbPacked(
      {
        rows: 1,
        width: 10,
        sessionIds,
        callIndex,
        responseMask,
        tokenRewards,
        oldLogp,
        sumPiSquared,
        groupOf: () => 'g',
      },
      { align: 'token' },
    );
    const ref = otbAdvantages(
      {
        rows: 2,
        width: 3,
        tokenRewards: [0, 0, 1, 0, 0, 0],
        responseMask: [1, 1, 1, 1, 1, 0],
        oldLogp: Array(6).fill(log(0.5)),
        sumPiSquared: Array(6).fill(0.5),
        groups: ['g', 'g'],
      },
      { align: 'token' },
    );
    expect([out.advantages[1], out.advantages[2], out.advantages[4]]).toEqual(
      Array.from(ref.advantages.subarray(0, 3)),
    );
    expect([out.advantages[6], out.advantages[7]]).toEqual(Array.from(ref.advantages.subarray(3, 5)));
    expect(out.advantages[3]).toBe(0);
  });
});
