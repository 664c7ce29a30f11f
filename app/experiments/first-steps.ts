/**
 * The first-visit guide's content from the presets' own entries (worker/presets/table.ts `speed`
 * and `firstStep`): which presets to try first and why, and how long each one's default run takes.
 * Every figure is quoted from README.md, measured there on a 2-core machine without a GPU (the wasm
 * backend, which `auto` picks on such a machine); a preset the README gives no time for has none,
 * and the guide shows no time for it rather than an estimate. Pure: FirstVisitGuide.tsx renders it.
 */
import type { PresetInfo, PresetSpeed } from '../../worker/protocol';

/** The presets the guide suggests first, in order, with what each shows. */
export function firstSteps(presets: readonly PresetInfo[]): { p: PresetInfo; why: string }[] {
  return presets
    .flatMap((p) => (p.firstStep ? [{ p, ...p.firstStep }] : []))
    .sort((a, b) => a.rank - b.rank)
    .map(({ p, why }) => ({ p, why }));
}

/**
 * The preset a first visit's form shows: the one shown last when there is one, else the guide's
 * first suggestion (so the form and the guide agree), else the table's first.
 */
export function startingPreset(presets: readonly PresetInfo[], last: string | undefined): PresetInfo | undefined {
  return presets.find((p) => p.name === last) ?? firstSteps(presets)[0]?.p ?? presets[0];
}

/** Seconds in words: "26 s" under 90 s, "1.6 min" above. A range takes the unit of its upper end. */
export function secondsText(lo: number, hi: number): string {
  if (hi < 90) {
    const [a, b] = [Math.round(lo), Math.round(hi)];
    return a === b ? `${b} s` : `${a}–${b} s`;
  }
  const [a, b] = [(lo / 60).toFixed(1), (hi / 60).toFixed(1)];
  return a === b ? `${b} min` : `${a}–${b} min`;
}

/** How long a run of `steps` takes at a measured speed, in words; null when there is no figure. */
export function timeText(speed: PresetSpeed | undefined, steps: number): string | null {
  if (!speed) return null;
  if ('run' in speed)
    return `about ${secondsText(speed.run.seconds, speed.run.seconds)} for ${speed.run.steps} steps (${speed.run.what})`;
  const [lo, hi] = speed.perStep;
  const per = lo === hi ? `${lo} s` : `${lo}–${hi} s`;
  return `${steps} steps × ${per} ≈ ${secondsText(steps * lo, steps * hi)}`;
}
