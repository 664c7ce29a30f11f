import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../kernels/testing/expect-close';
import { aggregate } from '../aggregate';
import { klPenalty } from '../kl';
import { POLICY_LOSS_NAMES, type PolicyLossSpec } from '../losses/registry';
import { centralDiff } from '../testing/finite-diff';
import { objectiveTable } from '../testing/loss-table';
import { grpoObjective, type GrpoObjectiveOptions } from './grpo';
import type { ObjectiveInput } from './types';

const e = Math.exp;
const k3 = (d: number) => e(-d) + d - 1; // d = logp − ref
const dk3 = (d: number) => 1 - e(-d);
const D_REF = [0.2, -0.1, 0, -0.2, 0.2, 0];
const MASKED = [0, 1, 3, 4, 5];
// verl ppo on the table: per-token loss and ∂l/∂logp (losses/ppo.test.ts derives them).
const PPO_L = [-e(0.1), e(0.4), 0, 0.4, -2, -0.6];
const PPO_G = [-e(0.1), e(0.4), 0, 0, -2, 0];
const sum = (f: (i: number) => number, idx = MASKED) => idx.reduce((s, i) => s + f(i), 0);

/** The table without behavior log-probs: decoupled mode, no corrections. */
function plain(): ObjectiveInput {
  return { ...objectiveTable(), behaviorLogp: undefined };
}

