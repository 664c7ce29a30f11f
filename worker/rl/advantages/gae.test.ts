import { describe, expect, it } from 'vitest';
import { gae } from './gae';

// Two rows, width 4 (verl layout: one sequence per row). Row 1 has an observation token at 1.
const rows = 2;
const width = 4;
const mask = [0, 1, 1, 1, 1, 0, 1, 0];
const rewards = [0, 0, 0, 1, 0, 0, 2, 0];
const values = [0.5, 0.2, 0.4, 0.6, 0.1, 9, 0.3, 7];

describe('gae (per row, verl)', () => {
  it('hand-computed recursion, γ = 0.9, λ = 0.8, un-whitened', () => {
    const out = gae({ rewards, values, mask, rows, width }, { gamma: 0.9, lam: 0.8, whiten: false });
    // Row 0 backwards: 0.4; 0.14 + 0.72·0.4 = 0.428; 0.16 + 0.72·0.428 = 0.46816; carried to col 0.
    // Row 1: col 3 untouched (0); col 2: 1.7; col 1 carries 1.7; col 0: 0.17 + 0.72·1.7 = 1.394.
    const raw = [0.46816, 0.46816, 0.428, 0.4, 1.394, 1.7, 1.7, 0];
    raw.forEach((e, i) => expect(out.advantages[i], `adv ${i}`).toBeCloseTo(e, 14));
    raw.forEach((e, i) => expect(out.returns[i], `ret ${i}`).toBeCloseTo(e + values[i], 14));
    expect(out.mass).toBe(5);
  });

  it('masked whitening over the 5 trainable tokens (verl masked_whiten, unbiased, +1e-8)', () => {
    const out = gae({ rewards, values, mask, rows, width }, { gamma: 0.9, lam: 0.8 });
    const onMask: Record<number, number> = {
      1: -0.660377128820647,
      2: -0.7250820747722203,
      3: -0.7701950848978191,
      4: 0.83131677456094,
      6: 1.3243375280764131,
    };
    for (const [i, e] of Object.entries(onMask)) expect(out.advantages[Number(i)], `adv ${i}`).toBeCloseTo(e, 12);
    // verl whitens every entry, the carried ones too: col 0 of row 0 equals col 1.
    expect(out.advantages[0]).toBeCloseTo(out.advantages[1], 15);
    // returns stay un-whitened
    expect(out.returns[1]).toBeCloseTo(0.46816 + 0.2, 14);
  });

  it('shiftMean false: divided by the std, the mean added back (verl masked_whiten shift_mean=False)', () => {
    // raw on the mask: 0.46816, 0.428, 0.4, 1.394, 1.7 (first test); μ = 4.39016/(5 + 1e-8) = 0.878032
    // unbiased var = Σ(x − μ)²/(5 + 1e-8) · 5/4 = 1.5408928/4 = 0.3852232; σ = √(var + 1e-8) = 0.6206635
    // a = (x − μ)/σ + μ = the whitened values of the previous test + 0.878032
    const out = gae({ rewards, values, mask, rows, width }, { gamma: 0.9, lam: 0.8, shiftMean: false });
    const onMask: Record<number, number> = {
      1: 0.21765486942328893,
      2: 0.15294992347171565,
      3: 0.10783691334611689,
      4: 1.709348772804876,
      6: 2.202369526320349,
    };
    for (const [i, e] of Object.entries(onMask)) expect(out.advantages[Number(i)], `adv ${i}`).toBeCloseTo(e, 12);
    // verl applies it to every entry: the carried col 0 of row 0 equals col 1
    expect(out.advantages[0]).toBeCloseTo(out.advantages[1], 15);
    const centred = gae({ rewards, values, mask, rows, width }, { gamma: 0.9, lam: 0.8 });
    for (let i = 0; i < 8; i++)
      expect(out.advantages[i] - centred.advantages[i], `shift ${i}`).toBeCloseTo(0.878031998243936, 12);
    expect(Array.from(out.returns)).toEqual(Array.from(centred.returns)); // returns stay un-whitened
    expect(() => gae({ rewards, values, mask, rows, width }, { shiftMean: 0 as never })).toThrow(/shiftMean = 0/);
  });

  it('limiting case γ = λ = 1: advantage = future reward − value', () => {
    const out = gae({ rewards, values, mask, rows, width }, { whiten: false });
    expect(out.advantages[1]).toBeCloseTo(1 - 0.2, 14);
    expect(out.advantages[2]).toBeCloseTo(1 - 0.4, 14);
    expect(out.advantages[4]).toBeCloseTo(2 - 0.1, 14);
  });

  it('λ = 0 is the one-step TD error', () => {
    const out = gae({ rewards, values, mask, rows, width }, { gamma: 0.9, lam: 0, whiten: false });
    expect(out.advantages[2]).toBeCloseTo(0 + 0.9 * 0.6 - 0.4, 14);
    expect(out.advantages[4]).toBeCloseTo(0 + 0.9 * 0.3 - 0.1, 14); // skips the observation token
  });

  it('no trainable token: zero advantages, zero returns, zero mass (dew)', () => {
    const out = gae({ rewards, values, mask: new Array(8).fill(0), rows, width });
    expect(out.mass).toBe(0);
    expect(out.advantages.every((a) => a === 0) && out.returns.every((a) => a === 0)).toBe(true);
  });

  it('refuses a single trainable token, naming it', () => {
    const one = [0, 0, 0, 0, 0, 0, 1, 0];
    expect(() => gae({ rewards, values, mask: one, rows, width })).toThrow(/only trainable token is \[1, 2\]/);
  });

  it('refuses bad shapes, non-0/1 masks and non-finite values on the mask', () => {
    expect(() => gae({ rewards, values: values.slice(1), mask, rows, width })).toThrow(/values: expected rows × width/);
    expect(() => gae({ rewards, values, mask: [0, 2, 1, 1, 1, 0, 1, 0], rows, width })).toThrow(/mask\[0, 1\] = 2/);
    const bad = values.slice();
    bad[3] = NaN;
    expect(() => gae({ rewards, values: bad, mask, rows, width })).toThrow(/values\[0, 3\] = NaN/);
    bad[3] = 0.6;
    bad[5] = NaN; // off the mask: ignored
    expect(gae({ rewards, values: bad, mask, rows, width }).advantages.every(Number.isFinite)).toBe(true);
  });
});

