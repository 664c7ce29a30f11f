import { describe, expect, it } from 'vitest';
import { effectiveSampleSize, isWeights } from './is-weights';
import { rolloutCorrection } from './rollout-correction';

const ln = Math.log;
const rows = 2;
const width = 3;
const responseMask = [1, 1, 0, 1, 1, 1];
const behaviorLogp = [-1, -1, 0, -1, -1, -1];
// old/behavior ratios 0.5, 3, –, 1, 1.5, 0.25; current/behavior ratios 1, 1, –, 4, 1, 0.1
const oldLogp = [-1 + ln(0.5), -1 + ln(3), 0, -1, -1 + ln(1.5), -1 - ln(4)];
const logp = [-1, -1, 0, -1 + ln(4), -1, -1 + ln(0.1)];
const base = { rows, width, responseMask, behaviorLogp };

function close(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i], `index ${i}`).toBeCloseTo(expected[i], 12);
}

describe('rolloutCorrection, decoupled mode', () => {
  it('weights old over behavior with TIS and ignores the current policy', () => {
    const r = rolloutCorrection({ ...base, oldLogp, logp, importance: { threshold: 2 } });
    expect(r.mode).toBe('decoupled');
    close(r.weights, [0.5, 2, 0, 1, 1.5, 0.25]);
    expect(Array.from(r.mask)).toEqual(responseMask);
    expect(r.metrics['mismatch/kl']).toBeCloseTo(-(ln(0.5) + ln(3) + ln(1.5) - ln(4)) / (5 + 1e-8), 12);
    expect(r.metrics['mismatch/ess']).toBeCloseTo(1.05 ** 2 / (7.5625 / 5), 6);
    expect(r.metrics['mismatch/rollout_is_mean']).toBeDefined();
  });

  it('an infinite TIS cap gives exactly the raw ratio old/behavior', () => {
    const r = rolloutCorrection({ ...base, oldLogp, importance: { threshold: Infinity } });
    close(r.weights, [0.5, 3, 0, 1, 1.5, 0.25]);
  });

  it('applies the rejection mask to the mask, not to the weights', () => {
    const r = rolloutCorrection({ ...base, oldLogp, importance: { threshold: 2 }, rejection: { token_k1: 2.5 } });
    // token_k1 with u = 2.5 keeps ρ ∈ [0.4, 2.5]
    expect(Array.from(r.mask)).toEqual([1, 0, 0, 1, 1, 0]);
    expect(Array.from(r.keep)).toEqual([1, 0, 1, 1, 1, 0]);
    close(r.weights, [0.5, 2, 0, 1, 1.5, 0.25]);
    expect(r.metrics['mismatch/rollout_rs_token_k1_masked_fraction']).toBeCloseTo(2 / (5 + 1e-8), 12);
    // off-policy metrics use the original mask, as verl's do
    expect(r.metrics['mismatch/kl']).toBeCloseTo(-(ln(0.5) + ln(3) + ln(1.5) - ln(4)) / (5 + 1e-8), 12);
  });

  it('without importance weights returns weight 1 on the mask and the ESS of the raw ratio', () => {
    const r = rolloutCorrection({ ...base, oldLogp });
    expect(Array.from(r.weights)).toEqual(responseMask);
    const raw = isWeights({
      rows,
      width,
      responseMask,
      logRatio: oldLogp.map((o, i) => o - behaviorLogp[i]),
      threshold: Infinity,
    }).raw;
    expect(r.metrics['mismatch/ess']).toBeCloseTo(effectiveSampleSize(raw, responseMask), 12);
    expect(r.metrics['mismatch/ess']).toBeLessThan(1);
  });
});

describe('rolloutCorrection, bypass mode (no old log-probs)', () => {
  it("'ppo_clip' (verl default) computes the weights for metrics but does not apply them", () => {
    const r = rolloutCorrection({ ...base, logp, importance: { threshold: 2 } });
    expect(r.mode).toBe('bypass');
    expect(Array.from(r.weights)).toEqual(responseMask);
    expect(r.metrics['mismatch/rollout_is_max']).toBe(2); // current/behavior ratio 4 capped
    expect(r.metrics['mismatch/kl']).toBeCloseTo(-(ln(4) + ln(0.1)) / (5 + 1e-8), 12);
  });

  it("'reinforce' applies TIS on current over behavior", () => {
    const r = rolloutCorrection({ ...base, logp, importance: { threshold: 2 }, bypassLossType: 'reinforce' });
    close(r.weights, [1, 1, 0, 2, 1, 0.1]);
  });

  it("'dew' lets a band only mask and refuses a TIS cap", () => {
    const r = rolloutCorrection({ ...base, logp, importance: { threshold: [0.5, 2] }, bypassLossType: 'dew' });
    expect(Array.from(r.weights)).toEqual([1, 1, 0, 0, 1, 0]);
    expect(() => rolloutCorrection({ ...base, logp, importance: { threshold: 2 }, bypassLossType: 'dew' })).toThrow(
      /TIS cap is refused/,
    );
  });

  it('refuses a batch with neither old nor current log-probs', () => {
    expect(() => rolloutCorrection({ ...base })).toThrow(/bypass mode/);
  });
});

describe('rolloutCorrection, rLLM metrics', () => {
  it('compares the current policy with behavior even in decoupled mode', () => {
    const r = rolloutCorrection({ ...base, oldLogp, logp, compat: 'rllm' });
    expect(r.metrics['mismatch/kl']).toBeCloseTo(-(ln(4) + ln(0.1)) / 5, 14);
    expect(r.metrics['mismatch/ratio/max']).toBeCloseTo(4, 12);
  });
});
