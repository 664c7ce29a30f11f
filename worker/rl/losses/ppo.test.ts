import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { ppoLoss } from './ppo';

const r = (d: number) => Math.exp(d);

describe('ppo (verl): hand values on the 2×3 table', () => {
  const out = ppoLoss(table());
  it('per-token loss', () => {
    // t0 A=1 r=e^.1 inside; t1 A=−1 r=e^.4 above (not clipped for A<0); t3 A=−.5 r=e^−.3 < .8 clipped;
    // t4 A=2 r=1; t5 A=.5 r=e^.2 > 1.2 clipped
    const expected = [-r(0.1), r(0.4), 0, 0.4, -2, -0.6];
    for (let i = 0; i < 6; i++) expect(out.loss[i]).toBeCloseTo(expected[i], 12);
  });
  it('per-token gradient', () => {
    expect(Array.from(out.dlogp).map((x) => +x.toFixed(12))).toEqual([
      -+r(0.1).toFixed(12),
      +r(0.4).toFixed(12),
      0,
      0,
      -2,
      0,
    ]);
  });
  it('metrics: clip fractions and ppo_kl (verl masked_mean, +1e-8)', () => {
    expect(out.metrics.pg_clipfrac).toBeCloseTo(2 / 5, 8);
    expect(out.metrics.pg_clipfrac).toBe(2 / (5 + 1e-8));
    expect(out.metrics.pg_clipfrac_lower).toBe(0);
    expect(out.metrics.ppo_kl).toBeCloseTo(-(0.1 + 0.4 - 0.3 + 0 + 0.2) / 5, 8);
    expect(out.local).toBe(true);
  });
});

describe('ppo: dual clip', () => {
  const ctx = {
    ...table(),
    logp: [Math.log(4), 0, 0, 0, 0, 0],
    oldLogp: [0, 0, 0, 0, 0, 0],
    advantages: [-0.5, 0, 0, 0, 0, 0],
    mask: [1, 0, 0, 0, 0, 0],
  };
  it('verl: r = 4 > c = 3 with A < 0 caps the loss at −A·c, no gradient, counted in pg_clipfrac_lower', () => {
    const out = ppoLoss(ctx);
    expect(out.loss[0]).toBeCloseTo(1.5, 12);
    expect(out.dlogp[0]).toBe(0);
    expect(out.metrics.pg_clipfrac_lower).toBeCloseTo(1, 7);
  });
  it('trl and rllm have no dual clip: −A·r with gradient −A·r', () => {
    for (const compat of ['trl', 'rllm'] as const) {
      const out = ppoLoss(ctx, { compat });
      expect(out.loss[0]).toBeCloseTo(2, 12);
      expect(out.dlogp[0]).toBeCloseTo(2, 12);
      expect(out.metrics.pg_clipfrac_lower).toBe(0);
    }
  });
  it('explicit options win over compat defaults; c ≤ 1 is refused as verl asserts', () => {
    expect(ppoLoss(ctx, { compat: 'trl', dualClip: 3 }).loss[0]).toBeCloseTo(1.5, 12);
    expect(() => ppoLoss(ctx, { dualClip: 1 })).toThrow(/dualClip = 1/);
  });
});

describe('ppo: torch tie rules at exact kinks', () => {
  it('on the exact dual-clip point r = c the gradient is halved (torch.minimum splits ties)', () => {
    const ctx = {
      ...table(),
      logp: [1.2, 0, 0, 0, 0, 0],
      oldLogp: [0, 0, 0, 0, 0, 0],
      advantages: [-1, 0, 0, 0, 0, 0],
      mask: [1, 0, 0, 0, 0, 0],
    };
    const r = Math.exp(1.2);
    const out = ppoLoss(ctx, { dualClip: r });
    expect(out.loss[0]).toBe(r);
    expect(out.dlogp[0]).toBe(0.5 * r);
    expect(out.metrics.pg_clipfrac_lower).toBe(0); // lc > −A·c is false on the tie
  });
});