describe('grpoObjective: hand values on the 2×3 table', () => {
  it('ppo (dual clip) + β·token-mean k3: loss, gradient and the loss metrics', () => {
    const out = grpoObjective(plain(), { beta: 0.1 });
    const policy = sum((i) => PPO_L[i]) / 5;
    const kl = sum((i) => k3(D_REF[i])) / 5;
    expect(out.loss).toBeCloseTo(policy + 0.1 * kl, 14);
    expectClose(
      out.dlogp,
      PPO_G.map((g, i) => (MASKED.includes(i) ? g / 5 + (0.1 * dk3(D_REF[i])) / 5 : 0)),
      { atol: 1e-15, rtol: 1e-13, label: 'dlogp' },
    );
    expect(out.metrics['loss/policy']).toBeCloseTo(policy, 14);
    expect(out.metrics['rl/kl']).toBeCloseTo(kl, 14);
    expect(out.metrics['loss/kl']).toBe(0.1 * out.metrics['rl/kl']);
    expect(out.metrics['loss/total']).toBe(out.loss);
    expect(out.metrics['rl/pg_clipfrac']).toBe(2 / (5 + 1e-8));
    expect(out.metrics['rl/ppo_kl']).toBeCloseTo(-(0.1 + 0.4 - 0.3 + 0 + 0.2) / 5, 8);
    expect(Object.keys(out.metrics).some((k) => k.startsWith('mismatch/'))).toBe(false);
  });

  it('decoupled TIS: weights min(e^{old−behavior}, 1.5) multiply the policy term only', () => {
    const w = [e(-0.1), 1.5, 0, e(-0.4), 1, e(-0.1)]; // old − behavior = −0.1, 0.6, ·, −0.4, 0, −0.1
    const out = grpoObjective(objectiveTable(), { beta: 0.1, importance: { threshold: 1.5 } });
    expect(out.loss).toBeCloseTo(sum((i) => w[i] * PPO_L[i]) / 5 + (0.1 * sum((i) => k3(D_REF[i]))) / 5, 14);
    expect(out.dlogp[1]).toBeCloseTo((1.5 * e(0.4)) / 5 + (0.1 * dk3(-0.1)) / 5, 14);
    const lr = [-0.1, 0.6, 0, -0.4, 0, -0.1];
    expect(out.metrics['mismatch/kl']).toBeCloseTo(-sum((i) => lr[i]) / (5 + 1e-8), 14);
    expect(out.metrics['mismatch/k3_kl']).toBeCloseTo(sum((i) => e(lr[i]) - lr[i] - 1) / (5 + 1e-8), 14);
    expect(out.metrics['mismatch/ratio/max']).toBeCloseTo(e(0.6), 14);
    expect(out.metrics['mismatch/ratio/min']).toBeCloseTo(e(-0.4), 14);
    expect(out.metrics['mismatch/ess']).toBeGreaterThan(0.9);
    expect(out.metrics['mismatch/ess']).toBeLessThan(1);
    for (const k of ['mismatch/chi2_token', 'mismatch/training_ppl', 'mismatch/rollout_ppl', 'mismatch/ratio/mean'])
      expect(out.metrics[k]).toBeDefined();
  });

  it('bypass (no oldLogp): behavior stands in as old and an IcePop band only masks (dew)', () => {
    // logp − behavior = 0, 1, ·, −0.7, 0, 0.1: e^1 and e^−0.7 fall outside [0.5, 2]
    const out = grpoObjective(
      { ...plain(), oldLogp: undefined, behaviorLogp: objectiveTable().behaviorLogp },
      { importance: { threshold: [0.5, 2] } },
    );
    expect(out.loss).toBeCloseTo((-1 - 2 - 0.5 * e(0.1)) / 5, 14);
    expectClose(out.dlogp, [-1 / 5, 0, 0, 0, -2 / 5, (-0.5 * e(0.1)) / 5], {
      atol: 1e-15,
      rtol: 1e-13,
      label: 'dlogp',
    });
    expect(out.metrics['mismatch/rollout_is_oob_ratio']).toBeCloseTo(2 / (5 + 1e-8), 14);
  });

  it('a sequence mask (seq_sum_k1) rejects a whole chain from both terms', () => {
    // k1 = behavior − old summed per chain: {0,1} −0.5 < log 0.7 is rejected; {3,4} 0.4 and {5} 0.1 stay
    const out = grpoObjective(objectiveTable(), { beta: 0.1, rejection: { seq_sum_k1: [0.7, 2] } });
    expect(Array.from(out.mask)).toEqual([0, 0, 0, 1, 1, 1]);
    const kept = [3, 4, 5];
    expect(out.loss).toBeCloseTo(sum((i) => PPO_L[i], kept) / 3 + (0.1 * sum((i) => k3(D_REF[i]), kept)) / 3, 14);
    expect(out.dlogp[0]).toBe(0);
    expect(out.dlogp[1]).toBe(0);
    expect(out.dlogp[3]).toBeCloseTo((0.1 * dk3(-0.2)) / 3, 14);
    expect(out.metrics['mismatch/rollout_rs_seq_sum_k1_masked_fraction']).toBeCloseTo(2 / (5 + 1e-8), 14);
  });

  it('reports the entropy mean and echo’s observation term', () => {
    const entropy = [1, 2, 99, 3, 4, 5];
    expect(grpoObjective({ ...plain(), entropy }).metrics['rl/entropy']).toBeCloseTo(3, 14);
    const echo = grpoObjective(plain(), { policyLoss: { name: 'echo', options: { coefficient: 0.5 } } });
    expect(echo.metrics['loss/echo']).toBeCloseTo(0.5 * 2.0, 14); // −logp on the one observation token
    expect(echo.dlogp[2]).toBe(-0.5);
    expect(echo.loss).toBeCloseTo(echo.metrics['loss/policy'] + 1, 14);
  });
});

