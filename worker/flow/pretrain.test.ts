import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import { FLOW_2D } from './config';
import { VelocityField } from './model';
import { PRETRAIN_DEFAULTS, pretrainFlow, sampleBase } from './pretrain';
import { gaussianStarts, sampleOde } from './rollout';

const ops = await nodeWasmOps(1);

/** Fraction of points within 0.16 of a blob centre (±0.4, ±0.4) in both coordinates. */
function nearBlobs(p: Float32Array): number {
  let near = 0;
  for (let i = 0; i < p.length / 2; i++)
    if (Math.abs(Math.abs(p[2 * i]) - 0.4) < 0.16 && Math.abs(Math.abs(p[2 * i + 1]) - 0.4) < 0.16) near++;
  return near / (p.length / 2);
}

describe('base distributions', () => {
  it('blobs put ~91% of points within 2σ of a centre; square stays in [−0.5, 0.5]²', () => {
    expect(nearBlobs(sampleBase('blobs', 20000, mulberry32(1)))).toBeCloseTo(0.91, 1);
    const sq = sampleBase('square', 1000, mulberry32(2));
    expect(Math.max(...sq.map(Math.abs))).toBeLessThanOrEqual(0.5);
    expect(() => sampleBase('ring' as never, 1, mulberry32(3))).toThrow(/expected one of blobs, square, gaussian/);
  });
});

describe('flow-matching pretraining (wasm backend)', () => {
  it('lowers the loss, separates the modes under the ODE sampler, and is deterministic in its seed', async () => {
    const train = async (iterations: number) => {
      const m = new VelocityField(ops, FLOW_2D);
      m.initWeights(1);
      return { m, losses: await pretrainFlow(m, { ...PRETRAIN_DEFAULTS, iterations }) };
    };
    const { m, losses } = await train(PRETRAIN_DEFAULTS.iterations);
    const mean = (a: number, b: number) => losses.slice(a, b).reduce((s, x) => s + x, 0) / (b - a);
    expect(mean(0, 20)).toBeGreaterThan(0.7);
    expect(mean(1900, 2000)).toBeLessThan(0.58);
    const near = nearBlobs(await sampleOde(m, gaussianStarts(2000, 2, 5), 10));
    expect(near).toBeGreaterThan(0.65); // the ODE at 10 Euler steps blurs the base’s 0.91
    const again = await train(30);
    expect(Array.from(again.losses)).toEqual(Array.from(losses.slice(0, 30)));
  });
});
