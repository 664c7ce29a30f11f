import { describe, expect, it } from 'vitest';
import { SplitTuner } from './split-tuner';

const BASE = 1000;

/** Reports `n` splits of two parts near the threshold with the given speedup (here 1 ms, the whole 2/speedup). */
function report(t: SplitTuner, n: number, speedup: number, partWork = t.minWork) {
  for (let i = 0; i < n; i++) t.record(2, partWork, 1, 2 / speedup);
}

describe('SplitTuner: parts by the work of an op', () => {
  it('one part per minWork, at most the threads and the splittable rows; below 2·minWork on the calling thread', () => {
    const t = new SplitTuner(BASE);
    expect([1999, 2000, 3999, 16_000, 1e9].map((w) => t.parts(w, 100, 8))).toEqual([1, 2, 3, 8, 8]);
    expect(t.parts(1e9, 3, 8)).toBe(3);
    expect(t.parts(1e9, 100, 1)).toBe(1);
  });
});

describe('SplitTuner: the threshold follows the measured speedup of splits near it', () => {
  it('doubles after 8 splits that do not pay, up to max, and stays at base while they pay', () => {
    const t = new SplitTuner(BASE, 4 * BASE);
    report(t, 7, 0.8);
    expect(t.minWork).toBe(BASE); // not before 8 samples
    report(t, 1, 0.8);
    expect(t.minWork).toBe(2 * BASE);
    report(t, 8, 0.8);
    report(t, 8, 0.8);
    expect(t.minWork).toBe(4 * BASE); // max
    const fast = new SplitTuner(BASE);
    report(fast, 50, 1.9);
    expect(fast.minWork).toBe(BASE);
  });

  it('ignores ops far above the threshold: they split at any threshold', () => {
    const t = new SplitTuner(BASE);
    report(t, 50, 0.5, 4 * BASE);
    expect(t.minWork).toBe(BASE);
  });

  it('above base it still splits one op in 16 that base would, and halves back once those pay', () => {
    const t = new SplitTuner(BASE);
    report(t, 8, 0.7);
    expect(t.minWork).toBe(2 * BASE);
    const parts = Array.from({ length: 32 }, () => t.parts(3 * BASE, 100, 4));
    expect(parts.filter((p) => p > 1)).toEqual([3, 3]);
    expect(parts.filter((p) => p === 1)).toHaveLength(30);
    report(t, 8, 1.8, 1.5 * BASE);
    expect(t.minWork).toBe(BASE);
  });

  it('refuses a base below 1 or a max below base', () => {
    expect(() => new SplitTuner(0)).toThrow(/base 0, max 0: expected 1 ≤ base ≤ max/);
    expect(() => new SplitTuner(10, 5)).toThrow(/expected 1 ≤ base ≤ max/);
  });
});
