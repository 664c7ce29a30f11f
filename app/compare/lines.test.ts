import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../../worker/protocol';
import type { CompareRun } from './compare';
import { lineSeries, linesOf, runsWithoutTimes, seedlessKey } from './lines';

const T0 = 1_700_000_000_000;
const run = (runId: string, o: Record<string, unknown>, values: number[], times = true): CompareRun => ({
  runId,
  name: runId,
  createdAt: T0,
  imported: false,
  options: { preset: 'grpo-arith', lr: 1e-4, seed: 1, ...o } as unknown as RunOptions,
  steps: values.map((v, i) => ({
    step: i + 1,
    metrics: { 'reward/mean': v },
    ...(times ? { t: T0 + (i + 1) * 2000 } : {}),
  })),
  evaluations: [],
});

describe('linesOf', () => {
  const s1 = run('s1', { seed: 1 }, [0, 0.5]);
  const s2 = run('s2', { seed: 2 }, [0.5, 1, 1]);
  const other = run('lr', { lr: 3e-4 }, [0.2]);
  it('groups runs whose options differ only in the seed, in listing order; a lone run stays a run', () => {
    const lines = linesOf([s1, other, s2], true, (ms) => `group of ${ms.length}`);
    expect(lines.map((l) => [l.name, l.members.map((m) => m.runId)])).toEqual([
      ['group of 2', ['s1', 's2']],
      ['lr', ['lr']],
    ]);
    expect(linesOf([s1, other, s2], false, () => 'x').map((l) => l.name)).toEqual(['s1', 'lr', 's2']);
  });
  it('never groups an imported run', () => {
    expect(seedlessKey({ ...s1, imported: true })).toBeNull();
    expect(seedlessKey(s1)).toBe(seedlessKey(s2));
  });
  it('draws a group as the mean per step with the min–max band, over the seeds that reached the step', () => {
    const [group] = linesOf([s1, s2], true, () => 'g');
    expect(lineSeries(group, 'reward/mean', 'step')).toEqual({
      name: 'g',
      points: [
        [1, 0.25],
        [2, 0.75],
        [3, 1],
      ],
      band: [
        [1, 0, 0.5],
        [2, 0.5, 1],
        [3, 1, 1],
      ],
    });
  });
  it('puts a step at the seconds since the run started on the wall-clock axis, and leaves out steps without a time', () => {
    expect(lineSeries(linesOf([s1], false, () => '')[0], 'reward/mean', 'wall').points).toEqual([
      [2, 0],
      [4, 0.5],
    ]);
    const untimed = run('old', {}, [1], false);
    expect(lineSeries(linesOf([untimed], false, () => '')[0], 'reward/mean', 'wall').points).toEqual([]);
    expect(runsWithoutTimes(linesOf([s1, untimed], false, () => ''))).toEqual(['old']);
  });
  it("puts a step stored with the run's compute time there: a stop and a Continue between steps 1 and 2 take no room", () => {
    // Step 2 was committed a minute after step 1 (the run was stopped, then continued), but computed 2 s.
    const stopped: CompareRun = {
      ...run('stopped', {}, [0, 0.5]),
      steps: [
        { step: 1, metrics: { 'reward/mean': 0 }, t: T0 + 2000, activeMs: 2000 },
        { step: 2, metrics: { 'reward/mean': 0.5 }, t: T0 + 62_000, activeMs: 4000 },
      ],
    };
    expect(lineSeries(linesOf([stopped], false, () => '')[0], 'reward/mean', 'wall').points).toEqual([
      [2, 0],
      [4, 0.5],
    ]);
  });
});
