import { afterEach, describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import { metricsCsv, metricsFile } from './metrics-file';
import { useRunStore, type StepPoint } from './live-run';

// Commit times as the store keeps them (ms since the epoch); step 1 has none (stored before times were kept).
const T2 = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
const steps: StepPoint[] = [
  { step: 1, metrics: { 'reward/mean': 0.125, 'loss/total': -3e-7 } },
  { step: 2, metrics: { 'reward/mean': 0.25, 'loss/total': 0.5, 'rl/kl': 0.01 }, t: T2 },
];
const evals = [
  { step: 0, accuracy: 0.2, meanLength: 11, n: 100, samples: [] },
  { step: 2, accuracy: 0.25, meanLength: 10.5, n: 100, samples: [] },
];
const config = {
  preset: 'sft-arith',
  steps: 2,
  lr: 1e-3,
  seed: 1,
  evalEvery: 2,
  evalN: 100,
  checkpointEvery: 0,
} as RunOptions;

describe('metricsFile', () => {
  it('carries the run config and drops the greedy samples', () => {
    const f = metricsFile({
      runId: 'sft-x-1',
      name: 'sft-arith · x',
      status: 'finished',
      totalSteps: 2,
      config,
      steps,
      evals,
    });
    expect(f).toMatchObject({ kind: 'dewpoint-metrics', version: 3, config });
    expect(f.evals[0]).toEqual({ step: 0, accuracy: 0.2, meanLength: 11, n: 100 });
  });

  it("carries the run's name and each step's commit time in ms, absent where unknown", () => {
    const f = metricsFile({
      runId: 'sft-x-1',
      name: 'lr 3e-4 probe',
      status: 'finished',
      totalSteps: 2,
      config,
      steps,
      evals,
    });
    expect(f.name).toBe('lr 3e-4 probe');
    expect(f.steps).toEqual([
      { step: 1, metrics: steps[0].metrics },
      { step: 2, metrics: steps[1].metrics, t: T2 },
    ]);
    expect('t' in f.steps[0]).toBe(false);
    // Through JSON as the download writes it: a name the listing had not got yet is null, not dropped.
    const unnamed = JSON.parse(
      JSON.stringify(
        metricsFile({ runId: 'r', name: null, status: 'running', totalSteps: 2, config: null, steps, evals }),
      ),
    );
    expect(unnamed.name).toBeNull();
    expect(unnamed.steps[1].t).toBe(T2);
  });
});

describe('metricsCsv', () => {
  it('has the name and commit time after the step, a column per metric, a row per step (step 0: the evaluation before training)', () => {
    expect(metricsCsv({ name: 'sft-arith · x', steps, evals }).split('\n')).toEqual([
      'step,run_name,time,loss/total,reward/mean,rl/kl,eval/accuracy,eval/mean_length,eval/n',
      '0,sft-arith · x,,,,,0.2,11,100',
      '1,sft-arith · x,,-3e-7,0.125,,,,',
      '2,sft-arith · x,2025-01-02T03:04:05.678Z,0.5,0.25,0.01,0.25,10.5,100',
      '',
    ]);
  });

  it('quotes a name with a comma or a quote (RFC 4180), and leaves it empty when unknown', () => {
    const one = [steps[1]];
    expect(metricsCsv({ name: 'lr 3e-4, "probe"', steps: one, evals: [] }).split('\n')[1]).toBe(
      '2,"lr 3e-4, ""probe""",2025-01-02T03:04:05.678Z,0.5,0.25,0.01,,,',
    );
    expect(metricsCsv({ name: null, steps: one, evals: [] }).split('\n')[1]).toMatch(/^2,,2025-01-02T03:04:05\.678Z,/);
  });
});

describe('the live run store feeds the export', () => {
  afterEach(() => useRunStore.getState().clear());

  it("takes step 0's pass rates from its evaluation event, as a reopened run reads them from the store", () => {
    const s = useRunStore.getState();
    s.begin('calc-live-1', config);
    const pass = { 'eval/pass@1': 0.16, 'eval/pass@4': 0.43 };
    s.receive({
      type: 'eval',
      runId: 'calc-live-1',
      step: 0,
      accuracy: 0.29,
      meanLength: 36,
      n: 100,
      samples: [],
      metrics: pass,
    });
    s.receive({ type: 'step', runId: 'calc-live-1', step: 1, totalSteps: 2, metrics: { 'reward/mean': 0.5 } });
    expect(useRunStore.getState().steps.map((p) => [p.step, p.metrics])).toEqual([
      [0, pass],
      [1, { 'reward/mean': 0.5 }],
    ]);
    // An evaluation without metrics adds no step point, nor does a later step's with them (its step event carries them).
    s.receive({ type: 'eval', runId: 'calc-live-1', step: 1, accuracy: 0.3, meanLength: 36, n: 100, samples: [] });
    s.receive({
      type: 'eval',
      runId: 'calc-live-1',
      step: 2,
      accuracy: 0.3,
      meanLength: 36,
      n: 100,
      samples: [],
      metrics: pass,
    });
    expect(useRunStore.getState().steps).toHaveLength(2);
  });

  it("keeps a live 'step' event's commit time, and an opened run's history times", () => {
    const s = useRunStore.getState();
    s.begin('sft-live-1', config);
    s.receive({ type: 'step', runId: 'sft-live-1', step: 1, totalSteps: 2, metrics: { 'reward/mean': 0.5 }, t: T2 });
    s.receive({ type: 'step', runId: 'sft-live-1', step: 2, totalSteps: 2, metrics: { 'reward/mean': 0.75 } });
    expect(useRunStore.getState().steps).toEqual([
      { step: 1, metrics: { 'reward/mean': 0.5 }, t: T2 },
      { step: 2, metrics: { 'reward/mean': 0.75 } },
    ]);
    // Opened from the table: the steps are runHistory's, with its `t`.
    s.load('sft-old-1', config, 'finished', [{ step: 1, metrics: { x: 1 }, t: T2 + 1 }], []);
    const { runId, status, totalSteps, steps: shown, evals: evs, options } = useRunStore.getState();
    const f = metricsFile({
      runId: runId!,
      name: 'old',
      status,
      totalSteps,
      config: options,
      steps: shown,
      evals: evs,
    });
    expect(f.steps).toEqual([{ step: 1, metrics: { x: 1 }, t: T2 + 1 }]);
  });
});
