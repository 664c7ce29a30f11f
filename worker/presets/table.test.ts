/** Invariants of the preset table that the app relies on when it reads the entries (PresetInfo). */
import { describe, expect, it } from 'vitest';
import { PRESET_INFOS, PRESETS } from './table';

describe('the preset table', () => {
  // The Episodes view names the presets that journal episodes by their views (app/episodes/episode-presets.ts).
  it('offers the Episodes view exactly on the presets whose runs journal episodes (an episode config)', () => {
    const journaling = PRESETS.filter((p) => p.episodes !== undefined).map((p) => p.name);
    const offering = PRESET_INFOS.filter((p) => p.views.includes('Episodes')).map((p) => p.name);
    expect(offering).toEqual(journaling);
    expect(offering).toEqual(['grpo-calc', 'grpo-guess', 'grpo-code', 'grpo-env', 'ppo-calc', 'ppo-env']);
  });
});
