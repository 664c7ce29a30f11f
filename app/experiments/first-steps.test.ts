import { describe, expect, it } from 'vitest';
import type { PresetInfo, PresetSpeed } from '../../worker/protocol';
import { firstSteps, secondsText, startingPreset, timeText } from './first-steps';

// The table's figures (worker/presets/speed.test.ts checks each is quoted from the README).
const SPEEDS: Record<string, PresetSpeed> = {
  'grpo-arith': { perStep: [0.17, 0.17], source: 'README' },
  'ppo-arith': { perStep: [0.52, 0.63], source: 'README' },
  'grpo-code': { perStep: [3, 4], source: 'README' },
  'flowgrpo-2d': { run: { steps: 200, seconds: 15, what: 'pretraining included' }, source: 'README' },
};
const info = (name: string, firstStep?: PresetInfo['firstStep']) =>
  ({ name, speed: SPEEDS[name], ...(firstStep ? { firstStep } : {}) }) as PresetInfo;

describe('timeText', () => {
  it("multiplies the default steps by the preset's measured seconds per step", () => {
    expect(timeText(info('grpo-arith').speed, 150)).toBe('150 steps × 0.17 s ≈ 26 s');
    expect(timeText(info('ppo-arith').speed, 150)).toBe('150 steps × 0.52–0.63 s ≈ 1.3–1.6 min');
    expect(timeText(info('grpo-code').speed, 150)).toBe('150 steps × 3–4 s ≈ 7.5–10.0 min');
    expect(timeText(info('grpo-arith').speed, 20)).toBe('20 steps × 0.17 s ≈ 3 s');
  });

  it('gives a run measured whole as it was measured', () => {
    expect(timeText(info('flowgrpo-2d').speed, 200)).toBe('about 15 s for 200 steps (pretraining included)');
  });

  it('gives no time for a preset the README has no figure for', () => {
    for (const preset of ['sft-arith', 'dpo-arith', 'grpo-guess']) expect(timeText(info(preset).speed, 150)).toBeNull();
  });
});

describe('secondsText', () => {
  it('says seconds under 90 s and minutes from there, a range in the unit of its upper end', () => {
    expect(secondsText(25.5, 25.5)).toBe('26 s');
    expect(secondsText(78, 94.5)).toBe('1.3–1.6 min');
    expect(secondsText(10, 20)).toBe('10–20 s');
    expect(secondsText(600, 600)).toBe('10.0 min');
  });
});

describe('firstSteps', () => {
  it('lists the presets with a first step by rank, with what each shows', () => {
    const presets = [
      info('ppo-arith', { rank: 3, why: 'c' }),
      info('sft-arith'),
      info('grpo-arith', { rank: 1, why: 'a' }),
    ];
    expect(firstSteps(presets).map(({ p, why }) => [p.name, why])).toEqual([
      ['grpo-arith', 'a'],
      ['ppo-arith', 'c'],
    ]);
  });
});

describe('startingPreset', () => {
  // The table's order: sft-arith first, the guide's first suggestion second.
  const presets = [
    info('sft-arith'),
    info('grpo-arith', { rank: 1, why: 'a' }),
    info('ppo-arith', { rank: 3, why: 'c' }),
  ];
  it("shows on a first visit the guide's first suggestion, not the table's first preset", () => {
    expect(startingPreset(presets, undefined)?.name).toBe('grpo-arith');
  });
  it('shows the preset shown last, and the first preset when none has a first step', () => {
    expect(startingPreset(presets, 'ppo-arith')?.name).toBe('ppo-arith');
    expect(startingPreset(presets, 'gone')?.name).toBe('grpo-arith');
    expect(startingPreset([info('sft-arith'), info('dpo-arith')], undefined)?.name).toBe('sft-arith');
  });
});
