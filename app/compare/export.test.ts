import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import type { CompareRun } from './compare';
import { compareCsv, compareJson, csvField } from './export';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);
const runs: CompareRun[] = [
  {
    runId: 'grpo-a-1',
    name: 'grpo-arith · lr 3e-3, probe',
    createdAt: T0,
    imported: false,
    options: { preset: 'grpo-arith', lr: 3e-3 } as unknown as RunOptions,
    steps: [
      { step: 1, metrics: { 'reward/mean': 0.5, 'loss/policy': -0.1 }, t: T0 + 1500 },
      { step: 2, metrics: { 'reward/mean': 0.75 } },
    ],
    evaluations: [{ step: 0, accuracy: 0.25, meanLength: 4, n: 8 }],
  },
];

describe('compareCsv', () => {
  it('writes one row per run, step and metric with the run name, id and the step time (ISO and seconds since the start)', () => {
    expect(compareCsv(runs).split('\n')).toEqual([
      'run_name,run_id,step,time,wall_s,metric,value',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,0,,,eval/accuracy,0.25',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,0,,,eval/mean_length,4',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,0,,,eval/n,8',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,1,2025-01-02T03:04:06.500Z,1.5,loss/policy,-0.1',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,1,2025-01-02T03:04:06.500Z,1.5,reward/mean,0.5',
      '"grpo-arith · lr 3e-3, probe",grpo-a-1,2,,,reward/mean,0.75',
      '',
    ]);
  });
  it('quotes fields as RFC 4180 does', () => {
    expect(csvField('reward/mean')).toBe('reward/mean');
    expect(csvField('a "b"')).toBe('"a ""b"""');
    expect(csvField('a, "b"')).toBe('"a, ""b"""');
  });
});

describe('compareJson', () => {
  it('keeps the name, config and each step’s time (null where none was stored)', () => {
    const f = compareJson(runs);
    expect(f.kind).toBe('dewpoint-compare-metrics');
    expect(f.runs[0]).toMatchObject({ name: runs[0].name, runId: 'grpo-a-1', startedAt: '2025-01-02T03:04:05.000Z' });
    expect(f.runs[0].steps.map((s) => [s.step, s.time, s.wallS])).toEqual([
      [1, '2025-01-02T03:04:06.500Z', 1.5],
      [2, null, null],
    ]);
  });
});
