/**
 * Which presets journal multi-turn episodes, read from the worker's preset table (PresetInfo): those
 * whose views include Episodes, in the table's order. The Episodes view names them in its empty
 * states, so a preset added to the table is named without an edit here. Pure; not the journal itself
 * (worker/episodes/journal.ts).
 */
import type { PresetInfo } from '../../worker/protocol';

/** The names of the presets whose runs journal episodes (their views include Episodes). */
export function episodePresetNames(presets: readonly Pick<PresetInfo, 'name' | 'views'>[]): string[] {
  return presets.filter((p) => p.views.includes('Episodes')).map((p) => p.name);
}

/** Names as words: `a`, `a or b`, `a, b or c` (`and` when asked). */
export function listText(names: readonly string[], conjunction: 'and' | 'or'): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} ${conjunction} ${names.at(-1)}`;
}

/** The presets that journal episodes as words, or 'multi-turn' while the presets load (or when none do). */
export function episodePresetsText(
  presets: readonly Pick<PresetInfo, 'name' | 'views'>[] | undefined,
  conjunction: 'and' | 'or',
): string {
  const names = episodePresetNames(presets ?? []);
  return names.length ? listText(names, conjunction) : 'multi-turn';
}
