import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { icepopLoss } from './icepop';
import { reinforceLoss } from './reinforce';

const ctx = table();
const d = [0, 1, 0, -0.7, 0, 0.1].map(Math.exp); // exp(logp − behavior)

describe('icepop: hand values', () => {
  const out = icepopLoss(ctx);
  it('band [0.5, 5] drops t3 (d = e^−0.7 = 0.497) and keeps the rest', () => {
    expect(out.loss[3]).toBe(0);
    expect(out.dlogp[3]).toBe(0);
    expect(out.loss[1]).toBeCloseTo(-Math.E * 0.5, 12); // −(−1)·e·(−0.5)
    expect(out.dlogp[1]).toBeCloseTo(Math.E, 12);
    expect(out.dlogp[5]).toBeCloseTo(-0.5 * d[5], 12);
  });
  it('metrics: mask_frac and ratio stats over active tokens (rLLM exact means)', () => {
    expect(out.metrics.mask_frac).toBe(1 / 5);
    expect(out.metrics.ratio_min).toBeCloseTo(Math.exp(-0.7), 12);
    expect(out.metrics.ratio_max).toBeCloseTo(Math.E, 12);
    expect(out.metrics.ratio_mean).toBeCloseTo((1 + Math.E + Math.exp(-0.7) + 1 + Math.exp(0.1)) / 5, 12);
  });
  it('β below e drops t1 too; the edges are inclusive', () => {
    expect(icepopLoss(ctx, { beta: 2 }).dlogp[1]).toBe(0);
    expect(icepopLoss(ctx, { alpha: 1, beta: 1 }).dlogp[0]).toBe(-1); // d = 1 exactly
  });
  it('needs behaviorLogp; with no active token the ratio stats are 1', () => {
    expect(() => icepopLoss({ ...ctx, behaviorLogp: undefined })).toThrow(/needs behaviorLogp/);
    expect(icepopLoss({ ...ctx, mask: [0, 0, 0, 0, 0, 0] }).metrics.ratio_min).toBe(1);
  });
});

describe('icepop: limiting case and gradients', () => {
  it('an infinite band is REINFORCE with the IS weight d', () => {
    const ice = icepopLoss(ctx, { alpha: 0, beta: Infinity });
    const rf = reinforceLoss(ctx);
    for (const i of [0, 1, 3, 4, 5]) {
      expect(ice.loss[i]).toBeCloseTo(rf.loss[i] * d[i], 12);
      expect(ice.dlogp[i]).toBeCloseTo(rf.dlogp[i] * d[i], 12);
    }
  });
  it('gradient against central differences (sg held)', () => {
    const [a, n] = gradients((c) => icepopLoss(c), ctx);
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
});
