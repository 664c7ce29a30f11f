import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { ppoLoss } from './ppo';
import {
  isPolicyLossName,
  policyLoss,
  POLICY_LOSS_NAMES,
  POLICY_LOSSES,
  runPolicyLoss,
  type PolicyLossName,
  type PolicyLossSpec,
} from './registry';
import type { PolicyLossContext, PolicyLossResult } from './types';

describe('policy-loss registry', () => {
  it('holds the losses of the spec, rLLM and verl', () => {
    expect([...POLICY_LOSS_NAMES].sort()).toEqual(
      [
        ...['cispo', 'dppo_kl', 'dppo_tv', 'echo', 'gspo', 'icepop', 'ppo', 'reinforce', 'reinforce_kl'],
        ...['geo_mean', 'clip_cov', 'kl_cov', 'sapo', 'dro', 'vespo'],
      ].sort(),
    );
    expect(isPolicyLossName('ppo')).toBe(true);
    expect(isPolicyLossName('vanilla')).toBe(false);
    expect(isPolicyLossName('toString')).toBe(false);
  });

  it('dispatches by name with typed options, and by spec', () => {
    const a = policyLoss('ppo', table(), { dualClip: 4 });
    const b = ppoLoss(table(), { dualClip: 4 });
    expect(Array.from(a.loss)).toEqual(Array.from(b.loss));
    const spec: PolicyLossSpec = { name: 'cispo', options: { compat: 'trl', cap: 1.3 } };
    expect(runPolicyLoss(spec, table()).dlogp[1]).toBeCloseTo(1.3, 12);
  });

  it('refuses an unknown name, listing the known ones', () => {
    expect(() => policyLoss('vanilla' as never, table())).toThrow(/'vanilla' is unknown; expected one of ppo, gspo/);
  });

  // Options a loss needs (dro's β has no default), or that move a kink off the table's point
  // (geo_mean's default log-ratio bound 0.2 is t5's logp − old).
  const OPTIONS: Partial<Record<PolicyLossName, object>> = { geo_mean: { clipHigh: 0.3 }, dro: { beta: 0.5 } };
  // every registered loss: backward(w) = ∂(Σ w l)/∂logp with stop-gradients held at the base point
  for (const name of POLICY_LOSS_NAMES) {
    it(`${name}: backward(w) against central differences`, () => {
      const fn = POLICY_LOSSES[name] as (ctx: PolicyLossContext, o?: object) => PolicyLossResult;
      const [a, n] = gradients((ctx) => fn(ctx, OPTIONS[name]), table());
      expect(maxDiff(a, n)).toBeLessThan(1e-7);
      const out = fn(table(), OPTIONS[name]);
      expect(out.loss.length).toBe(6);
      expect(out.loss[2]).toBe(0); // masked out
    });
  }
});