describe('grpoObjective: the correction weights and keep mask it applied', () => {
  it('no behaviorLogp: weights 1 on the response mask, keep all 1', () => {
    const out = grpoObjective(plain());
    expect(Array.from(out.correctionWeights)).toEqual([1, 1, 0, 1, 1, 1]);
    expect(Array.from(out.keep)).toEqual([1, 1, 1, 1, 1, 1]);
  });
  it('decoupled TIS cap 1.5: min(e^{old − behavior}, 1.5) per token, 0 off the mask', () => {
    // old − behavior = −0.1, 0.6, ·, −0.4, 0, −0.1 → e^0.6 = 1.822 is capped at 1.5
    const out = grpoObjective(objectiveTable(), { importance: { threshold: 1.5 } });
    expectClose(out.correctionWeights, [e(-0.1), 1.5, 0, e(-0.4), 1, e(-0.1)], {
      atol: 1e-15,
      rtol: 1e-14,
      label: 'TIS weights',
    });
    // the loss is built from exactly these weights
    expect(out.loss).toBeCloseTo(sum((i) => out.correctionWeights[i] * PPO_L[i]) / 5, 14);
  });
  it('decoupled IcePop band [0.95, 1.5]: the ratio inside, 0 outside', () => {
    // e^−0.1 = 0.905 and e^−0.4 = 0.670 fall below 0.95, e^0.6 = 1.822 above 1.5; e^0 = 1 stays
    const out = grpoObjective(objectiveTable(), { importance: { threshold: [0.95, 1.5] } });
    expect(Array.from(out.correctionWeights)).toEqual([0, 0, 0, 0, 1, 0]);
  });
  it('bypass: the dew band is 0/1; verl ppo_clip applies no weight; reinforce applies the raw ratio', () => {
    // logp − behavior = 0, 1, ·, −0.7, 0, 0.1: e^1 and e^−0.7 fall outside [0.5, 2]
    const input = { ...plain(), oldLogp: undefined, behaviorLogp: objectiveTable().behaviorLogp };
    const band = { importance: { threshold: [0.5, 2] as const } };
    expect(Array.from(grpoObjective(input, band).correctionWeights)).toEqual([1, 0, 0, 0, 1, 1]);
    expect(Array.from(grpoObjective(input, { ...band, bypassLossType: 'ppo_clip' }).correctionWeights)).toEqual([
      1, 1, 0, 1, 1, 1,
    ]);
    const rf = grpoObjective(input, {
      ...band,
      bypassLossType: 'reinforce',
      policyLoss: { name: 'reinforce' },
    }).correctionWeights;
    expectClose(rf, [1, 0, 0, 0, 1, e(0.1)], { atol: 1e-15, rtol: 1e-14, label: 'reinforce band weights' });
  });
  it('a sequence mask: keep is 0 on the rejected chain {0,1} only (the empty chain {2} is kept)', () => {
    // k1 = behavior − old summed per chain: {0,1} −0.5 < log 0.7 = −0.357 → rejected; {3,4} 0.4, {5} 0.1 ≤ log 2
    const out = grpoObjective(objectiveTable(), { rejection: { seq_sum_k1: [0.7, 2] } });
    expect(Array.from(out.keep)).toEqual([0, 0, 1, 1, 1, 1]);
    expect(Array.from(out.mask)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(Array.from(out.correctionWeights)).toEqual([1, 1, 0, 1, 1, 1]); // no IS weights asked for
  });
});

describe('grpoObjective: aggregation compat reaches the policy term', () => {
  it('verl-legacy seq-mean-token-sum-norm is B′ = 3 times the current verl form on the table', () => {
    // chains {0,1}, {3,4}, {5} carry mass (B′ = 3), {2} is empty; K = width = 3
    const now = grpoObjective(plain(), { aggregation: { mode: 'seq-mean-token-sum-norm' } });
    const legacy = grpoObjective(plain(), { aggregation: { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' } });
    expect(now.loss).toBeCloseTo(sum((i) => PPO_L[i]) / (3 * 3), 14);
    expect(legacy.loss).toBeCloseTo(sum((i) => PPO_L[i]) / 3, 14);
    expectClose(
      legacy.dlogp,
      now.dlogp.map((g) => 3 * g),
      { atol: 1e-15, rtol: 1e-13, label: 'legacy dlogp' },
    );
  });
});

describe('grpoObjective: dlogp against central finite differences', () => {
  const frozen = (input: ObjectiveInput, options: GrpoObjectiveOptions) => {
    const analytic = grpoObjective(input, options).dlogp;
    const numeric = centralDiff(
      (x) => grpoObjective({ ...input, logp: x, logpDetached: input.logp }, options).loss,
      input.logp,
    );
    expectClose(analytic, numeric, { atol: 1e-8, rtol: 1e-6, label: JSON.stringify(options) });
    expect(analytic.some((g) => g !== 0)).toBe(true);
  };
  const sessionWeights = [0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3];

  // Options a loss needs (dro's β has no default), or that move a kink off the table's point
  // (geo_mean's default log-ratio bound 0.2 is t5's logp − old).
  const OPTIONS: Partial<Record<string, object>> = { geo_mean: { clipHigh: 0.3 }, dro: { beta: 0.5 } };
  const spec = (name: string) => ({ name, options: OPTIONS[name] }) as PolicyLossSpec;
  it.each(POLICY_LOSS_NAMES)('%s, decoupled, TIS, β = 0.1 k3', (name) => {
    frozen(objectiveTable(), { policyLoss: spec(name), beta: 0.1, importance: { threshold: 1.5 } });
  });
  it.each(POLICY_LOSS_NAMES.filter((n) => n !== 'echo'))(
    '%s, bypass, band, session-mean, k2 under seq-mean-token-mean',
    (name) => {
      const input = { ...objectiveTable(), oldLogp: undefined, sessionWeights };
      frozen(input, {
        policyLoss: spec(name),
        aggregation: { mode: 'session-mean' },
        beta: 0.3,
        kl: { estimator: 'k2' },
        klAggregation: { mode: 'seq-mean-token-mean' },
        importance: { threshold: [0.5, 5] },
      });
    },
  );
  it('gspo as TRL (a coupled sequence ratio), k3+ straight-through, seq-mean-token-sum-norm', () => {
    frozen(objectiveTable(), {
      policyLoss: { name: 'gspo', options: { compat: 'trl' } },
      aggregation: { mode: 'seq-mean-token-sum-norm' },
      beta: 0.2,
      kl: { estimator: 'k3+' },
      klAggregation: { mode: 'token-sum' },
    });
  });
});

describe('grpoObjective: limiting cases', () => {
  it('an infinite clip is the plain policy gradient −A·r', () => {
    const input = plain();
    const out = grpoObjective(input, {
      policyLoss: { name: 'ppo', options: { clipLow: Infinity, dualClip: Infinity } },
    });
    const r = (i: number) => e(input.logp[i] - input.oldLogp![i]);
    expect(out.loss).toBeCloseTo(sum((i) => -input.advantages[i] * r(i)) / 5, 14);
    expectClose(
      out.dlogp,
      [0, 1, 2, 3, 4, 5].map((i) => (MASKED.includes(i) ? (-input.advantages[i] * r(i)) / 5 : 0)),
      { atol: 1e-15, rtol: 1e-13, label: 'pg' },
    );
  });

  it('session-mean equals seq-mean-token-mean with one session per row (up to verl’s 1e-8)', () => {
    const input = {
      ...objectiveTable(),
      segmentIds: [1, 1, 1, 1, 1, 1],
      sessionWeights: [0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3],
    };
    const a = grpoObjective(input, {
      beta: 0.1,
      aggregation: { mode: 'session-mean' },
      klAggregation: { mode: 'session-mean' },
    });
    const b = grpoObjective(input, {
      beta: 0.1,
      aggregation: { mode: 'seq-mean-token-mean' },
      klAggregation: { mode: 'seq-mean-token-mean' },
    });
    expect(a.loss).toBeCloseTo(b.loss, 8);
    expect(a.loss).not.toBe(grpoObjective(input, { beta: 0.1 }).loss); // token-mean weighs the rows differently
    expectClose(a.dlogp, b.dlogp, { atol: 1e-9, rtol: 1e-8, label: 'session-mean vs seq-mean-token-mean' });
    const bySessionIds = grpoObjective(
      { ...input, sessionWeights: undefined, sessionIds: [1, 1, 1, 2, 2, 2] },
      { beta: 0.1, aggregation: { mode: 'session-mean' } },
    );
    expect(bySessionIds.loss).toBeCloseTo(
      grpoObjective(input, { beta: 0.1, aggregation: { mode: 'session-mean' } }).loss,
      14,
    );
  });

  it('the icepop loss with an infinite band is REINFORCE with the IS weight e^{logp − behavior}', () => {
    const input = { ...objectiveTable(), oldLogp: undefined };
    const ice = grpoObjective(input, { policyLoss: { name: 'icepop', options: { alpha: 0, beta: Infinity } } });
    const rf = grpoObjective(input, {
      policyLoss: { name: 'reinforce' },
      importance: { threshold: Infinity },
      bypassLossType: 'reinforce',
    });
    const w = (i: number) => e(input.logp[i] - input.behaviorLogp![i]);
    expect(ice.loss).toBeCloseTo(sum((i) => -input.advantages[i] * w(i) * input.logp[i]) / 5, 14);
    expect(rf.loss).toBeCloseTo(ice.loss, 14);
    expectClose(rf.dlogp, ice.dlogp, { atol: 1e-15, rtol: 1e-13, label: 'reinforce·w vs icepop' });
    expect(ice.dlogp[1]).toBeCloseTo(e(1) / 5, 14);
  });

  it('verl’s IcePop correction with an infinite band weighs like an infinite TIS cap', () => {
    const band = grpoObjective(objectiveTable(), { importance: { threshold: [0, Infinity] } });
    const tis = grpoObjective(objectiveTable(), { importance: { threshold: Infinity } });
    expect(band.loss).toBe(tis.loss);
    expect(band.loss).not.toBeCloseTo(grpoObjective(objectiveTable()).loss, 3);
  });

  it('β > 0 adds exactly β × the separately aggregated KL', () => {
    const input = objectiveTable();
    const options: GrpoObjectiveOptions = {
      importance: { threshold: 1.5 },
      kl: { estimator: 'abs' },
      klAggregation: { mode: 'seq-mean-token-sum' },
    };
    const without = grpoObjective(input, options);
    const withKl = grpoObjective(input, { ...options, beta: 0.3 });
    const kl = klPenalty({ ...input, refLogp: input.refLogp!, mask: input.responseMask }, { estimator: 'abs' });
    const agg = aggregate(kl.value, { ...input, mask: input.responseMask }, { mode: 'seq-mean-token-sum' });
    expect(withKl.loss - without.loss).toBeCloseTo(0.3 * agg.loss, 14);
    expectClose(
      withKl.dlogp.map((g, i) => g - without.dlogp[i]),
      agg.weights.map((w, i) => 0.3 * w * kl.dlogp[i]),
      { atol: 1e-15, rtol: 1e-12, label: 'β·KL' },
    );
    expect(without.metrics['loss/kl']).toBe(0);
    expect(without.metrics['rl/kl']).toBe(agg.loss);
  });
});

describe('grpoObjective: refusals', () => {
  it('β > 0 without a reference, and a bad β', () => {
    expect(() => grpoObjective({ ...plain(), refLogp: undefined }, { beta: 0.04 })).toThrow(
      /beta = 0.04 needs refLogp/,
    );
    expect(grpoObjective({ ...plain(), refLogp: undefined }).metrics['rl/kl']).toBeUndefined();
    expect(() => grpoObjective(plain(), { beta: -1 })).toThrow(/beta = -1/);
  });
  it('tables whose shape is not [rows, width]', () => {
    expect(() => grpoObjective({ ...plain(), logp: [0, 0, 0] })).toThrow(
      /logp: expected rows × width = 2 × 3 = 6 entries, got 3/,
    );
    expect(() => grpoObjective({ ...plain(), advantages: [1, 2, 3, 4, 5, 6, 7] })).toThrow(/advantages: expected/);
    expect(() => grpoObjective({ ...plain(), segmentIds: [1, 1] })).toThrow(/segmentIds: expected/);
    expect(() => grpoObjective({ ...plain(), refLogp: [0] }, { beta: 0.1 })).toThrow(/refLogp: expected/);
  });
  it('corrections without behavior log-probs, a TIS cap in bypass mode, session-mean rejection without sessionIds', () => {
    expect(() => grpoObjective(plain(), { importance: { threshold: 2 } })).toThrow(/pass behaviorLogp/);
    expect(() => grpoObjective({ ...objectiveTable(), oldLogp: undefined }, { importance: { threshold: 2 } })).toThrow(
      /TIS cap is refused in bypass mode/,
    );
    const sw = { sessionWeights: [0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3] };
    expect(() =>
      grpoObjective(
        { ...objectiveTable(), ...sw },
        { aggregation: { mode: 'session-mean' }, rejection: { token_k1: 2 } },
      ),
    ).toThrow(/needs sessionIds/);
  });
  it('a loss that needs old log-probs when there are neither old nor behavior ones; an unknown loss', () => {
    expect(() => grpoObjective({ ...plain(), oldLogp: undefined })).toThrow(/policy loss 'ppo' needs oldLogp/);
    expect(() => grpoObjective(plain(), { policyLoss: { name: 'vanilla' } as never })).toThrow(
      /policy loss 'vanilla' is unknown/,
    );
  });
});

describe('grpoObjective: the off-policy sequence mask (TRL off_policy_mask_threshold)', () => {
  it('zeroes the masked tokens’ policy loss and gradient, keeps them in the denominator and in the KL term', () => {
    const out = grpoObjective(objectiveTable(), { beta: 0.1, offPolicyMask: 0.3 });
    const kept = MASKED.filter((i) => i !== 3); // chain {3,4} drifts 0.35 > 0.3 and token 3 has A < 0
    const kl = sum((i) => k3(D_REF[i])) / 5;
    expect(out.metrics['loss/policy']).toBeCloseTo(sum((i) => PPO_L[i], kept) / 5, 14);
    expect(out.loss).toBeCloseTo(sum((i) => PPO_L[i], kept) / 5 + 0.1 * kl, 14);
    expect(out.dlogp[3]).toBeCloseTo((0.1 * dk3(D_REF[3])) / 5, 15);
    expect(out.dlogp[4]).toBeCloseTo(PPO_G[4] / 5 + (0.1 * dk3(D_REF[4])) / 5, 14);
    expect(Array.from(out.mask)).toEqual([1, 1, 0, 1, 1, 1]);
    expect(Array.from(out.correctionWeights)).toEqual([1, 1, 0, 0, 1, 1]);
    expect(out.metrics['rl/opsm_masked_fraction']).toBe(1 / 5);
  });

  it('a δ no chain exceeds changes nothing', () => {
    const base = grpoObjective(objectiveTable(), { beta: 0.1 });
    const out = grpoObjective(objectiveTable(), { beta: 0.1, offPolicyMask: 0.4 });
    expect(out.loss).toBe(base.loss);
    expect(Array.from(out.dlogp)).toEqual(Array.from(base.dlogp));
  });
});

describe('grpoObjective: the high-entropy token mask (TRL top_entropy_quantile)', () => {
  const entropy = [0.5, 2.0, 9, 1.0, 3.0, 0.1]; // [0, 2] is off the mask: its 9 does not count
  it('keeps the policy loss of the top-ρ tokens by entropy only; the denominator and the KL term keep every token', () => {
    const out = grpoObjective({ ...objectiveTable(), entropy }, { beta: 0.1, topEntropyQuantile: 0.5 });
    const kept = [1, 3, 4]; // τ = 1 (the median of 0.1, 0.5, 1, 2, 3)
    expect(out.metrics['loss/policy']).toBeCloseTo(sum((i) => PPO_L[i], kept) / 5, 14);
    expect(out.loss).toBeCloseTo(sum((i) => PPO_L[i], kept) / 5 + (0.1 * sum((i) => k3(D_REF[i]))) / 5, 14);
    expect(out.dlogp[0]).toBeCloseTo((0.1 * dk3(D_REF[0])) / 5, 15);
    expect(out.dlogp[1]).toBeCloseTo(PPO_G[1] / 5 + (0.1 * dk3(D_REF[1])) / 5, 14);
    expect(out.metrics['rl/entropy_mask_threshold']).toBe(1);
    expect(out.metrics['rl/entropy_mask_kept_fraction']).toBe(3 / 5);
  });

  it('needs the entropy', () => {
    expect(() => grpoObjective(objectiveTable(), { topEntropyQuantile: 0.2 })).toThrow(
      /topEntropyQuantile = 0.2 needs entropy/,
    );
  });
});
