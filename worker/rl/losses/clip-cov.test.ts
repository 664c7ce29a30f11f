import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { clipCovLoss, tokenCovariance } from './clip-cov';
import { ppoLoss } from './ppo';

// Over the mask: mean A = 2/(5 + 1e-8) ≈ .4, mean logp = −3.8/(5 + 1e-8) ≈ −.76, so
// cov ≈ .6·(−.24), −1.4·.26, ·, −.9·(−.44), 1.6·.46, .1·(−.04) = −.144, −.364, ·, .396, .736, −.004
const COV = [-0.144, -0.364, 0, 0.396, 0.736, -0.004];
// PPO's surrogate with ε = .2, no dual clip and no clamp (compat trl): clip_cov's value where corr = 1
const ppo = () => ppoLoss(table(), { compat: 'trl' });

describe('clip_cov (verl): hand values', () => {
  it('the token covariances, verl masked means', () => {
    const cov = tokenCovariance(table().advantages, table().logp, table().mask);
    for (let i = 0; i < 6; i++) expect(cov[i], `cov ${i}`).toBeCloseTo(COV[i], 7);
  });
  it('default bounds (1, 5): no candidate, so it is PPO without a dual clip', () => {
    const out = clipCovLoss(table());
    expect(maxDiff(out.loss, ppo().loss)).toBe(0);
    expect(maxDiff(out.dlogp, ppo().dlogp)).toBe(0);
    expect(out.metrics.pg_clipfrac).toBe(0);
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.4 / 5, 8);
  });
  it('lb = .3: t3 (cov .396) is PPO-clipped and so no candidate; t4 (cov .736) is dropped', () => {
    const out = clipCovLoss(table(), { lb: 0.3 });
    const p = ppo();
    for (const i of [0, 1, 3, 5]) {
      expect(out.loss[i], `loss ${i}`).toBe(p.loss[i]);
      expect(out.dlogp[i], `dlogp ${i}`).toBe(p.dlogp[i]);
    }
    expect(p.dlogp[4]).toBe(-2); // t4: r = 1, g = −A·r
    expect(Math.abs(out.loss[4]) + Math.abs(out.dlogp[4])).toBe(0);
    expect(out.metrics.pg_clipfrac).toBeCloseTo(1 / 5, 8);
  });
  it('ub bounds the candidates: ub = .7 leaves t4 out', () => {
    expect(clipCovLoss(table(), { lb: 0.3, ub: 0.7 }).dlogp[4]).toBe(-2);
  });
  it('k = max(⌊ratio·Σm⌋, 1) of the candidates are dropped, drawn by a seed from the batch', () => {
    // ε_low = .5: t3 (r = e^−.3) is inside the clip now, so t3 and t4 are candidates
    const one = clipCovLoss(table(), { lb: 0.3, clipLow: 0.5, ratio: 0.2 }); // ⌊.2·5⌋ = 1
    const zeros = [3, 4].filter((i) => one.dlogp[i] === 0);
    expect(zeros.length).toBe(1);
    expect(one.metrics.pg_clipfrac).toBeCloseTo(1 / 5, 8);
    // the same batch drops the same token
    expect(Array.from(clipCovLoss(table(), { lb: 0.3, clipLow: 0.5, ratio: 0.2 }).dlogp)).toEqual(
      Array.from(one.dlogp),
    );
    const two = clipCovLoss(table(), { lb: 0.3, clipLow: 0.5, ratio: 0.4 }); // ⌊.4·5⌋ = 2
    expect([two.dlogp[3], two.dlogp[4]]).toEqual([0, 0]);
    expect(two.metrics.pg_clipfrac).toBeCloseTo(2 / 5, 8);
  });
  it('different batches draw differently: both candidates are dropped across a few batches', () => {
    const picked = new Set<number>();
    for (let k = 0; k < 16; k++) {
      const ctx = table();
      const old = Array.from(ctx.oldLogp!);
      old[0] += k * 1e-3; // another batch: t0 stays unclipped and off the candidates
      const out = clipCovLoss({ ...ctx, oldLogp: old }, { lb: 0.3, clipLow: 0.5, ratio: 0.2 });
      for (const i of [3, 4]) if (out.dlogp[i] === 0) picked.add(i);
    }
    expect([...picked].sort()).toEqual([3, 4]);
  });
  it('refuses ratio ≤ 0 (verl asserts clip_cov_ratio > 0)', () => {
    expect(() => clipCovLoss(table(), { ratio: 0 })).toThrow(/ratio = 0: expected > 0/);
  });
});

describe('clip_cov: gradients against central differences (selection at sg(logp))', () => {
  for (const lb of [1, 0.3])
    it(`lb ${lb}`, () => {
      const [a, n] = gradients((ctx) => clipCovLoss(ctx, { lb }), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
});
