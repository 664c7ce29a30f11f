import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import type { CompareRun } from './compare';
import type { Line } from './lines';
import { cellText, metricDirection, sortSummary, statsOf, summaryColumns, summaryRows } from './summary';

describe('metricDirection', () => {
  it('maximises rewards, accuracy and pass rates, minimises supervised losses, times and failures', () => {
    expect(
      ['reward/mean', 'eval/accuracy', 'eval/reward_mean', 'eval/pass@4', 'critic/vf_explained_var'].map(
        metricDirection,
      ),
    ).toEqual(['max', 'max', 'max', 'max', 'max']);
    expect(
      [
        'loss/sft',
        'loss/dpo',
        'perf/step_ms',
        'response/truncated_frac',
        'episodes/termination_share/max_turns',
        'episodes/termination_share/env_error',
      ].map(metricDirection),
    ).toEqual(['min', 'min', 'min', 'min', 'min', 'min']);
    expect(metricDirection('episodes/termination_share/env_done')).toBe('max');
  });
  it('gives no direction to the RL losses, spreads, KL, lengths, norms and metrics it does not list', () => {
    const none = [
      'loss/policy',
      'loss/total',
      'loss/kl',
      'loss/value',
      'critic/vf_loss',
      'reward/std',
      'reward/frac_reward_zero_std',
      'mismatch/kl',
      'response/mean_length',
      'opt/grad_norm',
      'reward/mean_before_filter',
    ];
    expect(none.map(metricDirection)).toEqual(none.map(() => null));
  });
});

describe('summaryColumns', () => {
  it('gives final and best by direction, or min and max when there is none', () => {
    expect(summaryColumns(['reward/mean', 'loss/sft', 'loss/policy']).map((c) => `${c.metric} ${c.label}`)).toEqual([
      'reward/mean final',
      'reward/mean best (max ↑)',
      'loss/sft final',
      'loss/sft best (min ↓)',
      'loss/policy final',
      'loss/policy min',
      'loss/policy max',
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
  it('writes a cell at 3 significant digits and a range with "to" and minus signs, no exponent above 1e-4', () => {
    const loss = (runId: string, v: number): CompareRun => ({
      ...run(runId, []),
      steps: [{ step: 1, metrics: { 'loss/policy': v } }],
    });
    const [group] = summaryRows([line('g', loss('g1', -0.001986), loss('g2', -6.212e-4))], ['loss/policy']);
    expect(cellText(group, 'loss/policy:final')).toEqual({ value: '−0.0013', range: '−0.00199 to −0.000621' });
    expect(cellText(group, 'reward/mean:final')).toEqual({ value: '–', range: null });
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
