import { describe, expect, it } from 'vitest';
import { aggregate, aggregationWeights, AGGREGATION_MODES, type AggregationInput } from './aggregate';
import { sequenceSpans } from './table';
import { centralDiff } from './testing/finite-diff';

// 2×3; chains {0,1}, {2} (no mask), {3,4}, {5}; l[2] is NaN under a zero mask and must not leak.
const input: AggregationInput = {
  rows: 2,
  width: 3,
  mask: [1, 1, 0, 1, 1, 1],
  segmentIds: [1, 1, 2, 1, 1, 2],
  // sessions: A = tokens {0, 1, 5} (n = 3), B = tokens {3, 4} (n = 2)
  sessionWeights: [1 / 3, 1 / 3, 0, 1 / 2, 1 / 2, 1 / 3],
};
const l = [1, 2, NaN, 3, 4, 5];

describe('aggregate: hand values on a 2×3 table', () => {
  const cases: Array<[string, object, number, number[]]> = [
    ['token-mean', {}, 15 / 5, [0.2, 0.2, 0, 0.2, 0.2, 0.2]],
    ['token-sum', {}, 15, [1, 1, 0, 1, 1, 1]],
    ['seq-mean-token-sum', {}, 15 / 3, [1 / 3, 1 / 3, 0, 1 / 3, 1 / 3, 1 / 3]],
    ['seq-mean-token-mean', {}, (1.5 + 3.5 + 5) / 3, [1 / 6, 1 / 6, 0, 1 / 6, 1 / 6, 1 / 3]],
    ['seq-mean-token-sum-norm', {}, 15 / 3 / 3, [1 / 9, 1 / 9, 0, 1 / 9, 1 / 9, 1 / 9]],
    ['seq-mean-token-sum-norm', { lossScaleFactor: 10 }, 0.5, [1 / 30, 1 / 30, 0, 1 / 30, 1 / 30, 1 / 30]],
    ['session-mean', {}, (8 / 3 + 7 / 2) / 2, [1 / 6, 1 / 6, 0, 1 / 4, 1 / 4, 1 / 6]],
    // TRL counts the empty chain {2}: B = 4
    ['grpo', {}, (1.5 + 0 + 3.5 + 5) / 4, [1 / 8, 1 / 8, 0, 1 / 8, 1 / 8, 1 / 4]],
    ['dr_grpo', {}, 15 / 12, [1 / 12, 1 / 12, 0, 1 / 12, 1 / 12, 1 / 12]],
    ['dr_grpo', { maxCompletionLength: 5 }, 15 / 20, [1 / 20, 1 / 20, 0, 1 / 20, 1 / 20, 1 / 20]],
  ];
  for (const [mode, extra, loss, weights] of cases) {
    it(`${mode} ${JSON.stringify(extra)}`, () => {
      const out = aggregate(l, input, { mode: mode as never, ...extra });
      expect(out.loss).toBeCloseTo(loss, 7);
      for (let i = 0; i < 6; i++) expect(out.weights[i]).toBeCloseTo(weights[i], 7);
    });
  }

  it('seq-mean-token-mean carries verl 1e-8 on each count', () => {
    const w = aggregationWeights(input, { mode: 'seq-mean-token-mean' });
    expect(w[5]).toBe(1 / ((1 + 1e-8) * 3));
  });

  it('rows are the sequences when segmentIds are absent (verl layout)', () => {
    const rows = { ...input, segmentIds: undefined };
    expect(aggregate(l, rows, { mode: 'seq-mean-token-mean' }).loss).toBeCloseTo((1.5 + 4) / 2, 7);
    expect(aggregate(l, rows, { mode: 'grpo' }).loss).toBeCloseTo((1.5 + 4) / 2, 7);
    expect(aggregate(l, rows, { mode: 'seq-mean-token-sum' }).loss).toBeCloseTo(15 / 2, 12);
  });

  it('default mode is token-mean', () => {
    expect(aggregate(l, input).loss).toBe(3);
  });

  it('verl excludes an empty sequence, TRL grpo counts it', () => {
    const oneEmptyRow = { rows: 2, width: 3, mask: [1, 1, 0, 0, 0, 0] };
    const x = [2, 4, 0, 9, 9, 9];
    expect(aggregate(x, oneEmptyRow, { mode: 'seq-mean-token-mean' }).loss).toBeCloseTo(3, 7);
    expect(aggregate(x, oneEmptyRow, { mode: 'grpo' }).loss).toBeCloseTo(1.5, 12);
  });

  it('an empty mask gives zero loss and zero weights in every mode', () => {
    const empty = { ...input, mask: [0, 0, 0, 0, 0, 0] };
    for (const mode of AGGREGATION_MODES) {
      const out = aggregate([1, 2, 3, 4, 5, 6], empty, { mode });
      expect(out.loss).toBe(0);
      expect(Array.from(out.weights)).toEqual([0, 0, 0, 0, 0, 0]);
    }
  });
});

