import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { klCovLoss } from './kl-cov';

// d = logp − old = .1, .4, ·, −.3, 0, .2;  A = 1, −1, ·, −.5, 2, .5
// cov (exact means .4 and −.76) = −.144, −.364, ·, .396, .736, −.004: t4 first, then t3, t5, t0, t1
const d = [0.1, 0.4, 0, -0.3, 0, 0.2];
const A = table().advantages;

describe('kl_cov (verl): hand values', () => {
  it('the default ratio penalises one token, the largest covariance (t4, where d = 0: no change)', () => {
    const out = klCovLoss(table());
    for (const i of [0, 1, 3, 4, 5]) {
      expect(out.loss[i], `loss ${i}`).toBeCloseTo(-A[i] * Math.exp(d[i]), 12);
      expect(out.dlogp[i], `dlogp ${i}`).toBeCloseTo(-A[i] * Math.exp(d[i]), 12);
    }
    expect(out.metrics.ppo_kl).toBeCloseTo(1 / 5, 8); // (.1 + .4 + .3 + 0 + .2)/5, |d|
  });
  it('ratio .4: ⌊.4·5⌋ = 2 tokens, t4 and t3, get coef·|d| and coef·sign(d)', () => {
    const out = klCovLoss(table(), { ratio: 0.4, coef: 0.5 });
    expect(out.loss[3]).toBeCloseTo(0.5 * Math.exp(-0.3) + 0.5 * 0.3, 12);
    expect(out.dlogp[3]).toBeCloseTo(0.5 * Math.exp(-0.3) - 0.5, 12);
    expect(out.loss[4]).toBeCloseTo(-2, 12); // |0| = 0
    expect(out.dlogp[4]).toBeCloseTo(-2, 12); // torch: ∂|x|/∂x = 0 at 0
    expect(out.loss[5]).toBeCloseTo(-0.5 * Math.exp(0.2), 12); // third: not penalised
  });
  it('ratio .6: t5 joins (cov −.004 is the third largest)', () => {
    const out = klCovLoss(table(), { ratio: 0.6, coef: 0.5 });
    expect(out.loss[5]).toBeCloseTo(-0.5 * Math.exp(0.2) + 0.1, 12);
    expect(out.dlogp[5]).toBeCloseTo(-0.5 * Math.exp(0.2) + 0.5, 12);
    expect(out.loss[0]).toBeCloseTo(-Math.exp(0.1), 12);
  });
  it('coef 0: the unclipped surrogate −A·r (no clip, unlike PPO)', () => {
    const out = klCovLoss(table(), { ratio: 1, coef: 0 });
    expect(out.dlogp[1]).toBeCloseTo(Math.exp(0.4), 12); // PPO ε = .2 would not clip this A < 0 either
    expect(out.dlogp[3]).toBeCloseTo(0.5 * Math.exp(-0.3), 12); // PPO would clip it to 0
  });
  it('refuses ratio ≤ 0', () => {
    expect(() => klCovLoss(table(), { ratio: -1 })).toThrow(/ratio = -1: expected > 0/);
  });
});

describe('kl_cov: gradients against central differences (selection at sg(logp))', () => {
  for (const ratio of [2e-4, 0.4, 1])
    it(`ratio ${ratio}`, () => {
      // t4's d = 0 is |d|'s kink: a central difference there is 0, torch's gradient of |x| at 0
      const [a, n] = gradients((ctx) => klCovLoss(ctx, { ratio, coef: 0.5 }), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
    });
});
