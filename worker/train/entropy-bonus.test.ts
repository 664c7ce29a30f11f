/**
 * The entropy bonus in a run: a static bonus alone moves the weights toward a higher entropy (the
 * tiny base never answers right, so every advantage is 0 and without the bonus nothing moves); the
 * adaptive coefficient steps once per optimizer step, as TRL's own test pins it, and carries over
 * a resume in the run's position (without it, the continued run differs).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type { GrpoRunOptions } from '../contract/options';
import { GRPO_ARITH, GrpoRun } from './grpo';
import type { ResumePoint } from './resume';
import { tinySftBase } from './testing/tiny-base';

const exact = (m: object) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

const CONFIG: GrpoRunOptions = {
  ...GRPO_ARITH,
  prompts: 3,
  group: 4,
  maxNew: 8,
  evalEvery: 0,
  evalN: 4,
  lr: 1e-2,
  maskZeroAdvantage: false,
};

let base: LoadedCheckpoint;
beforeAll(async () => {
  base = await tinySftBase();
});

async function snapshot(run: GrpoRun): Promise<ResumePoint> {
  return {
    position: structuredClone(run.position()),
    weights: await run.model.getWeights(),
    optimizer: await run.model.getOptimizerState(),
  };
}

describe('the entropy bonus in a GRPO run (CPU, tiny model)', () => {
  it('a static bonus alone raises the entropy step after step; without it zero advantages move nothing', async () => {
    const none = new GrpoRun(createCpuOps(), CONFIG, base);
    const withBonus = new GrpoRun(
      createCpuOps(),
      { ...CONFIG, entropyBonus: { kind: 'static', coef: 0.5, aggregation: 'loss' } },
      base,
    );
    const entropies: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await withBonus.next();
      expect(s.metrics['reward/mean']).toBe(0);
      expect(s.metrics['loss/entropy']).toBeCloseTo(-0.5 * s.metrics['rl/entropy'], 12);
      entropies.push(s.metrics['rl/entropy']);
    }
    expect(entropies[1]).toBeGreaterThan(entropies[0]);
    expect(entropies[2]).toBeGreaterThan(entropies[1]);
    const before = base.weights.get('model.layers.0.mlp.down_proj.weight')!;
    await none.next();
    expect(Array.from((await none.model.getWeights()).get('model.layers.0.mlp.down_proj.weight')!)).toEqual(
      Array.from(before),
    );
  });

  it("adaptive: the first update applies none, then the coefficient rises by δ per optimizer step (TRL's check, target 15)", async () => {
    const run = new GrpoRun(
      createCpuOps(),
      {
        ...CONFIG,
        miniBatches: 2,
        entropyBonus: { kind: 'adaptive', coef: 0.01, min: 0, max: 1, delta: 0.005, target: 15 },
      },
      base,
    );
    const applied: number[] = [];
    let last = 0;
    for (let i = 0; i < 3; i++) {
      const s = await run.next();
      applied.push(...s.updates.map((u) => u.metrics['rl/entropy_coef']));
      last = s.metrics['rl/entropy_coef_next'];
    }
    expect(applied[0]).toBe(0);
    applied.slice(1).forEach((c, k) => expect(c).toBeCloseTo(0.01 + 0.005 * (k + 1), 12));
    expect(last).toBeCloseTo(0.01 + 0.005 * 6, 12);
    expect(run.position().entropy?.coef).toBeCloseTo(0.04, 12);
  });

  it('adaptive: a run continued from step 1 computes steps 2 and 3 exactly; without the controller in its position it does not', async () => {
    const config: GrpoRunOptions = {
      ...CONFIG,
      entropyBonus: { kind: 'adaptive', coef: 0.05, min: 0, max: 1, delta: 0.05, target: 15 },
    };
    const whole = new GrpoRun(createCpuOps(), config, base);
    await whole.next();
    const at1 = await snapshot(whole);
    expect(at1.position.entropy).toEqual({ coef: 0.1, lastEntropy: expect.any(Number) });
    const wholeSteps = [exact((await whole.next()).metrics), exact((await whole.next()).metrics)];

    const continued = new GrpoRun(createCpuOps(), config, base);
    continued.resumeAt(at1);
    expect(exact((await continued.next()).metrics)).toEqual(wholeSteps[0]);
    expect(exact((await continued.next()).metrics)).toEqual(wholeSteps[1]);

    const { entropy: _dropped, ...withoutController } = at1.position;
    const forgetful = new GrpoRun(createCpuOps(), config, base);
    forgetful.resumeAt({ ...at1, position: withoutController });
    expect((await forgetful.next()).metrics['rl/entropy_coef']).not.toBe(wholeSteps[0]['rl/entropy_coef']);
  });
});
