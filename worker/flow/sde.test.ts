import { describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../../kernels/common/random';
import { numericGrad } from '../../kernels/testing/finite-diff';
import type { Velocity } from './rollout';
import { finalPoints, gaussianStarts, sampleOde, sampleSde } from './rollout';
import {
  FLOW_SDE_DEFAULTS,
  flowSchedule,
  flowTimesteps,
  normalFrom,
  transitionKl,
  transitionLogProb,
  transitionMean,
  velocityGrad,
} from './sde';

describe('Flow-GRPO SDE schedule (hand values)', () => {
  it('K = 10, a = 0.7: t = 1 uses t_1 = 0.9 in σ_t, and μ = cx·x + cv·v', () => {
    const s = flowSchedule(FLOW_SDE_DEFAULTS);
    expect(Array.from(flowTimesteps(FLOW_SDE_DEFAULTS), (t) => +t.toFixed(12))).toEqual([
      1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0,
    ]);
    // k = 0: σ = 0.7·√(1/(1 − 0.9)), s = σ·√0.1 = 0.7, cx = 1 − σ²/2·0.1 = 0.755, cv = −0.1 (1 − t = 0).
    expect(s[0].sigma).toBeCloseTo(0.7 * Math.sqrt(10), 12);
    expect(s[0].std).toBeCloseTo(0.7, 12);
    expect(s[0].cx).toBeCloseTo(0.755, 12);
    expect(s[0].cv).toBeCloseTo(-0.1, 12);
    // k = 5 (t = 0.5): σ = 0.7, cx = 1 + 0.49/1·(−0.1) = 0.951, cv = (1 + 0.49·0.5/1)(−0.1) = −0.1245.
    expect(s[5].sigma).toBeCloseTo(0.7, 12);
    expect(s[5].std).toBeCloseTo(0.7 * Math.sqrt(0.1), 12);
    expect(s[5].cx).toBeCloseTo(0.951, 12);
    expect(s[5].cv).toBeCloseTo(-0.1245, 12);
  });

  it('shift s maps t to s·t/(1 + (s − 1)t), as SD3’s scheduler', () => {
    const t = flowTimesteps({ steps: 4, noiseLevel: 0.7, shift: 3 });
    expect(Array.from(t)).toEqual([1, 2.25 / 2.5, 1.5 / 2, 0.75 / 1.5, 0]);
  });

  it('refuses ODE noise (a = 0), too few steps and a bad shift', () => {
    expect(() => flowSchedule({ ...FLOW_SDE_DEFAULTS, noiseLevel: 0 })).toThrow(/noiseLevel = 0/);
    expect(() => flowSchedule({ ...FLOW_SDE_DEFAULTS, steps: 1 })).toThrow(/steps = 1/);
    expect(() => flowSchedule({ ...FLOW_SDE_DEFAULTS, shift: -1 })).toThrow(/shift = -1/);
  });
});

describe('transition log-prob and KL', () => {
  const c = flowSchedule(FLOW_SDE_DEFAULTS)[3];
  const D = 2;
  it('is the per-coordinate mean of the Gaussian log-density', () => {
    const x = [0.3, -0.2, 1, 2];
    const v = [0.5, 0.1, -1, 0];
    const next = [0.1, -0.4, 1.2, 1.9];
    const mean = new Float64Array(4);
    for (let i = 0; i < 2; i++) transitionMean(mean, x, v, c, i, D);
    for (let i = 0; i < 2; i++) {
      let want = 0;
      for (let d = 0; d < D; d++) {
        const mu = c.cx * x[i * D + d] + c.cv * v[i * D + d];
        want += Math.log(
          Math.exp(-((next[i * D + d] - mu) ** 2) / (2 * c.std ** 2)) / (c.std * Math.sqrt(2 * Math.PI)),
        );
      }
      expect(transitionLogProb(next, mean, c, i, D)).toBeCloseTo(want / D, 12);
    }
    const ref = [0, 0, 1, 2];
    expect(transitionKl(mean, ref, c, 0, D)).toBeCloseTo((mean[0] ** 2 + mean[1] ** 2) / (2 * D * c.sigma ** 2), 14);
  });

  it('velocityGrad is ∂(g·logp + h·KL)/∂v by central finite differences', () => {
    const x = Float64Array.from(randomArray(2, 1));
    const next = Float64Array.from(randomArray(2, 2));
    const refMean = Float64Array.from(randomArray(2, 3));
    const v = Float64Array.from(randomArray(2, 4));
    const [g, h] = [0.7, -1.3];
    const f = () => {
      const mean = new Float64Array(2);
      transitionMean(mean, x, v, c, 0, D);
      return g * transitionLogProb(next, mean, c, 0, D) + h * transitionKl(mean, refMean, c, 0, D);
    };
    const mean = new Float64Array(2);
    transitionMean(mean, x, v, c, 0, D);
    const dv = new Float64Array(2);
    velocityGrad(dv, g, h, next, mean, refMean, c, 0, D);
    const fd = numericGrad(v, f);
    for (let d = 0; d < 2; d++) expect(dv[d]).toBeCloseTo(fd[d], 7);
  });
});

/**
 * The exact velocity of data N(m, s0² I) under x_t = (1 − t)x_0 + tε:
 * v = E[ε − x_0 | x_t] = −m + (t − (1 − t)s0²)/((1 − t)²s0² + t²) · (x − (1 − t)m).
 */
function gaussianField(m: number[], s0: number): Velocity {
  return {
    config: { dim: 2 },
    async forward(x, t) {
      const out = new Float32Array(x.length);
      for (let i = 0; i < t.length; i++) {
        const c = (t[i] - (1 - t[i]) * s0 * s0) / ((1 - t[i]) ** 2 * s0 * s0 + t[i] ** 2);
        for (let d = 0; d < 2; d++) out[2 * i + d] = -m[d] + c * (x[2 * i + d] - (1 - t[i]) * m[d]);
      }
      return out;
    },
  };
}

function moments(p: Float32Array, d: number): [number, number] {
  const n = p.length / 2;
  let s = 0;
  for (let i = 0; i < n; i++) s += p[2 * i + d];
  const mu = s / n;
  let q = 0;
  for (let i = 0; i < n; i++) q += (p[2 * i + d] - mu) ** 2;
  return [mu, Math.sqrt(q / n)];
}

describe('SDE sampling', () => {
  it('keeps the flow’s marginal: with the exact velocity of N(m, 0.2²) it lands on N(m, 0.2²) as K grows', async () => {
    const m = [0.5, -0.3];
    const field = gaussianField(m, 0.2);
    const tr = await sampleSde(field, gaussianStarts(20000, 2, 3), { steps: 200, noiseLevel: 0.7, shift: 1 }, 4);
    const p = finalPoints(tr);
    for (const d of [0, 1]) {
      const [mu, sd] = moments(p, d);
      expect(Math.abs(mu - m[d])).toBeLessThan(0.006);
      expect(Math.abs(sd - 0.2)).toBeLessThan(0.006);
    }
    const ode = await sampleOde(field, gaussianStarts(20000, 2, 3), 200);
    expect(Math.abs(moments(ode, 0)[1] - 0.2)).toBeLessThan(0.006);
  });

  it('records latents, next latents and the log-prob of each stored step, reproducibly from the seed', async () => {
    const field = gaussianField([0, 0], 0.5);
    const starts = gaussianStarts(3, 2, 8);
    const a = await sampleSde(field, starts, FLOW_SDE_DEFAULTS, 9);
    const b = await sampleSde(field, starts, FLOW_SDE_DEFAULTS, 9);
    expect(Array.from(a.latents)).toEqual(Array.from(b.latents));
    expect(a.latents.length).toBe(3 * 11 * 2);
    expect(Array.from(a.latents.subarray(0, 2))).toEqual(Array.from(starts.subarray(0, 2)));
    const s = flowSchedule(FLOW_SDE_DEFAULTS);
    // Rescoring step k of sample 1 from the stored latents gives the recorded log-prob exactly.
    for (const k of [0, 4, 9]) {
      const x = a.latents.slice((11 + k) * 2, (11 + k + 1) * 2);
      const next = a.latents.slice((11 + k + 1) * 2, (11 + k + 2) * 2);
      const v = await field.forward(x, [s[k].t]);
      const mean = new Float64Array(2);
      transitionMean(mean, x, v, s[k], 0, 2);
      expect(transitionLogProb(next, mean, s[k], 0, 2)).toBe(a.logProbs[10 + k]);
    }
    const c = await sampleSde(field, starts, FLOW_SDE_DEFAULTS, 10);
    expect(Array.from(c.latents)).not.toEqual(Array.from(a.latents));
  });

  it('normalFrom draws standard normals', () => {
    const normal = normalFrom(mulberry32(1));
    const xs = Float32Array.from({ length: 40000 }, normal);
    const [mu, sd] = moments(xs, 0);
    expect(Math.abs(mu)).toBeLessThan(0.02);
    expect(Math.abs(sd - 1)).toBeLessThan(0.02);
  });
});
