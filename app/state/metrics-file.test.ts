import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import { metricsCsv, metricsFile } from './metrics-file';
import type { StepPoint } from './run-store';

const steps: StepPoint[] = [
  { step: 1, metrics: { 'reward/mean': 0.125, 'loss/total': -3e-7 } },
  { step: 2, metrics: { 'reward/mean': 0.25, 'loss/total': 0.5, 'rl/kl': 0.01 } },
];
const evals = [
  { step: 0, accuracy: 0.2, meanLength: 11, n: 100, samples: [] },
  { step: 2, accuracy: 0.25, meanLength: 10.5, n: 100, samples: [] },
];

describe('metricsFile', () => {
  it('carries the run config and drops the greedy samples', () => {
    const config = {
      preset: 'sft-arith',
      steps: 2,
      lr: 1e-3,
      seed: 1,
      evalEvery: 2,
      evalN: 100,
      checkpointEvery: 0,
    } as RunOptions;
    const f = metricsFile({ runId: 'sft-x-1', status: 'finished', totalSteps: 2, config, steps, evals });
    expect(f).toMatchObject({ kind: 'dewpoint-metrics', version: 2, config });
    expect(f.evals[0]).toEqual({ step: 0, accuracy: 0.2, meanLength: 11, n: 100 });
  });
});

describe('metricsCsv', () => {
  it('has a column per metric, a row per step (step 0: the evaluation before training), empty cells where absent', () => {
    expect(metricsCsv({ steps, evals }).split('\n')).toEqual([
      'step,loss/total,reward/mean,rl/kl,eval/accuracy,eval/mean_length,eval/n',
      '0,,,,0.2,11,100',
      '1,-3e-7,0.125,,,,',
      '2,0.5,0.25,0.01,0.25,10.5,100',
      '',
    ]);
  });
});
