import { describe, expect, it } from 'vitest';
import { aggregationWeights, weightedSum } from '../aggregate';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { droLoss } from './dro';
import { reinforceLoss } from './reinforce';

describe('dro (verl): hand values', () => {
  // d = logp − old = .1, .4, ·, −.3, 0, .2;  β = .5
  const out = droLoss(table(), { beta: 0.5 });
  const ctx = table();
  const d = [0.1, 0.4, 0, -0.3, 0, 0.2];
  it('l = −(A·logp − ½β·d²), g = −A + β·d', () => {
    for (const i of [0, 1, 3, 4, 5]) {
      expect(out.loss[i], `loss ${i}`).toBeCloseTo(-(ctx.advantages[i] * ctx.logp[i] - 0.25 * d[i] * d[i]), 12);
      expect(out.dlogp[i], `dlogp ${i}`).toBeCloseTo(-ctx.advantages[i] + 0.5 * d[i], 12);
    }
    expect(out.loss[1]).toBeCloseTo(-(0.5 - 0.04), 12); // A = −1, logp = −.5, d = .4
    expect(out.metrics.ppo_kl).toBeCloseTo(-0.08, 8);
  });
  it("verl's own test: token-mean over [[2, −1.5, 9]] with the last token masked is 0.126", () => {
    // tests/trainer/ppo/test_dynamic_policy_losses_on_cpu.py: β = 0.05
    const v = {
      rows: 1,
      width: 3,
      oldLogp: [-1.0, -0.7, -0.2],
      logp: [-0.8, -0.9, -0.1],
      advantages: [2.0, -1.5, 9.0],
      mask: [1, 1, 0],
    };
    const o = droLoss(v, { beta: 0.05 });
    // (1.6 + .001 − 1.35 + .001)/2
    expect(weightedSum(aggregationWeights(v, { mode: 'token-mean' }), o.loss)).toBeCloseTo(0.126, 12);
  });
  it('refuses a missing or non-positive β, as verl', () => {
    expect(() => droLoss(table())).toThrow(/beta = undefined: expected a number > 0/);
    expect(() => droLoss(table(), { beta: 0 })).toThrow(/beta = 0/);
  });
});

describe('dro: limiting cases', () => {
  it('on-policy (old = logp) it is REINFORCE, in value and gradient', () => {
    const ctx = { ...table(), oldLogp: table().logp };
    const dro = droLoss(ctx, { beta: 3 });
    const re = reinforceLoss(ctx);
    expect(maxDiff(dro.loss, re.loss)).toBe(0);
    expect(maxDiff(dro.dlogp, re.dlogp)).toBe(0);
  });
});

describe('dro: gradients against central differences', () => {
  it('β = .5', () => {
    const [a, n] = gradients((ctx) => droLoss(ctx, { beta: 0.5 }), table());
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
});
