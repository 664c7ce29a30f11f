/**
 * pass@1 and pass@k at the training sampler's settings (issue 22 item 3): the estimator on hand
 * values, and through the shipped calc base, whose greedy accuracy is far from 0.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { CALC } from '../episodes/calc';
import type { EnvironmentKind } from '../episodes/environment';
import { charTokenizer, importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { evaluateEpisodes, passMetrics, passRates } from './evaluate';
import { GRPO_CALC, EpisodeRun } from './grpo-episodes';

describe('passRates', () => {
  it('pass@1 is the mean of c / k, pass@k the fraction of tasks with a success', () => {
    const r = passRates(
      [
        [true, false, false, false],
        [false, false, false, false],
        [true, true, true, true],
      ],
      4,
    );
    expect(r.passAt1).toBeCloseTo((0.25 + 0 + 1) / 3, 12);
    expect(r.passAtK).toBeCloseTo(2 / 3, 12);
    expect(passMetrics({ n: 3, accuracy: 0, meanLength: 0, samples: [], sampled: r })).toEqual({
      'eval/pass@1': r.passAt1,
      'eval/pass@4': r.passAtK,
    });
    expect(passMetrics({ n: 3, accuracy: 0, meanLength: 0, samples: [] })).toEqual({});
    expect(passMetrics({ n: 3, accuracy: 0, meanLength: 0, samples: [], errors: 2 })).toEqual({ 'eval/errors': 2 });
  });
});

describe('an evaluation whose environment fails', () => {
  it('counts the failed episodes apart (eval/errors), greedy and sampled, as not correct', async () => {
    const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));
    const model = new Model(createCpuOps(), base.config);
    model.setWeights(base.weights);
    const tok = charTokenizer(base.tokenizer, 'test');
    const tasks = CALC.heldOut(4);
    // Every other task's environment fails to start.
    const failing: EnvironmentKind = {
      ...CALC,
      create: (task) => {
        if (tasks.indexOf(task) % 2 === 1)
          return {
            reset: () => {
              throw new Error('no such program');
            },
            step: () => ({ observation: [], status: 'running' }),
          };
        return CALC.create(task);
      },
    };
    const ev = await evaluateEpisodes(model, tok, failing, tasks, 64, { k: 2, sampling: { temperature: 0.3 } });
    expect(ev.errors).toBe(2 + 2 * 2);
    expect(ev.accuracy).toBeLessThanOrEqual(0.5);
    expect((await evaluateEpisodes(model, tok, CALC, tasks)).errors).toBe(0);
  });
});

describe('a sampled evaluation of calc episodes (CPU, the shipped calc base)', () => {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));
  // grpo-calc samples at 0.3 and evaluates 4 samples per task by default; these tests set both.
  const run = (o: { evalSamples: number; temperature?: number }) =>
    new EpisodeRun(
      createCpuOps(),
      { environment: 'calc', options: { ...GRPO_CALC, evalN: 12, temperature: 1, ...o } },
      base,
    );

  it('at temperature 0 every sample is the greedy episode: pass@1 = pass@k = the greedy accuracy', async () => {
    const ev = await run({ evalSamples: 3, temperature: 0 }).evaluate();
    expect(ev.accuracy).toBeGreaterThan(0);
    expect(ev.sampled).toEqual({ k: 3, passAt1: ev.accuracy, passAtK: ev.accuracy });
  });

  it('at the training temperature: seeded (same figures twice), pass@1 ≤ pass@k, and no samples without the option', async () => {
    const a = await run({ evalSamples: 4 }).evaluate();
    const b = await run({ evalSamples: 4 }).evaluate();
    expect(a.sampled).toEqual(b.sampled);
    expect(a.sampled!.k).toBe(4);
    expect(a.sampled!.passAt1).toBeLessThanOrEqual(a.sampled!.passAtK);
    // The greedy pass is the same whatever the samples.
    const greedy = await run({ evalSamples: 0 }).evaluate();
    expect(greedy.sampled).toBeUndefined();
    expect(greedy.accuracy).toBe(a.accuracy);
  });
});
