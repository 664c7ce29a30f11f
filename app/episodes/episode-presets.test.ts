import { describe, expect, it } from 'vitest';
import type { PresetInfo, PresetView } from '../../worker/protocol';
import { episodePresetNames, episodePresetsText, listText } from './episode-presets';

// The views of worker/presets/table.ts's entries (worker/presets/table.test.ts checks that the journaling ones offer Episodes).
const TABLE: Pick<PresetInfo, 'name' | 'views'>[] = (
  [
    ['sft-arith', []],
    ['grpo-arith', ['Groups', 'Batch']],
    ['grpo-calc', ['Groups', 'Batch', 'Episodes']],
    ['grpo-guess', ['Groups', 'Batch', 'Episodes']],
    ['grpo-code', ['Groups', 'Batch', 'Episodes']],
    ['grpo-env', ['Groups', 'Batch', 'Episodes']],
    ['ppo-arith', ['Groups', 'Batch']],
    ['ppo-calc', ['Groups', 'Batch', 'Episodes']],
    ['ppo-env', ['Groups', 'Batch', 'Episodes']],
    ['dpo-arith', ['Groups']],
    ['flowgrpo-2d', ['Flow']],
  ] as [string, PresetView[]][]
).map(([name, views]) => ({ name, views }) as Pick<PresetInfo, 'name' | 'views'>);

describe('episodePresetNames', () => {
  it('names every preset whose views include Episodes, in the table order', () => {
    expect(episodePresetNames(TABLE)).toEqual([
      'grpo-calc',
      'grpo-guess',
      'grpo-code',
      'grpo-env',
      'ppo-calc',
      'ppo-env',
    ]);
  });
});

describe('episodePresetsText', () => {
  it('lists them in words with the conjunction asked for', () => {
    expect(episodePresetsText(TABLE, 'or')).toBe('grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-calc or ppo-env');
    expect(episodePresetsText(TABLE, 'and')).toBe('grpo-calc, grpo-guess, grpo-code, grpo-env, ppo-calc and ppo-env');
  });
  it("says 'multi-turn' while the presets load", () => {
    expect(episodePresetsText(undefined, 'or')).toBe('multi-turn');
  });
  it('joins one or two names without a comma', () => {
    expect([listText(['a'], 'or'), listText(['a', 'b'], 'and'), listText([], 'or')]).toEqual(['a', 'a and b', '']);
  });
});
