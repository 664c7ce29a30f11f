/**
 * Which keys the "All metrics" explorer plots: the ones chosen that the shown run reported, else
 * the first default it has, else its first key. A choice made on another run (loss/sft, then a
 * GRPO run opened) never leaves the chart plotting keys this run does not have.
 */
export function shownSelection(chosen: string[] | null, keys: string[], defaults: string[]): string[] {
  const kept = (chosen ?? []).filter((k) => keys.includes(k));
  if (kept.length > 0) return kept;
  const fallback = defaults.find((k) => keys.includes(k)) ?? keys[0];
  return fallback === undefined ? [] : [fallback];
}
