import { describe, expect, it } from 'vitest';
import { duration, pausedWithin, phaseText, storedTiming, timing } from './progress';

describe('phaseText', () => {
  it('says what the step is doing, with its count', () => {
    expect(phaseText({ step: 3, phase: 'sampling', done: 37, total: 128, unit: 'sequences', at: 0 })).toBe(
      'sampling: 37 / 128 sequences finished',
    );
    expect(phaseText({ step: 3, phase: 'training', done: 0, total: 1, unit: 'updates', at: 0 })).toBe(
      'training (forward, backward, AdamW)',
    );
    expect(phaseText({ step: 3, phase: 'training', done: 2, total: 4, unit: 'updates', at: 0 })).toBe(
      'training: update 3 of 4',
    );
    expect(phaseText({ step: 3, phase: 'old log-probs', at: 0 })).toMatch(/^old log-probs/);
    expect(phaseText({ step: 2, phase: 'sampling', done: 3, total: 16, unit: 'pairs found', at: 0 })).toBe(
      'sampling the base model: 3 / 16 pairs found',
    );
    expect(phaseText({ step: 0, phase: 'evaluating', done: 0, total: 100, unit: 'problems', at: 0 })).toBe(
      'evaluating on 100 held-out problems (greedy)',
    );
    expect(phaseText({ step: 3, phase: 'evaluating', done: 37, total: 100, unit: 'completions', at: 0 })).toBe(
      'evaluating on held-out problems: 37 / 100 completions finished',
    );
  });

  it('says the companion is grading, not that no episode finished sampling (grpo-code)', () => {
    expect(phaseText({ step: 2, phase: 'grading', done: 17, total: 64, unit: 'programs', at: 0 })).toBe(
      'grading 17 / 64 programs',
    );
    expect(phaseText({ step: 2, phase: 'grading', at: 0 })).toBe('grading');
  });
});

describe('timing', () => {
  it('has no pace or ETA before a step ended', () => {
    expect(timing(1000, [], 4000, 0, 10)).toEqual({ elapsedMs: 3000, msPerStep: null, etaMs: null });
  });
  it('takes the first step from the start, then only the intervals between step ends', () => {
    // A second into step 2: 4 s left of it, then 9 steps of 5 s.
    expect(timing(0, [{ step: 1, at: 5000 }], 6000, 1, 11)).toEqual({
      elapsedMs: 6000,
      msPerStep: 5000,
      etaMs: 49_000,
    });
    // A slow first step (loading, step-0 evaluation) no longer counts once two steps ended.
    expect(
      timing(
        0,
        [
          { step: 1, at: 9000 },
          { step: 2, at: 10_000 },
          { step: 3, at: 12_000 },
        ],
        12_000,
        3,
        5,
      ),
    ).toEqual({ elapsedMs: 12_000, msPerStep: 1500, etaMs: 3000 });
  });
  it('averages the latest ten steps only', () => {
    const ends = Array.from({ length: 30 }, (_, i) => ({ step: i + 1, at: i < 19 ? i * 100 : 1800 + (i - 18) * 1000 }));
    expect(timing(0, ends, 14_000, 30, 40).msPerStep).toBe(1000);
  });
});

describe('timing with the clock and pauses (issue 40)', () => {
  const ends = [
    { step: 1, at: 1000 },
    { step: 2, at: 2000 },
    { step: 3, at: 3000 },
  ];
  it('counts the ETA down while a step is under way, instead of holding it until the step ends', () => {
    expect(timing(0, ends, 3000, 3, 10).etaMs).toBe(7000);
    expect(timing(0, ends, 3400, 3, 10).etaMs).toBe(6600);
    expect(timing(0, ends, 3900, 3, 10).etaMs).toBe(6100);
  });
  it('lets a step that outlasts the pace slow the pace of the steps after it', () => {
    // Step 4 has run 5 s against a pace of 1 s: the 6 steps after it at (1 + 1 + 5) / 3 s.
    expect(timing(0, ends, 8000, 3, 10).etaMs).toBeCloseTo(6 * (7000 / 3));
    expect(timing(0, ends, 9000, 3, 10).etaMs).toBeGreaterThan(timing(0, ends, 8000, 3, 10).etaMs!);
  });
  it('counts no paused time in the elapsed time, the time per step or the ETA', () => {
    // Paused for 60 s between steps 2 and 3: steps take 1 s all the same.
    const paused = [
      { step: 1, at: 1000 },
      { step: 2, at: 2000 },
      { step: 3, at: 63_000 },
    ];
    const pauses = [{ from: 2100, until: 62_100 }];
    expect(timing(0, paused, 63_000, 3, 10, pauses)).toEqual({ elapsedMs: 3000, msPerStep: 1000, etaMs: 7000 });
    // Still paused: the clock runs on, the elapsed time and the ETA do not.
    const open = [{ from: 3000, until: null }];
    expect(timing(0, ends, 50_000, 3, 10, open)).toEqual(timing(0, ends, 3000, 3, 10));
  });
  it('sums the paused time within an interval', () => {
    expect(
      pausedWithin(
        [
          { from: 10, until: 20 },
          { from: 30, until: null },
        ],
        15,
        40,
      ),
    ).toBe(15);
  });
});

describe('duration', () => {
  it('reads as hours, minutes and seconds', () => {
    expect(duration(12_400)).toBe('12 s');
    expect(duration(185_000)).toBe('3 min 05 s');
    expect(duration(3_720_000)).toBe('1 h 02 min');
  });
});

describe('an ended run: its stored time, the one the runs table shows', () => {
  it('takes the run’s active time and divides it over its steps, with no ETA', () => {
    expect(storedTiming(119_000, 50)).toEqual({ elapsedMs: 119_000, msPerStep: 2380, etaMs: null });
    expect(storedTiming(4_000, 0)).toEqual({ elapsedMs: 4_000, msPerStep: null, etaMs: null });
    expect(storedTiming(undefined, 3)).toBeNull();
  });
});
