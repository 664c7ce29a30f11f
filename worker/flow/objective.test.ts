import { describe, expect, it } from 'vitest';
import { randomArray } from '../../kernels/common/random';
import { numericGrad } from '../../kernels/testing/finite-diff';
import { ppoLoss } from '../rl/losses/ppo';
import { flowGrpoObjective } from './objective';

describe('Flow-GRPO objective: hand values on a 2 × 3 table', () => {
  // Sample 0 (A = 2): Δ = 0, +0.1, −0.1; sample 1 (A = −7 → clipped to −5): Δ = 0.1, −0.1, masked.
  const logp = [0, 0.1, -0.1, 0.1, -0.1, 3];
  const oldLogp = [0, 0, 0, 0, 0, 0];
  const input = { rows: 2, width: 3, logp, oldLogp, advantages: [2, -7], mask: [1, 1, 1, 1, 1, 0] };
  const out = flowGrpoObjective(input, { clipRange: 0.05 });
  const [up, dn] = [Math.exp(0.1), Math.exp(-0.1)];

  it('clips the advantages, takes the max of the unclipped and clipped surrogates, divides by kept transitions', () => {
    // A = 2: l = −2·1, max(−2e^0.1, −2·1.05) = −2.1, max(−2e^−0.1, −2·0.95) = −2e^−0.1.
    // A = −5: max(5e^0.1, 5·1.05) = 5e^0.1, max(5e^−0.1, 5·0.95) = 5·0.95.
    const want = (-2 - 2.1 - 2 * dn + 5 * up + 5 * 0.95) / 5;
    expect(out.loss).toBeCloseTo(want, 14);
    expect(out.metrics['loss/policy']).toBeCloseTo(want, 14);
    expect(out.transitions).toBe(5);
    expect(Array.from(out.advantages)).toEqual([2, 2, 2, -5, -5, 0]);
  });

  it('passes −A·r/n where the unclipped term wins and 0 where the clipped one does', () => {
    const want = [-2 / 5, 0, (-2 * dn) / 5, (5 * up) / 5, 0, 0];
    for (let j = 0; j < 6; j++) expect(out.dlogp[j]).toBeCloseTo(want[j], 14);
    expect(Array.from(out.clipped)).toEqual([0, 1, 0, 0, 1, 0]);
    expect(Array.from(out.outside)).toEqual([0, 1, 1, 1, 1, 0]);
  });

  it('reports flow_grpo’s metrics over the kept transitions', () => {
    expect(out.metrics['rl/clipfrac']).toBeCloseTo(4 / 5, 14);
    expect(out.metrics['rl/clipfrac_gt_one']).toBeCloseTo(2 / 5, 14);
    expect(out.metrics['rl/clipfrac_lt_one']).toBeCloseTo(2 / 5, 14);
    expect(out.metrics['rl/pg_clipfrac']).toBeCloseTo(2 / 5, 14);
    expect(out.metrics['rl/approx_kl']).toBeCloseTo((0.5 * 4 * 0.01) / 5, 14);
    expect(out.ratio[1]).toBeCloseTo(up, 14);
  });

  it('adds β·mean KL, seeding ∂L/∂KL = β/n on kept transitions', () => {
    const kl = [0.1, 0.2, 0.3, 0.4, 0.5, 9];
    const b = flowGrpoObjective({ ...input, kl }, { clipRange: 0.05, beta: 0.5 });
    expect(b.loss).toBeCloseTo(out.loss + (0.5 * 1.5) / 5, 14);
    expect(b.metrics['loss/kl']).toBeCloseTo(1.5 / 5, 14);
    expect(Array.from(b.dkl)).toEqual([0.1, 0.1, 0.1, 0.1, 0.1, 0]);
    expect(() => flowGrpoObjective(input, { beta: 0.5 })).toThrow(/needs kl/);
  });
});

describe('Flow-GRPO objective: gradients and limiting cases', () => {
  const N = 4;
  const K = 5;
  const logp = Float64Array.from(randomArray(N * K, 1, -0.3, 0.3));
  const oldLogp = Float64Array.from(randomArray(N * K, 2, -0.3, 0.3));
  const advantages = Float64Array.from(randomArray(N, 3, -8, 8));
  const mask = Float64Array.from(randomArray(N * K, 4, 0, 1), (u) => (u < 0.8 ? 1 : 0));

  it('dlogp matches central finite differences of the loss', () => {
    const o = { clipRange: 0.1, advClipMax: 5 };
    const out = flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages, mask }, o);
    const fd = numericGrad(
      logp,
      () => flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages, mask }, o).loss,
    );
    for (let j = 0; j < N * K; j++) expect(out.dlogp[j]).toBeCloseTo(fd[j], 7);
  });

  it('with an infinite band and ratio ≡ 1 it is REINFORCE with group baselines: L = −mean A, dlogp = −A/n', () => {
    const out = flowGrpoObjective(
      { rows: N, width: K, logp: oldLogp, oldLogp, advantages, mask },
      { clipRange: Infinity, advClipMax: Infinity },
    );
    const kept = mask.reduce((s, m) => s + m, 0);
    let want = 0;
    for (let j = 0; j < N * K; j++) {
      if (!mask[j]) continue;
      const a = advantages[Math.floor(j / K)];
      want -= a / kept;
      expect(out.dlogp[j]).toBeCloseTo(-a / kept, 14);
    }
    expect(out.loss).toBeCloseTo(want, 12);
  });

  it('per transition, equals the RL core’s ppo loss without dual clip or ratio clamp (token-mean over the mask)', () => {
    const clipped = Float64Array.from({ length: N * K }, (_, j) =>
      Math.max(-5, Math.min(5, advantages[Math.floor(j / K)])),
    );
    const out = flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages: clipped, mask }, { clipRange: 0.1 });
    const core = ppoLoss(
      { rows: N, width: K, logp, oldLogp, advantages: clipped, mask },
      { clipLow: 0.1, dualClip: Infinity, logRatioClamp: Infinity },
    );
    const kept = mask.reduce((s, m) => s + m, 0);
    let loss = 0;
    for (let j = 0; j < N * K; j++) {
      loss += core.loss[j] / kept;
      expect(out.dlogp[j]).toBeCloseTo(core.dlogp[j] / kept, 14);
    }
    expect(out.loss).toBeCloseTo(loss, 12);
  });

  it('accepts per-transition advantages, and an all-masked batch gives zero loss and gradient', () => {
    const perT = Float64Array.from({ length: N * K }, (_, j) => advantages[Math.floor(j / K)]);
    const a = flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages, mask });
    const b = flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages: perT, mask });
    expect(b.loss).toBe(a.loss);
    const none = flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages, mask: new Float64Array(N * K) });
    expect(none.loss).toBe(0);
    expect(none.dlogp.every((g) => g === 0)).toBe(true);
    expect(() => flowGrpoObjective({ rows: N, width: K, logp, oldLogp, advantages: [1, 2], mask })).toThrow(
      /expected 4 \(per sample\) or 20/,
    );
  });
});