describe('aggregate: compat selects the verl seq-mean-token-sum-norm', () => {
  // l = 1, 2, ·, 3, 4, 5 (Σ = 15) over chains {0,1}, {3,4}, {5}: B′ = 3 non-empty, K = width = 3.
  // verl since b8d91ef8: Σ / (B′·K) = 15/9;  verl-legacy (≤ v0.7.0): Σ / K = 15/3 = 5, B′ times larger.
  it('verl-legacy divides by K only; verl (default) and rllm by B′·K', () => {
    const legacy = aggregate(l, input, { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' });
    expect(legacy.loss).toBeCloseTo(5, 14);
    expect(Array.from(legacy.weights)).toEqual([1 / 3, 1 / 3, 0, 1 / 3, 1 / 3, 1 / 3]);
    expect(aggregate(l, input, { mode: 'seq-mean-token-sum-norm' }).loss).toBeCloseTo(15 / 9, 14);
    expect(aggregate(l, input, { mode: 'seq-mean-token-sum-norm', compat: 'rllm' }).loss).toBeCloseTo(15 / 9, 14);
  });
  it('verl-legacy with K = 10: 15/10; and rows as sequences (B′ = 2) leave it unchanged', () => {
    expect(
      aggregate(l, input, { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy', lossScaleFactor: 10 }).loss,
    ).toBeCloseTo(1.5, 14);
    const rows = { ...input, segmentIds: undefined };
    expect(aggregate(l, rows, { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' }).loss).toBeCloseTo(5, 14);
    expect(aggregate(l, rows, { mode: 'seq-mean-token-sum-norm' }).loss).toBeCloseTo(15 / 6, 14);
  });
  it('every other mode reads the same under verl-legacy', () => {
    for (const mode of AGGREGATION_MODES.filter((m) => m !== 'seq-mean-token-sum-norm')) {
      expect(Array.from(aggregationWeights(input, { mode, compat: 'verl-legacy' })), mode).toEqual(
        Array.from(aggregationWeights(input, { mode })),
      );
    }
  });
  it('verl-legacy weights are ∂L/∂l', () => {
    const options = { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' } as const;
    const numeric = centralDiff((x) => aggregate(x, input, options).loss, [1, 2, 0.5, 3, 4, 5]);
    const weights = aggregationWeights(input, options);
    for (let i = 0; i < 6; i++) expect(numeric[i]).toBeCloseTo(weights[i], 8);
  });
  it('refuses trl with seq-mean-token-sum-norm, and an unknown compat', () => {
    expect(() => aggregate(l, input, { mode: 'seq-mean-token-sum-norm', compat: 'trl' })).toThrow(
      /TRL has no such mode/,
    );
    expect(aggregate(l, input, { mode: 'token-mean', compat: 'trl' }).loss).toBe(3);
    expect(() => aggregate(l, input, { compat: 'verl-0.6' as never })).toThrow(/aggregation compat = "verl-0.6"/);
  });
});

describe('aggregate: weights are ∂L/∂l (central differences)', () => {
  const finite = [1, 2, 0.5, 3, 4, 5];
  for (const mode of AGGREGATION_MODES) {
    it(mode, () => {
      const numeric = centralDiff((x) => aggregate(x, input, { mode }).loss, finite);
      const weights = aggregationWeights(input, { mode });
      for (let i = 0; i < 6; i++) expect(numeric[i]).toBeCloseTo(weights[i], 8);
    });
  }
});

describe('aggregate: identities', () => {
  it('session-mean = seq-mean-token-mean with one session per row (up to verl 1e-8)', () => {
    const perRow = { rows: 2, width: 3, mask: [1, 1, 0, 1, 1, 1], sessionWeights: [0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3] };
    const x = [1.5, -2, 7, 0.25, 3, -1];
    const a = aggregate(x, perRow, { mode: 'session-mean' });
    const b = aggregate(x, perRow, { mode: 'seq-mean-token-mean' });
    expect(Math.abs(a.loss - b.loss)).toBeLessThan(1e-7);
    expect(a.loss).not.toBe(b.loss); // the 1e-8 is there, and only there
    for (let i = 0; i < 6; i++) expect(Math.abs(a.weights[i] - b.weights[i])).toBeLessThan(1e-8);
  });

  it('session-mean is invariant to the scale of sessionWeights', () => {
    const scaled = { ...input, sessionWeights: Array.from(input.sessionWeights!, (w) => w * 7) };
    expect(aggregate(l, scaled, { mode: 'session-mean' }).loss).toBeCloseTo((8 / 3 + 7 / 2) / 2, 12);
  });

  it('a session split over two rows weighs as one', () => {
    // session A spans row 0 and row 1's second chain; seq-mean would count it twice
    const w = aggregationWeights(input, { mode: 'session-mean' });
    expect(w[0] + w[1] + w[5]).toBeCloseTo(0.5, 12);
    expect(w[3] + w[4]).toBeCloseTo(0.5, 12);
  });
});

describe('aggregate: refusals', () => {
  it('refuses an unknown mode, a bad mask, mass on padding, a missing sessionWeights', () => {
    expect(() => aggregate(l, input, { mode: 'seq-mean' as never })).toThrow(/unknown/);
    expect(() => aggregate(l, { ...input, mask: [1, 0.5, 0, 1, 1, 1] }, {})).toThrow(/mask\[0, 1\] = 0.5/);
    expect(() => aggregate(l, { ...input, segmentIds: [1, 1, 0, 1, 1, 0] }, {})).toThrow(/mask\[1, 2\] = 1 on padding/);
    expect(() => aggregate(l, { ...input, sessionWeights: undefined }, { mode: 'session-mean' })).toThrow(
      /sessionWeights/,
    );
    expect(() => aggregate([1, 2], input, {})).toThrow(/loss: expected rows × width/);
    expect(() => aggregate(l, { ...input, sessionWeights: [0, 0, 0, 0, 0, 0] }, { mode: 'session-mean' })).toThrow(
      /> 0/,
    );
  });

  it('sequenceSpans lists chains, or rows without segmentIds', () => {
    expect(sequenceSpans(input, input.mask).map((s) => [s.start, s.end])).toEqual([
      [0, 2],
      [2, 3],
      [3, 5],
      [5, 6],
    ]);
    expect(sequenceSpans({ rows: 2, width: 3 }, input.mask).map((s) => [s.start, s.end])).toEqual([
      [0, 3],
      [3, 6],
    ]);
  });
});
