import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../kernels/testing/expect-close';
import { pack, type PackedBatch } from '../pack';
import type { Call, Session } from '../types';
import { grpoObjective } from './grpo';

const call = (promptIds: number[], sampledIds: number[], lp: number): Call => ({
  promptIds,
  sampledIds,
  behaviorLogProbs: sampledIds.map((_, i) => lp - 0.1 * i),
  rawLogProbs: sampledIds.map((_, i) => lp - 0.1 * i - 0.05 * ((i % 3) - 1)),
  finishReason: 'stop',
  version: 0,
});
const session = (
  task: string,
  sample: number,
  reward: number | null,
  calls: Call[],
  status: Session['status'] = 'completed',
): Session => ({
  task,
  group: 'g',
  sample,
  attempt: 0,
  calls,
  status,
  reward,
});

function packed(sessions: Session[], width: number): PackedBatch {
  const b = pack(sessions, width, { estimator: 'grpo' });
  if (!b.ok) throw new Error(b.message);
  return b;
}

describe('GRPO with ratio ≡ 1 and β = 0 is REINFORCE with group baselines', () => {
  // task a: rewards 1, 0, 0.5 (mean 0.5, unbiased std 0.5); task b: 0.2, 0.8 (mean 0.5, std √0.18).
  const sessions = [
    session('a', 0, 1, [call([1, 2], [3, 4], -0.5)]),
    session('a', 1, 0, [call([1, 2], [5, 6, 7], -0.7)]),
    session('a', 2, 0.5, [call([1, 2], [8], -0.2)]),
    session('b', 0, 0.2, [call([9, 9], [3, 3], -0.4)]),
    session('b', 1, 0.8, [call([9, 9], [4, 4], -0.6)]),
    session('b', 2, null, [call([9, 9], [5], -0.1)], 'failed'),
  ];
  const b = packed(sessions, 6);
  const advantage = [
    0.5 / (0.5 + 1e-6),
    -0.5 / (0.5 + 1e-6),
    0,
    -0.3 / (Math.sqrt(0.18) + 1e-6),
    0.3 / (Math.sqrt(0.18) + 1e-6),
    0,
  ];
  const N = 2 + 3 + 1 + 2 + 2;
  const input = {
    rows: b.rows,
    width: b.width,
    logp: b.oldLogProbs!,
    oldLogp: b.oldLogProbs!,
    advantages: b.advantages,
    responseMask: b.responseMask,
    segmentIds: b.segmentIds,
  };

  it('dlogp_t = −A_s / N on every trainable token, 0 elsewhere', () => {
    const out = grpoObjective(input);
    const expected = Array.from(b.responseMask, (m, t) => (m ? -advantage[b.sessionIds[t] - 1] / N : 0));
    expectClose(out.dlogp, expected, {
      atol: 1e-15,
      rtol: 1e-12,
      label: 'ppo at r = 1 vs REINFORCE with group baselines',
    });
    expect(out.metrics['rl/pg_clipfrac']).toBe(0);
    const reinforce = grpoObjective(input, { policyLoss: { name: 'reinforce' } });
    expectClose(out.dlogp, reinforce.dlogp, { atol: 0, rtol: 1e-15, label: 'ppo vs reinforce' });
  });
});

describe('end to end: Sessions → pack → grpoObjective', () => {
  // s0 merges two calls into one chain; s1's second call does not extend its first (two chains).
  const sessions = [
    session('a', 0, 1, [call([1, 2], [3, 4], -0.3), call([1, 2, 3, 4, 5], [6], -0.9)]),
    session('a', 1, 0.25, [call([7], [8, 9], -0.4), call([7, 8, 10], [11], -0.6)]),
    session('a', 2, 0, [call([1], [2, 2, 2], -1.1)]),
    session('c', 0, 0.5, [call([4, 4], [5], -0.2)], 'truncated'),
  ];
  const b = packed(sessions, 8);
  const n = b.rows * b.width;
  // A deterministic stand-in for the model's scores: NaN on padding, which no term may read.
  const logp = Float64Array.from({ length: n }, (_, t) =>
    b.segmentIds[t] === 0 ? NaN : (b.oldLogProbs![t] || -1) + 0.05 * Math.sin(t),
  );
  const refLogp = Float64Array.from({ length: n }, (_, t) =>
    b.segmentIds[t] === 0 ? NaN : logp[t] - 0.1 * Math.cos(t),
  );
  const input = {
    rows: b.rows,
    width: b.width,
    logp,
    oldLogp: b.oldLogProbs!,
    behaviorLogp: b.behaviorLogProbs,
    refLogp,
    advantages: b.advantages,
    responseMask: b.responseMask,
    segmentIds: b.segmentIds,
    sessionWeights: b.sessionWeights,
    sessionIds: b.sessionIds,
  };

  it('dlogp is zero off the response mask and finite on it, with every correction and both terms on', () => {
    const out = grpoObjective(input, {
      beta: 0.04,
      aggregation: { mode: 'session-mean' },
      importance: { threshold: 2 },
      rejection: { seq_mean_k1: [0.97, 2] }, // rejects the chains whose mean k1 is below log 0.97
    });
    expect(Number.isFinite(out.loss)).toBe(true);
    for (let t = 0; t < n; t++) {
      if (out.mask[t]) expect(Number.isFinite(out.dlogp[t]), `dlogp[${t}]`).toBe(true);
      else expect(out.dlogp[t], `dlogp[${t}] off the mask`).toBe(0);
      expect(out.mask[t]).toBeLessThanOrEqual(b.responseMask[t]);
    }
    expect(out.metrics['mismatch/rollout_rs_masked_fraction']).toBeGreaterThan(0);
    expect(out.metrics['mismatch/rollout_rs_masked_fraction']).toBeLessThan(1);
    expect(out.dlogp.filter((g) => g !== 0).length).toBeGreaterThan(3);
    for (const key of [
      'loss/total',
      'loss/policy',
      'loss/kl',
      'rl/kl',
      'rl/pg_clipfrac',
      'rl/ppo_kl',
      'mismatch/kl',
      'mismatch/k3_kl',
      'mismatch/ess',
      'mismatch/rollout_rs_seq_mean_k1_masked_fraction',
      'mismatch/ratio/min',
      'mismatch/ratio/mean',
      'mismatch/ratio/max',
      'mismatch/chi2_token',
      'mismatch/training_ppl',
      'mismatch/rollout_ppl',
    ]) {
      expect(Number.isFinite(out.metrics[key]), key).toBe(true);
    }
  });

  it('bypass mode on the same batch (no old log-probs) gives the same guarantees', () => {
    const out = grpoObjective({ ...input, oldLogp: undefined }, { beta: 0.04, importance: { threshold: [0.5, 2] } });
    for (let t = 0; t < n; t++) if (!b.responseMask[t]) expect(out.dlogp[t]).toBe(0);
    expect(out.dlogp.every((g) => Number.isFinite(g))).toBe(true);
    expect(out.dlogp.some((g) => g !== 0)).toBe(true);
  });
});
