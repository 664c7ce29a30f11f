import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import { ACCURACY, configRows, flattenConfig, metricKeys, overlay } from './compare';

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

describe('overlay', () => {
  const runs = [
    {
      name: 'one',
      steps: [
        { step: 1, metrics: { 'reward/mean': 0.1 } },
        { step: 2, metrics: { 'reward/mean': 0.2 } },
      ],
      evaluations: [{ step: 0, accuracy: 0.2 }],
    },
    { name: 'two', steps: [{ step: 1, metrics: { 'loss/sft': 2 } }], evaluations: [] },
  ];
  it('gives one named series per run', () => {
    expect(overlay(runs, 'reward/mean')).toEqual([
      {
        name: 'one',
        points: [
          [1, 0.1],
          [2, 0.2],
        ],
      },
      { name: 'two', points: [] },
    ]);
    expect(overlay(runs, ACCURACY)[0].points).toEqual([[0, 0.2]]);
  });
  it('offers the metrics either run has, accuracy first', () => {
    expect(metricKeys(runs)).toEqual([ACCURACY, 'loss/sft', 'reward/mean']);
  });
});
