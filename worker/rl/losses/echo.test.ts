import { describe, expect, it } from 'vitest';
import { centralDiff } from '../testing/finite-diff';
import { aggregatePolicyLoss } from './aggregate-policy-loss';
import { echoLoss } from './echo';
import { maxDiff, table } from '../testing/loss-table';
import { ppoLoss } from './ppo';

const ctx = table();
const ppoMean = (-Math.exp(0.1) + Math.exp(0.4) + 0.4 - 2 - 0.6) / 5;

describe('echo', () => {
  it('is rLLM ppo_clip plus 0.05 × token-mean CE on observation tokens (t2, logp = −2)', () => {
    const out = aggregatePolicyLoss(echoLoss(ctx), ctx, { mode: 'token-mean' });
    expect(out.policyLoss).toBeCloseTo(ppoMean, 12);
    expect(out.auxiliaryLoss.echo).toBeCloseTo(0.05 * 2, 12);
    expect(out.loss).toBeCloseTo(ppoMean + 0.1, 12);
    expect(out.dlogp[2]).toBeCloseTo(-0.05, 12);
  });
  it('its policy term is rLLM ppo_clip (no dual clip) unless compat says verl', () => {
    const dual = {
      ...ctx,
      logp: [Math.log(4), -0.5, -2, -1.2, -0.3, -0.8],
      oldLogp: [0, -0.9, -2, -0.9, -0.3, -1],
      advantages: [-1, -1, 0, -0.5, 2, 0.5],
    };
    expect(echoLoss(dual).loss[0]).toBeCloseTo(4, 12);
    expect(echoLoss(dual, { compat: 'verl' }).loss[0]).toBeCloseTo(3, 12);
    expect(Array.from(echoLoss(ctx).loss)).toEqual(Array.from(ppoLoss(ctx, { compat: 'rllm' }).loss));
  });
  it('coefficient 0 is plain ppo: no auxiliary term', () => {
    const out = echoLoss(ctx, { coefficient: 0 });
    expect(out.auxiliary).toEqual([]);
    expect(out.metrics.echo_coef).toBeUndefined();
    expect(echoLoss(ctx).metrics.echo_coef).toBe(0.05);
  });
  it('needs observationMask', () => {
    expect(() => echoLoss({ ...ctx, observationMask: undefined })).toThrow(/needs observationMask/);
    expect(() => echoLoss({ ...ctx, observationMask: [0, 0, 2, 0, 0, 0] })).toThrow(/observationMask\[0, 2\] = 2/);
  });
  it('the aggregated gradient matches central differences, the CE term included', () => {
    for (const mode of ['token-mean', 'seq-mean-token-mean'] as const) {
      const f = (x: Float64Array) => aggregatePolicyLoss(echoLoss({ ...ctx, logp: x }), ctx, { mode }).loss;
      const analytic = aggregatePolicyLoss(echoLoss(ctx), ctx, { mode }).dlogp;
      expect(maxDiff(analytic, centralDiff(f, ctx.logp))).toBeLessThan(1e-8);
    }
  });
});
