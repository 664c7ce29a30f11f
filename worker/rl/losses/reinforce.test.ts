import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { reinforceLoss } from './reinforce';

describe('reinforce', () => {
  it('l = −A·logp, g = −A on the hand table', () => {
    const out = reinforceLoss(table());
    expect(Array.from(out.loss)).toEqual([1, -0.5, 0, -0.6, 0.6, 0.4]);
    expect(Array.from(out.dlogp)).toEqual([-1, 1, 0, 0.5, -2, -0.5]);
  });
  it('ppo_kl from oldLogp when given (verl compute_policy_loss_reinforce), none otherwise (gpg)', () => {
    expect(reinforceLoss(table()).metrics.ppo_kl).toBeCloseTo(-0.08, 8);
    expect(reinforceLoss({ ...table(), oldLogp: undefined }).metrics).toEqual({});
  });
  it('gradient against central differences', () => {
    const [a, n] = gradients((ctx) => reinforceLoss(ctx), table());
    expect(maxDiff(a, n)).toBeLessThan(1e-8);
  });
});
