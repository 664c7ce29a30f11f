import { describe, expect, it } from 'vitest';
import { buildReport, frameSchedule, parseAccuracy, type ReportInput } from './report';

const input = (over: Partial<ReportInput> = {}): ReportInput => ({
  createdAt: new Date('2025-01-02T03:04:05Z'),
  backend: 'Training on webgpu.',
  browser: 'chromium 140',
  configJson: JSON.stringify({ preset: 'grpo-arith', steps: 2, evalEvery: 2, evalN: 16 }),
  metrics: {
    kind: 'dewpoint-metrics',
    version: 3,
    config: null,
    runId: 'run-1',
    name: 'grpo-arith · run1',
    status: 'finished',
    totalSteps: 2,
    steps: [
      { step: 1, metrics: { 'reward/mean': 0.25, 'perf/step_ms': 900 }, t: 1_735_787_046_000 },
      { step: 2, metrics: { 'reward/mean': 0.5, 'perf/step_ms': 800 }, t: 1_735_787_047_000 },
    ],
    evals: [{ step: 2, accuracy: 0.125, meanLength: 6, n: 16 }],
  },
  accuracyText: '12.5% (step 2, n=16)',
  timings: { buildS: 3, loadS: 1, runS: 20, totalS: 30 },
  outputs: { screenshots: ['a.png'], video: 'demo.webm', videoMethod: 'Playwright recordVideo' },
  ...over,
});

describe('demo report', () => {
  it('reads the accuracy text, and null before an evaluation', () => {
    expect(parseAccuracy('12.5% (step 2, n=16)')).toEqual({ accuracy: 0.125, step: 2, n: 16 });
    expect(parseAccuracy('not evaluated yet')).toBeNull();
  });

  it('assembles config, per-step metrics, final accuracy and step times', () => {
    const r = buildReport(input());
    expect(r.config).toEqual({ preset: 'grpo-arith', steps: 2, evalEvery: 2, evalN: 16 });
    expect(r.steps.map((s) => s.metrics['reward/mean'])).toEqual([0.25, 0.5]);
    expect(r.finalAccuracy).toEqual({ accuracy: 0.125, step: 2, n: 16 });
    expect(r.timings.stepMs).toEqual([900, 800]);
    expect(r.steps.map((s) => s.t)).toEqual([1_735_787_046_000, 1_735_787_047_000]);
    expect(r.createdAt).toBe('2025-01-02T03:04:05.000Z');
  });

  it('refuses numbers that disagree: an unfinished run, a short run, an accuracy that is not the last evaluation', () => {
    const m = input().metrics;
    expect(() => buildReport(input({ metrics: { ...m, status: 'stopped' } }))).toThrow(
      "status 'stopped', expected 'finished'",
    );
    expect(() => buildReport(input({ metrics: { ...m, steps: m.steps.slice(0, 1) } }))).toThrow(
      '1 steps in the metrics file, config says 2',
    );
    expect(() => buildReport(input({ accuracyText: '25.0% (step 2, n=16)' }))).toThrow('is not the last evaluation');
    expect(() => buildReport(input({ accuracyText: 'not evaluated yet' }))).toThrow('disagree');
    expect(() => buildReport(input({ metrics: { ...m, version: 2 as 3 } }))).toThrow('version 3, got');
  });

  it('replays frames faster than real time, clamped, holding the last one', () => {
    expect(frameSchedule([0, 100, 10_100, 10_110], { speed: 4, minMs: 40, maxMs: 1500 })).toEqual([40, 1500, 40, 1500]);
    expect(frameSchedule([0, 3000])).toEqual([1500, 2000]);
  });
});
