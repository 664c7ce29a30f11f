import { describe, expect, it } from 'vitest';
import { gradients, maxDiff, table } from '../testing/loss-table';
import { reinforceLoss } from './reinforce';
import { gammaWeight, vespoLoss } from './vespo';

// chains {0,1}: log w = .1 + .4 = .5; {3,4}: −.3 + 0 = −.3; {5}: .2.  A = 1, −1, ·, −.5, 2, .5
// φ = exp(λ + k·log w − λ·w): A ≥ 0 takes (k, λ) = (2, 3), A < 0 takes (3, 2)
const phi = (logW: number, k: number, l: number) => Math.exp(l + k * logW - l * Math.exp(logW));
const PHI = [phi(0.5, 2, 3), phi(0.5, 3, 2), 0, phi(-0.3, 3, 2), phi(-0.3, 2, 3), phi(0.2, 2, 3)];

describe('vespo (TRL): hand values', () => {
  const ctx = table();
  const out = vespoLoss(ctx);
  it('l = −φ·A·logp and g = −φ·A, φ from the summed log-ratio of the chain', () => {
    for (const i of [0, 1, 3, 4, 5]) {
      expect(out.loss[i], `loss ${i}`).toBeCloseTo(-PHI[i] * ctx.advantages[i] * ctx.logp[i], 12);
      expect(out.dlogp[i], `dlogp ${i}`).toBeCloseTo(-PHI[i] * ctx.advantages[i], 12);
    }
    expect(PHI[0]).toBeCloseTo(Math.exp(3 + 1 - 3 * Math.exp(0.5)), 15); // ≈ .4194
  });
  it('phi_seq_mean: the mean over chains of the first token’s φ', () => {
    expect(out.metrics.phi_seq_mean).toBeCloseTo((PHI[0] + PHI[3] + PHI[5]) / 3, 7);
  });
  it('log w is clamped to [ln 1e-8, 20] and each token’s log-ratio to ±20; a non-finite φ is 0', () => {
    // chain {0,1} with old = 10: Σ = −11 − 10.5 = −21.5 → log w = ln 1e-8 (A = 1: k = 2, λ = 3)
    const low = vespoLoss({ ...table(), oldLogp: [10, 10, -2, -0.9, -0.3, -1] });
    expect(low.dlogp[0] / -phi(Math.log(1e-8), 2, 3)).toBeCloseTo(1, 12);
    const o = vespoLoss({ ...table(), oldLogp: [-40, -40, -2, -0.9, -0.3, -1] }, { lambdaPos: 1e-9, kPos: 0 });
    // chain {0,1}: Σ clamp = 20 + 20 = 40 → log w = 20; λ = max(1e-9, 1e-4): φ = exp(1e-4 − 1e-4·e^20)
    expect(o.dlogp[0]).toBeCloseTo(-Math.exp(1e-4 - 1e-4 * Math.exp(20)), 12);
    expect(gammaWeight(800, 1000, 0)).toBe(0); // exp overflows to ∞: TRL's nan_to_num gives 0
  });
  it('rows are the sequences without segmentIds', () => {
    const o = vespoLoss({ ...table(), segmentIds: undefined });
    expect(o.dlogp[4]).toBeCloseTo(-2 * phi(-0.1, 2, 3), 12); // row 1: −.3 + 0 + .2
  });
});

describe('vespo: limiting cases', () => {
  it('on-policy (w = 1): φ = 1 for any k, λ, so it is REINFORCE', () => {
    const ctx = { ...table(), oldLogp: table().logp };
    const v = vespoLoss(ctx, { kPos: 5, lambdaPos: 0.3, kNeg: 1, lambdaNeg: 7 });
    const r = reinforceLoss(ctx);
    expect(maxDiff(v.loss, r.loss)).toBeLessThan(1e-15);
    expect(maxDiff(v.dlogp, r.dlogp)).toBeLessThan(1e-15);
  });
});

describe('vespo: gradients against central differences (φ detached)', () => {
  it('defaults', () => {
    const [a, n] = gradients((ctx) => vespoLoss(ctx), table());
    expect(maxDiff(a, n)).toBeLessThan(1e-7);
  });
});