describe('gae (per session, dew)', () => {
  it('continues across rows in call order and equals verl on the concatenated episode', () => {
    // Episode: call 0 samples 2 ids, then an observation, call 1 samples 2 ids; the packer put
    // call 1's chain in row 0 and call 0's in row 1. A second one-call session sits in row 1.
    const w = 5;
    const sessionIds = [1, 1, 1, 0, 0, 1, 1, 1, 2, 2];
    const callIndex = [-1, 1, 1, -1, -1, -1, 0, 0, 0, 0];
    const m = [0, 1, 1, 0, 0, 0, 1, 1, 1, 1];
    const r = [0, 0, 3, 0, 0, 0, 0, 0, 0, 1];
    const v = [0, 0.5, 0.7, 0, 0, 0, 0.1, 0.3, 0.2, 0.4];
    const out = gae(
      { rewards: r, values: v, mask: m, rows: 2, width: w, sessionIds, callIndex },
      { gamma: 0.9, lam: 0.8, whiten: false },
    );
    // verl on the episode's action tokens concatenated: [v 0.1, 0.3, 0.5, 0.7], reward 3 at the end.
    const epi = gae(
      { rewards: [0, 0, 0, 3], values: [0.1, 0.3, 0.5, 0.7], mask: [1, 1, 1, 1], rows: 1, width: 4 },
      { gamma: 0.9, lam: 0.8, whiten: false },
    );
    expect(out.advantages[6]).toBeCloseTo(epi.advantages[0], 14);
    expect(out.advantages[7]).toBeCloseTo(epi.advantages[1], 14);
    expect(out.advantages[1]).toBeCloseTo(epi.advantages[2], 14);
    expect(out.advantages[2]).toBeCloseTo(epi.advantages[3], 14);
    // Session 2 is on its own: 0.2 → 0.4 with reward 1.
    expect(out.advantages[9]).toBeCloseTo(1 - 0.4, 14);
    expect(out.advantages[8]).toBeCloseTo(0.9 * 0.4 - 0.2 + 0.72 * 0.6, 14);
    expect(out.mass).toBe(6);
    // Off the mask: zero.
    for (const t of [0, 3, 4, 5]) expect(out.advantages[t]).toBe(0);
    // Row-major order (call 1 first) would give a different answer.
    const wrong = gae({ rewards: r, values: v, mask: m, rows: 2, width: w }, { gamma: 0.9, lam: 0.8, whiten: false });
    expect(wrong.advantages[6]).not.toBeCloseTo(out.advantages[6], 3);
  });

  it('refuses a trainable token outside any session', () => {
    expect(() =>
      gae({ rewards: [0, 1], values: [0, 0], mask: [1, 1], rows: 1, width: 2, sessionIds: [1, 0], callIndex: [0, 0] }),
    ).toThrow(/sessionIds\[0, 1\] = 0 on a trainable token/);
  });
});
