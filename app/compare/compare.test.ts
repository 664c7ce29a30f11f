import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import { ACCURACY, configRows, defaultMetrics, flattenConfig, metricKeys, valueAt } from './compare';

const a = {
  preset: 'grpo-arith',
  steps: 150,
  lr: 1e-4,
  policyLoss: { name: 'ppo', clipHigh: 0.2 },
  rejection: {},
} as unknown as RunOptions;
const b = {
  preset: 'grpo-arith',
  steps: 150,
  lr: 3e-4,
  policyLoss: { name: 'ppo' },
  rejection: {},
} as unknown as RunOptions;

describe('flattenConfig', () => {
  it('gives dotted paths and JSON leaves; an empty object is one leaf', () => {
    expect(flattenConfig(a)).toEqual({
      preset: '"grpo-arith"',
      steps: '150',
      lr: '0.0001',
      'policyLoss.name': '"ppo"',
      'policyLoss.clipHigh': '0.2',
      rejection: '{}',
    });
  });
});

describe('configRows', () => {
  it('lists every field of either run and marks the ones that differ (a field one run lacks differs)', () => {
    const rows = configRows([a, b]);
    expect(rows.filter((r) => r.differs).map((r) => r.path)).toEqual(['lr', 'policyLoss.clipHigh']);
    expect(rows.find((r) => r.path === 'policyLoss.clipHigh')!.values).toEqual(['0.2', null]);
    expect(rows.find((r) => r.path === 'steps')).toEqual({ path: 'steps', values: ['150', '150'], differs: false });
  });
});

const episodeSteps: { step: number; metrics: Record<string, number> }[] = [
  {
    step: 1,
    metrics: {
      'episodes/count': 8,
      'episodes/termination/env_done': 6,
      'episodes/termination/max_turns': 2,
      'episodes/turns_mean': 2.5,
      'reward/mean': 0.5,
    },
  },
  { step: 2, metrics: { 'episodes/count': 8, 'episodes/termination/env_done': 8, 'episodes/turns_mean': 2 } },
];

describe('metricKeys and valueAt', () => {
  it('offers the metrics any run has, accuracy first, plus a termination share per reason counted', () => {
    const runs = [
      { steps: episodeSteps, evaluations: [{ step: 0, accuracy: 0.2 }] },
      { steps: [{ step: 1, metrics: { 'loss/sft': 2 } }], evaluations: [] },
    ];
    expect(metricKeys(runs)).toEqual([
      ACCURACY,
      'episodes/count',
      'episodes/termination/env_done',
      'episodes/termination/max_turns',
      'episodes/termination_share/env_done',
      'episodes/termination_share/max_turns',
      'episodes/turns_mean',
      'loss/sft',
      'reward/mean',
    ]);
  });
  it('computes a termination share from the counts, 0 where the reason was not logged, none without episodes', () => {
    expect(valueAt(episodeSteps[0].metrics, 'episodes/termination_share/max_turns')).toBe(0.25);
    expect(valueAt(episodeSteps[1].metrics, 'episodes/termination_share/max_turns')).toBe(0);
    expect(valueAt({ 'reward/mean': 1 }, 'episodes/termination_share/max_turns')).toBeUndefined();
    expect(valueAt({ 'reward/mean': 1 }, 'reward/mean')).toBe(1);
  });
});

describe('defaultMetrics', () => {
  const keys = metricKeys([{ steps: episodeSteps, evaluations: [] }]).concat('response/mean_length', 'loss/sft');
  it('gives multi-turn runs turns per episode and the termination mix', () => {
    expect(defaultMetrics(keys, [{ family: 'grpo', views: ['Groups', 'Batch', 'Episodes'] }])).toEqual([
      'reward/mean',
      'episodes/turns_mean',
      'episodes/termination_share/env_done',
      'episodes/termination_share/max_turns',
      'response/mean_length',
    ]);
  });
  it('picks by family, only what was reported, and falls back to the first metrics', () => {
    expect(defaultMetrics(keys, [{ family: 'sft', views: [] }])).toEqual(['loss/sft']);
    expect(defaultMetrics(['a/x', 'b/y'], [{ family: 'dpo', views: ['Groups'] }])).toEqual(['a/x', 'b/y']);
  });
});
