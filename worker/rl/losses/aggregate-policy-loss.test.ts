import { describe, expect, it } from 'vitest';
import { aggregationWeights } from '../aggregate';
import { centralDiff } from '../testing/finite-diff';
import { aggregatePolicyLoss } from './aggregate-policy-loss';
import { maxDiff, table } from '../testing/loss-table';
import { gspoLoss } from './gspo';
import { ppoLoss } from './ppo';
import { reinforceLoss } from './reinforce';

const ctx = table();
const ppoTokens = [-Math.exp(0.1), Math.exp(0.4), 0, 0.4, -2, -0.6];

describe('aggregatePolicyLoss', () => {
  it('token-mean of the hand ppo table, with and without correction weights', () => {
    expect(aggregatePolicyLoss(ppoLoss(ctx), ctx).loss).toBeCloseTo(-0.3626692440868755, 12);
    const c = [1, 0.5, 0, 2, 1, 0];
    const out = aggregatePolicyLoss(ppoLoss(ctx), ctx, { mode: 'token-mean' }, c);
    expect(out.loss).toBeCloseTo(
      ppoTokens.reduce((s, l, i) => s + (l * c[i]) / 5, 0),
      12,
    );
    expect(out.dlogp[1]).toBeCloseTo((Math.exp(0.4) * 0.5) / 5, 12);
    expect(out.dlogp[5]).toBe(0);
    expect(Array.from(out.weights)).toEqual([0.2, 0.1, 0, 0.4, 0.2, 0]);
  });

  it('dlogp matches central differences for a non-local loss (gspo trl) with corrections and session-mean', () => {
    const c = [1, 0.5, 0, 2, 1, 0.3];
    const input = { ...ctx, sessionWeights: [1 / 3, 1 / 3, 0, 1 / 2, 1 / 2, 1 / 3] };
    const opts = { mode: 'session-mean' as const };
    const f = (x: Float64Array) =>
      aggregatePolicyLoss(gspoLoss({ ...ctx, logp: x }, { compat: 'trl' }), input, opts, c).loss;
    const analytic = aggregatePolicyLoss(gspoLoss(ctx, { compat: 'trl' }), input, opts, c).dlogp;
    expect(maxDiff(analytic, centralDiff(f, ctx.logp))).toBeLessThan(1e-8);
  });

  it('PPO with an infinite clip = plain policy gradient, aggregated', () => {
    const w = aggregationWeights(ctx, { mode: 'seq-mean-token-mean' });
    const out = aggregatePolicyLoss(ppoLoss(ctx, { clipLow: Infinity, dualClip: Infinity }), ctx, {
      mode: 'seq-mean-token-mean',
    });
    let expected = 0;
    for (const i of [0, 1, 3, 4, 5]) {
      const r = Math.exp(ctx.logp[i] - ctx.oldLogp![i]);
      expected += -ctx.advantages[i] * r * w[i];
      expect(out.dlogp[i]).toBeCloseTo(-ctx.advantages[i] * r * w[i], 12);
    }
    expect(out.loss).toBeCloseTo(expected, 12);
  });

  it('with ratio ≡ 1 (logp = old) the PPO gradient is REINFORCE’s', () => {
    const onPolicy = { ...ctx, oldLogp: ctx.logp };
    const ppo = aggregatePolicyLoss(ppoLoss(onPolicy), onPolicy).dlogp;
    const rf = aggregatePolicyLoss(reinforceLoss(onPolicy), onPolicy).dlogp;
    expect(maxDiff(ppo, rf)).toBeLessThan(1e-15);
  });

  it('refuses correction weights of the wrong shape', () => {
    expect(() => aggregatePolicyLoss(ppoLoss(ctx), ctx, {}, [1, 2])).toThrow(/correctionWeights/);
  });
});
