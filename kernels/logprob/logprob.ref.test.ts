import { describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { expectClose } from '../testing/expect-close';
import { numericGrad } from '../testing/finite-diff';
import { logprobBackwardRef, logprobForwardRef } from './logprob.ref';

/** Forward reference in float64 at inverse temperature `scale`: returns [logp, entropy, lse]. */
function forward64(
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
  scale = 1,
): [Float64Array, Float64Array, Float64Array] {
  const logp = new Float64Array(N);
  const entropy = new Float64Array(N);
  const lse = new Float64Array(N);
  logprobForwardRef(logp, entropy, lse, logits, targets, N, V, scale);
  return [logp, entropy, lse];
}

/**
 * Central finite differences, in float64, of L(l) = Σ_t dlogp_t·logp_t(l) + Σ_t dentropy_t·H_t(l)
 * evaluated with the forward reference at inverse temperature `scale`.
 */
function finiteDiffGrad(
  logits: Float64Array,
  targets: Int32Array,
  dlogp: Float64Array,
  dentropy: Float64Array | null,
  N: number,
  V: number,
  h = 1e-5,
  scale = 1,
): Float64Array {
  const z = Float64Array.from(logits);
  const loss = () => {
    const [logp, entropy] = forward64(z, targets, N, V, scale);
    let l = 0;
    for (let t = 0; t < N; t++) l += dlogp[t] * logp[t] + (dentropy ? dentropy[t] * entropy[t] : 0);
    return l;
  };
  return numericGrad(z, loss, { h });
}

describe('logprobForwardRef', () => {
  it('matches hand values: softmax (1/6, 2/6, 3/6) and a uniform row', () => {
    const logits = Float64Array.of(0, Math.log(2), Math.log(3), 0, 0, 0);
    const [logp, entropy, lse] = forward64(logits, Int32Array.of(2, 0), 2, 3);
    expect(lse[0]).toBeCloseTo(Math.log(6), 14);
    expect(logp[0]).toBeCloseTo(Math.log(1 / 2), 14); // log(3/6)
    expect(entropy[0]).toBeCloseTo(
      -(1 / 6) * Math.log(1 / 6) - (1 / 3) * Math.log(1 / 3) - (1 / 2) * Math.log(1 / 2),
      14,
    );
    expect(lse[1]).toBeCloseTo(Math.log(3), 14);
    expect(logp[1]).toBeCloseTo(-Math.log(3), 14);
    expect(entropy[1]).toBeCloseTo(Math.log(3), 14);
  });

  it('gives logp 0 for a negative target and still computes the entropy', () => {
    const [logp, entropy] = forward64(Float64Array.of(1, 1, 1, 1), Int32Array.of(-1), 1, 4);
    expect(logp[0]).toBe(0);
    expect(entropy[0]).toBeCloseTo(Math.log(4), 14);
  });

  it('is stable for ±1e4 logits: shift invariance and no overflow', () => {
    const base = randomArray(2 * 50, 11, -3, 3);
    const shifted = Float64Array.from(base, (x) => x + 1e4);
    const targets = Int32Array.of(7, 49);
    const [a, ha] = forward64(base, targets, 2, 50);
    const [b, hb] = forward64(shifted, targets, 2, 50);
    expectClose(b, a, { atol: 1e-9, rtol: 0, label: 'logp shifted by 1e4' });
    expectClose(hb, ha, { atol: 1e-9, rtol: 0, label: 'entropy shifted by 1e4' });
    const [logp, entropy, lse] = forward64(Float64Array.of(1e4, -1e4, 0), Int32Array.of(1), 1, 3);
    expect(lse[0]).toBe(1e4);
    expect(logp[0]).toBe(-2e4);
    expect(entropy[0]).toBeGreaterThanOrEqual(0);
    expect(entropy[0]).toBeLessThan(1e-300);
  });

  it('throws for a target ≥ V and for buffers that are too small', () => {
    const out = () => new Float32Array(1);
    expect(() => logprobForwardRef(out(), out(), out(), [0, 0], [2], 1, 2)).toThrow(
      /targets\[0\] = 2 is not an id in 0..1/,
    );
    expect(() => logprobForwardRef(out(), out(), out(), [0], [0], 1, 2)).toThrow(
      /logits has 1 elements, needs N\*V = 1\*2 = 2/,
    );
    expect(() => logprobForwardRef(out(), new Float32Array(0), out(), [0, 0], [0], 1, 2)).toThrow(
      /entropy has 0 elements, needs N = 1/,
    );
    expect(() => logprobForwardRef(out(), out(), out(), [], [], 1, 0)).toThrow(/V must be a positive integer/);
  });
});

describe('logprobBackwardRef', () => {
  const N = 4;
  const V = 6;
  const rand = mulberry32(5);
  const logits = Float64Array.from(randomArray(N * V, 3, -2, 2));
  const targets = Int32Array.of(0, 5, -1, 2); // row 2 has no target
  const dlogp = Float64Array.from({ length: N }, () => rand() * 2 - 1);
  const dentropy = Float64Array.from({ length: N }, () => rand() * 2 - 1);

  it('matches central finite differences of the forward reference (logp seed only)', () => {
    const [, , lse] = forward64(logits, targets, N, V);
    const got = new Float64Array(N * V);
    logprobBackwardRef(got, dlogp, logits, targets, lse, N, V);
    expectClose(got, finiteDiffGrad(logits, targets, dlogp, null, N, V), {
      atol: 1e-8,
      rtol: 1e-6,
      label: 'dlogits vs finite differences',
    });
    // Row 2 has no target and no entropy seed: its gradient is exactly zero.
    expect([...got.subarray(2 * V, 3 * V)]).toEqual(new Array(V).fill(0));
  });

  it('matches central finite differences with the entropy seed too', () => {
    const [, entropy, lse] = forward64(logits, targets, N, V);
    const got = new Float64Array(N * V);
    logprobBackwardRef(got, dlogp, logits, targets, lse, N, V, 1, { dentropy, entropy });
    expectClose(got, finiteDiffGrad(logits, targets, dlogp, dentropy, N, V), {
      atol: 1e-8,
      rtol: 1e-6,
      label: 'dlogits (logp + entropy) vs finite differences',
    });
  });

  it('accumulates into dlogits and ignores dlogp where the target is negative', () => {
    const [, , lse] = forward64(logits, targets, N, V);
    const fresh = new Float64Array(N * V);
    logprobBackwardRef(fresh, dlogp, logits, targets, lse, N, V);
    const init = Float64Array.from(randomArray(N * V, 9));
    const acc = init.slice();
    const seedWithNaN = dlogp.slice();
    seedWithNaN[2] = NaN; // row 2 has target −1: its seed must never be read
    logprobBackwardRef(acc, seedWithNaN, logits, targets, lse, N, V);
    expectClose(
      acc,
      init.map((x, i) => x + fresh[i]),
      { atol: 1e-15, rtol: 0, label: 'accumulated dlogits' },
    );
  });

  it('throws for a target ≥ V and for a missing entropy buffer', () => {
    const lse = new Float64Array(1);
    expect(() => logprobBackwardRef(new Float32Array(2), [1], [0, 0], [5], lse, 1, 2)).toThrow(/targets\[0\] = 5/);
    expect(() =>
      logprobBackwardRef(new Float32Array(2), [1], [0, 0], [0], lse, 1, 2, 1, { dentropy: [1], entropy: [] }),
    ).toThrow(/entropy has 0 elements/);
  });
});

describe('logprob references at an inverse temperature s = 1/T ≠ 1', () => {
  const N = 4;
  const V = 6;
  const s = 1 / 0.7;
  const rand = mulberry32(21);
  const logits = Float64Array.from(randomArray(N * V, 22, -3, 3));
  const targets = Int32Array.of(3, -1, 0, 5);
  const dlogp = Float64Array.from({ length: N }, () => rand() * 2 - 1);
  const dentropy = Float64Array.from({ length: N }, () => rand() * 2 - 1);

  it('matches hand values: s = 2 turns logits (0, log 2, log 3) into softmax (1, 4, 9) / 14', () => {
    const [logp, entropy, lse] = forward64(Float64Array.of(0, Math.log(2), Math.log(3)), Int32Array.of(1), 1, 3, 2);
    const p = [1 / 14, 4 / 14, 9 / 14];
    expect(lse[0]).toBeCloseTo(Math.log(14), 14);
    expect(logp[0]).toBeCloseTo(Math.log(4 / 14), 14);
    expect(entropy[0]).toBeCloseTo(-p.reduce((h, q) => h + q * Math.log(q), 0), 14);
  });

  it('equals the untempered reference on the logits times s; s = 1 is the default, bit for bit', () => {
    const [a, ha, la] = forward64(logits, targets, N, V, s);
    const [b, hb, lb] = forward64(
      logits.map((x) => x * s),
      targets,
      N,
      V,
    );
    expectClose(a, b, { atol: 1e-13, rtol: 0, label: 'logp at s vs logp of s·l' });
    expectClose(ha, hb, { atol: 1e-13, rtol: 0, label: 'entropy at s vs entropy of s·l' });
    expectClose(la, lb, { atol: 1e-13, rtol: 0, label: 'lse at s vs lse of s·l' });
    const [c, hc, lc] = forward64(logits, targets, N, V);
    const [d, hd, ld] = forward64(logits, targets, N, V, 1);
    expect([c, hc, lc]).toEqual([d, hd, ld]);
    const [, , lse] = forward64(logits, targets, N, V);
    const dflt = new Float64Array(N * V);
    const one = new Float64Array(N * V);
    logprobBackwardRef(dflt, dlogp, logits, targets, lse, N, V);
    logprobBackwardRef(one, dlogp, logits, targets, lse, N, V, 1);
    expect(dflt).toEqual(one);
  });

  it('backward matches central finite differences of the forward at s (logp seed, then with the entropy seed)', () => {
    const [, entropy, lse] = forward64(logits, targets, N, V, s);
    const got = new Float64Array(N * V);
    logprobBackwardRef(got, dlogp, logits, targets, lse, N, V, s);
    expectClose(got, finiteDiffGrad(logits, targets, dlogp, null, N, V, 1e-5, s), {
      atol: 1e-8,
      rtol: 1e-6,
      label: 'dlogits at s vs finite differences',
    });
    const withH = new Float64Array(N * V);
    logprobBackwardRef(withH, dlogp, logits, targets, lse, N, V, s, { dentropy, entropy });
    expectClose(withH, finiteDiffGrad(logits, targets, dlogp, dentropy, N, V, 1e-5, s), {
      atol: 1e-8,
      rtol: 1e-6,
      label: 'dlogits (logp + entropy) at s vs finite differences',
    });
    // The scale matters: the untempered gradient is not the tempered one.
    const untempered = new Float64Array(N * V);
    logprobBackwardRef(untempered, dlogp, logits, targets, forward64(logits, targets, N, V)[2], N, V);
    expect(Math.max(...got.map((g, i) => Math.abs(g - untempered[i])))).toBeGreaterThan(1e-2);
  });

  it('refuses a scale that is not finite and > 0', () => {
    const out = () => new Float64Array(1);
    for (const bad of [0, -1, Infinity, NaN])
      expect(() => logprobForwardRef(out(), out(), out(), [0, 0], [0], 1, 2, bad)).toThrow(
        /scale \(1 \/ temperature\) must be finite and > 0/,
      );
    expect(() => logprobBackwardRef(new Float64Array(2), [1], [0, 0], [0], [0], 1, 2, 0)).toThrow(/scale/);
  });
});
