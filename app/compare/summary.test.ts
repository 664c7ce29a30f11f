import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import type { CompareRun } from './compare';
import type { Line } from './lines';
import { metricDirection, sortSummary, statsOf, summaryColumns, summaryRows } from './summary';

describe('metricDirection', () => {
  it('maximises rewards and accuracy, minimises losses, times and failures, and assumes nothing else', () => {
    expect(
      ['reward/mean', 'eval/accuracy', 'eval/reward_mean', 'critic/vf_explained_var'].map(metricDirection),
    ).toEqual(['max', 'max', 'max', 'max']);
    expect(
      ['loss/policy', 'loss/total', 'perf/step_ms', 'response/truncated_frac', 'reward/frac_reward_zero_std'].map(
        metricDirection,
      ),
    ).toEqual(['min', 'min', 'min', 'min', 'min']);
    expect(['reward/std', 'mismatch/kl', 'response/mean_length', 'opt/grad_norm'].map(metricDirection)).toEqual([
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('summaryColumns', () => {
  it('gives final and best by direction, or min and max when there is none', () => {
    expect(summaryColumns(['reward/mean', 'loss/sft', 'opt/grad_norm']).map((c) => `${c.metric} ${c.label}`)).toEqual([
      'reward/mean final',
      'reward/mean best (max ↑)',
      'loss/sft final',
      'loss/sft best (min ↓)',
      'opt/grad_norm final',
      'opt/grad_norm min',
      'opt/grad_norm max',
    ]);
  });
});

const run = (runId: string, rewards: number[]): CompareRun => ({
  runId,
  name: runId,
  createdAt: 0,
  imported: false,
  options: {} as RunOptions,
  steps: rewards.map((v, i) => ({ step: i + 1, metrics: { 'reward/mean': v } })),
  evaluations: [],
});
const line = (id: string, ...members: CompareRun[]): Line => ({ id, name: id, members });

describe('summaryRows and sortSummary', () => {
  it('gives final and best per run; a group the mean over its seeds with their range', () => {
    expect(statsOf([0.1, 0.9, 0.4])).toEqual({ final: 0.4, max: 0.9, min: 0.1 });
    const [one, group] = summaryRows(
      [line('a', run('a', [0.1, 0.9, 0.4])), line('g', run('g1', [0, 1]), run('g2', [0, 0.5]))],
      ['reward/mean'],
    );
    expect(one.cells).toEqual({ 'reward/mean:final': 0.4, 'reward/mean:max': 0.9 });
    expect(group.cells).toEqual({ 'reward/mean:final': 0.75, 'reward/mean:max': 0.75 });
    expect(group.spread['reward/mean:final']).toEqual([0.5, 1]);
    expect(group.runs).toBe(2);
  });
  it('sorts by a column either way with missing values last, and by name', () => {
    const rows = summaryRows(
      [line('b', run('b', [0.2])), line('a', run('a', [0.8])), line('c', run('c', []))],
      ['reward/mean'],
    );
    expect(sortSummary(rows, 'reward/mean:final', 'descending').map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(sortSummary(rows, 'reward/mean:final', 'ascending').map((r) => r.name)).toEqual(['b', 'a', 'c']);
    expect(sortSummary(rows, 'name', 'ascending').map((r) => r.name)).toEqual(['a', 'b', 'c']);
  });
});
