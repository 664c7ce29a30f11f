import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../kernels/testing/expect-close';
import { centralDiff } from '../testing/finite-diff';
import { objectiveTable } from '../testing/loss-table';
import { grpoObjective } from './grpo';
import { ppoObjective, type PpoObjectiveInput, type PpoObjectiveOptions } from './ppo';

//            t0    t1    t2   t3    t4    t5       clip 0.2 around old
// values     0.5   0.1   9   −0.2   1.0   0.3
// oldValues  0.4   0.5   9   −0.2   0.6   0.35     v̂ = 0.5, 0.3, ·, −0.2, 0.8, 0.3
// returns    1.0   0.0   9    0.1   0.2   0.5      max((v−R)², (v̂−R)²) = .25, .09 (clipped), ·, .09, .64, .04
const critic = {
  values: [0.5, 0.1, 9, -0.2, 1.0, 0.3],
  oldValues: [0.4, 0.5, 9, -0.2, 0.6, 0.35],
  returns: [1.0, 0.0, 9, 0.1, 0.2, 0.5],
};
const plain = (): PpoObjectiveInput => ({ ...objectiveTable(), behaviorLogp: undefined, ...critic });

describe('ppoObjective: the policy side’s correction weights and keep mask', () => {
  it('are grpoObjective’s: TIS min(e^{old − behavior}, 1.5) and the seq_sum_k1 keep', () => {
    // old − behavior = −0.1, 0.6, ·, −0.4, 0, −0.1; chain {0,1}'s k1 sum −0.5 < log 0.7 → rejected
    const out = ppoObjective(
      { ...objectiveTable(), ...critic },
      { importance: { threshold: 1.5 }, rejection: { seq_sum_k1: [0.7, 2] } },
    );
    expect(Array.from(out.keep)).toEqual([0, 0, 1, 1, 1, 1]);
    expectClose(out.correctionWeights, [Math.exp(-0.1), 1.5, 0, Math.exp(-0.4), 1, Math.exp(-0.1)], {
      atol: 1e-15,
      rtol: 1e-14,
      label: 'TIS weights',
    });
  });
});

describe('ppoObjective: hand values on the 2×3 table', () => {
  it('adds 0.5 × the clipped value loss (token-mean) to the GRPO terms; dvalues seeds the critic', () => {
    const out = ppoObjective(plain(), { beta: 0.1 });
    const policy = grpoObjective(plain(), { beta: 0.1 });
    const value = (0.5 * (0.25 + 0.09 + 0.09 + 0.64 + 0.04)) / 5;
    expect(out.loss).toBeCloseTo(policy.loss + 0.5 * value, 14);
    expect(Array.from(out.dlogp)).toEqual(Array.from(policy.dlogp));
    // 0.5 (coefficient) · 0.5 · (1/5) · ∂l/∂v, with ∂l/∂v = 2(v − R) unclipped and 0 on the clipped t1
    expectClose(out.dvalues, [-0.05, 0, 0, -0.03, 0.08, -0.02], { atol: 1e-15, rtol: 1e-12, label: 'dvalues' });
    expect(out.metrics['loss/value']).toBeCloseTo(0.5 * value, 14);
    expect(out.metrics['critic/vf_loss']).toBeCloseTo(value, 14);
    expect(out.metrics['critic/vf_clipfrac']).toBe(1 / (5 + 1e-8));
    expect(out.metrics['loss/total']).toBe(out.loss);
    expect(out.metrics['loss/policy']).toBe(policy.metrics['loss/policy']);
  });

  it('the value loss takes the policy aggregation: seq-mean-token-mean over the chains', () => {
    // chains {0,1}, {3,4}, {5} carry mass (B′ = 3): w = 1/6, 1/6, ·, 1/6, 1/6, 1/3
    const out = ppoObjective(plain(), { aggregation: { mode: 'seq-mean-token-mean' } });
    expectClose(out.dvalues, [-0.25 / 6, 0, 0, (0.25 * -0.6) / 6, (0.25 * 1.6) / 6, (0.25 * -0.4) / 3], {
      atol: 1e-9,
      rtol: 1e-7,
      label: 'dvalues',
    });
  });

  it('a value coefficient of 0 is the GRPO objective, with zero critic gradient', () => {
    const out = ppoObjective(plain(), { beta: 0.1, valueCoefficient: 0 });
    expect(out.loss).toBe(grpoObjective(plain(), { beta: 0.1 }).loss);
    expect(Array.from(out.dvalues)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('the value loss sits on the same corrected mass: a rejected chain gets no critic gradient', () => {
    const out = ppoObjective({ ...objectiveTable(), ...critic }, { rejection: { seq_sum_k1: [0.7, 2] } });
    expect(Array.from(out.mask)).toEqual([0, 0, 0, 1, 1, 1]);
    expectClose(out.dvalues, [0, 0, 0, -0.6 / 12, 1.6 / 12, -0.4 / 12], {
      atol: 1e-15,
      rtol: 1e-12,
      label: 'dvalues over mask′',
    });
    expect(out.metrics['critic/vf_clipfrac']).toBe(0); // the clipped t1 was rejected
  });
});

describe('ppoObjective: gradients against central finite differences', () => {
  const input: PpoObjectiveInput = { ...objectiveTable(), ...critic, sessionIds: [1, 1, 1, 2, 2, 3] };
  const options: PpoObjectiveOptions = {
    beta: 0.1,
    importance: { threshold: 1.5 },
    rejection: { seq_sum_k1: [0.7, 2] },
    aggregation: { mode: 'session-mean' },
    valueCoefficient: 0.7,
    valueClip: 0.25,
  };
  it('dvalues', () => {
    const numeric = centralDiff((v) => ppoObjective({ ...input, values: v }, options).loss, input.values);
    expectClose(ppoObjective(input, options).dvalues, numeric, { atol: 1e-8, rtol: 1e-6, label: 'dvalues' });
  });
  it('dlogp', () => {
    const numeric = centralDiff(
      (x) => ppoObjective({ ...input, logp: x, logpDetached: input.logp }, options).loss,
      input.logp,
    );
    const analytic = ppoObjective(input, options).dlogp;
    expectClose(analytic, numeric, { atol: 1e-8, rtol: 1e-6, label: 'dlogp' });
    expect(analytic.some((g) => g !== 0)).toBe(true);
  });
});

describe('ppoObjective: refusals', () => {
  it('a negative value coefficient and critic tables of the wrong shape', () => {
    expect(() => ppoObjective(plain(), { valueCoefficient: -0.5 })).toThrow(/valueCoefficient = -0.5/);
    expect(() => ppoObjective({ ...plain(), values: [0, 0] })).toThrow(/values: expected rows × width/);
    expect(() => ppoObjective({ ...plain(), returns: [0, 0, 0, 0, 0, 0, 0] })).toThrow(
      /returns: expected rows × width/,
    );
  });
});