describe('ppo: ±20 log-ratio clamp', () => {
  const ctx = {
    ...table(),
    logp: [-1, 0, 0, 0, 0, 0],
    oldLogp: [-26, 0, 0, 0, 0, 0],
    advantages: [-1e-9, 0, 0, 0, 0, 0],
    mask: [1, 0, 0, 0, 0, 0],
  };
  it('verl clamps Δ = 25 to 20 and blocks the gradient; TRL does not clamp', () => {
    const v = ppoLoss(ctx, { dualClip: Infinity });
    expect(v.loss[0]).toBeCloseTo(1e-9 * Math.exp(20), 12);
    expect(v.dlogp[0]).toBe(0);
    expect(v.metrics.ppo_kl).toBeCloseTo(-20, 6);
    const t = ppoLoss(ctx, { compat: 'trl' });
    expect(t.loss[0]).toBeCloseTo(1e-9 * Math.exp(25), 9);
    expect(t.dlogp[0]).toBeCloseTo(1e-9 * Math.exp(25), 9);
  });
});

describe('ppo: TRL delta and framework metrics', () => {
  it('delta caps r in the unclipped term only', () => {
    const ctx = { ...table(), advantages: [1, -1, 0, -0.5, 2, -0.5] }; // t5: A<0, r = e^.2
    const out = ppoLoss(ctx, { compat: 'trl', delta: 1.1 });
    // t5: l1 = .5·min(e^.2, 1.1) = .55, l2 = .5·1.2 = .6 → max = .6 (clipped), g = 0
    expect(out.loss[5]).toBeCloseTo(0.6, 12);
    expect(out.dlogp[5]).toBe(0);
    // t1: A = −1, r = e^.4: l1 = 1.1 (delta), l2 = 1.2 → 1.2, g = 0
    expect(out.loss[1]).toBeCloseTo(1.2, 12);
  });
  it('trl clip_ratio metrics and rllm clip_frac on the hand table', () => {
    const t = ppoLoss(table(), { compat: 'trl' }).metrics;
    expect(t['clip_ratio/low_mean']).toBeCloseTo(1 / 5, 12); // t3
    expect(t['clip_ratio/high_mean']).toBeCloseTo(1 / 5, 12); // t5
    expect(t['clip_ratio/region_mean']).toBeCloseTo(2 / 5, 12);
    expect(ppoLoss(table(), { compat: 'rllm' }).metrics.clip_frac).toBeCloseTo(3 / 5, 12); // t1, t3, t5 outside the band
  });
});

describe('ppo: limiting cases', () => {
  it('infinite clip = plain policy gradient −A·r', () => {
    const ctx = table();
    const out = ppoLoss(ctx, { clipLow: Infinity, dualClip: Infinity });
    for (const i of [0, 1, 3, 4, 5]) {
      const ratio = Math.exp(ctx.logp[i] - ctx.oldLogp![i]);
      expect(out.loss[i]).toBeCloseTo(-ctx.advantages[i] * ratio, 12);
      expect(out.dlogp[i]).toBeCloseTo(-ctx.advantages[i] * ratio, 12);
    }
    expect(out.metrics.pg_clipfrac).toBe(0);
  });
  it('zero off the mask, even on NaN inputs there', () => {
    const out = ppoLoss({ ...table(), logp: [-1.0, -0.5, NaN, -1.2, -0.3, -0.8] });
    expect(out.loss[2]).toBe(0);
    expect(out.dlogp[2]).toBe(0);
  });
  it('refuses a missing oldLogp and a non-finite masked input', () => {
    expect(() => ppoLoss({ ...table(), oldLogp: undefined })).toThrow(/needs oldLogp/);
    expect(() => ppoLoss({ ...table(), advantages: [1, NaN, 0, 0, 0, 0] })).toThrow(/advantages\[0, 1\] = NaN/);
  });
});

describe('ppo: gradients against central differences', () => {
  for (const compat of ['verl', 'trl', 'rllm'] as const) {
    it(compat, () => {
      const [a, n] = gradients((ctx) => ppoLoss(ctx, { compat }), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
  }
  it('dual clip active and a clipped token both have zero gradient numerically too', () => {
    const ctx = {
      ...table(),
      logp: [Math.log(4), -0.5, -2, -1.2, -0.3, -0.8],
      oldLogp: [0, -0.9, -2, -0.9, -0.3, -1],
      advantages: [-1, -1, 0, -0.5, 2, 0.5],
    };
    const [a, n] = gradients((c) => ppoLoss(c), ctx);
    expect(a[0]).toBe(0);
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
});
