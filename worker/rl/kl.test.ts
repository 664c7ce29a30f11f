import { describe, expect, it } from 'vitest';
import { klAt, klEstimatorOf, klPenalty, KL_ESTIMATORS, type KlOptions } from './kl';
import { centralDiff } from './testing/finite-diff';

const one = (logp: number, ref: number, options: KlOptions = {}) => {
  const r = klPenalty({ rows: 1, width: 1, logp: [logp], refLogp: [ref] }, options);
  return [r.value[0], r.dlogp[0]];
};

describe('kl: hand values at logp − ref = 0.5', () => {
  it('k1, abs, k2, k3', () => {
    expect(one(-1, -1.5, { estimator: 'k1' })).toEqual([0.5, 1]);
    expect(one(-1, -1.5, { estimator: 'abs' })).toEqual([0.5, 1]);
    expect(one(-1, -1.5, { estimator: 'k2' })).toEqual([0.125, 0.5]);
    const [v, g] = one(-1, -1.5, { estimator: 'k3' });
    expect(v).toBeCloseTo(0.1065306597126334, 14); // e^{−0.5} + 0.5 − 1
    expect(g).toBeCloseTo(0.3934693402873666, 14); // 1 − e^{−0.5}
  });

  it('abs below zero and at zero', () => {
    expect(one(-2, -1, { estimator: 'abs' })).toEqual([1, -1]);
    expect(one(-1, -1, { estimator: 'abs' })).toEqual([0, 0]);
  });

  it('default estimator is k3 and verl spellings are accepted', () => {
    expect(one(-1, -1.5)).toEqual(one(-1, -1.5, { estimator: 'k3' }));
    expect(one(-1, -1.5, { estimator: 'low_var_kl' })).toEqual(one(-1, -1.5, { estimator: 'k3' }));
    expect(one(-1, -1.5, { estimator: 'mse' })).toEqual(one(-1, -1.5, { estimator: 'k2' }));
    expect(one(-1, -1.5, { estimator: 'kl' })).toEqual(one(-1, -1.5, { estimator: 'k1' }));
    expect(klEstimatorOf('low_var_kl+')).toBe('k3+');
    expect(() => klEstimatorOf('k4')).toThrow(/unknown/);
  });
});

describe('kl: k3 clamps (verl) against TRL unclamped', () => {
  it('ref − logp = 3: verl caps the value at 10 and the gradient vanishes; TRL does not', () => {
    expect(one(-4, -1)).toEqual([10, 0]);
    const [v, g] = one(-4, -1, { compat: 'trl' });
    expect(v).toBeCloseTo(Math.exp(3) - 3 - 1, 12);
    expect(g).toBeCloseTo(1 - Math.exp(3), 12);
  });

  it('logp − ref = 10.5 is under the cap, 12 is over it, 25 is past the ±20 clamp', () => {
    const [v, g] = one(10.5, 0);
    expect(v).toBeCloseTo(Math.exp(-10.5) + 10.5 - 1, 12);
    expect(g).toBeCloseTo(1 - Math.exp(-10.5), 12);
    expect(one(12, 0)).toEqual([10, 0]);
    expect(one(25, 0)).toEqual([10, 0]);
    expect(one(25, 0, { compat: 'trl' })[0]).toBeCloseTo(Math.exp(-25) + 25 - 1, 10);
  });

  it('the gradient turns off past ref − logp ≈ 2.611 (value 10)', () => {
    expect(one(-2.6, 0)[1]).not.toBe(0);
    expect(one(-2.62, 0)[1]).toBe(0);
  });

  it('rllm compat is verl', () => {
    expect(one(-4, -1, { compat: 'rllm' })).toEqual(one(-4, -1));
  });
});

describe('kl: + forms keep the value and take k2 gradients', () => {
  it('k3+ at ref − logp = 3: value 10 (clamped k3), gradient logp − ref', () => {
    expect(one(-4, -1, { estimator: 'k3+' })).toEqual([10, -3]);
    expect(one(-1, -1.5, { estimator: 'k1+' })).toEqual([0.5, 0.5]);
    expect(one(-1, -1.5, { estimator: 'abs+' })).toEqual([0.5, 0.5]);
    expect(one(-1, -1.5, { estimator: 'k2+' })).toEqual([0.125, 0.5]);
  });
});

describe('kl: dlogp against central differences (sg held at the base point)', () => {
  const logp = [-1, -0.2, -3.1, -0.7, -2.2, -1.3];
  const ref = [-1.4, -0.3, -1.5, -0.7001, -2.9, -0.4];
  for (const estimator of KL_ESTIMATORS) {
    for (const compat of ['verl', 'trl'] as const) {
      it(`${estimator} (${compat})`, () => {
        const input = { rows: 2, width: 3, logp, refLogp: ref };
        const analytic = klPenalty(input, { estimator, compat }).dlogp;
        const numeric = centralDiff((x) => {
          const v = klPenalty({ ...input, logp: x, logpDetached: logp }, { estimator, compat }).value;
          return v.reduce((s, y) => s + y, 0);
        }, logp);
        for (let i = 0; i < 6; i++) expect(numeric[i]).toBeCloseTo(analytic[i], 6);
      });
    }
  }
});

describe('kl: table handling', () => {
  it('is zero off the mask and refuses non-finite inputs on it', () => {
    const r = klPenalty(
      { rows: 1, width: 3, logp: [-1, -2, NaN], refLogp: [-1.5, -1, 0], mask: [1, 1, 0] },
      { estimator: 'k1' },
    );
    expect(Array.from(r.value)).toEqual([0.5, -1, 0]);
    expect(Array.from(r.dlogp)).toEqual([1, 1, 0]);
    expect(() => klPenalty({ rows: 1, width: 3, logp: [-1, -2, NaN], refLogp: [0, 0, 0] })).toThrow(
      /logp\[0, 2\] = NaN/,
    );
    expect(() => klPenalty({ rows: 2, width: 3, logp: [0], refLogp: [0] })).toThrow(/rows × width/);
  });

  it('klAt matches the table function', () => {
    expect(klAt('k3', -1, -1.5)).toEqual(one(-1, -1.5));
  });
});
