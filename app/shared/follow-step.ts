/**
 * Which step a view of a run's stored steps shows (Groups, Batch, Flow), and what stays on screen
 * while the next one loads: pure functions; use-follow-step.ts is the hooks around them.
 *
 * A view follows the run's latest stored step until a person pins one. A live run stores a step
 * every fraction of a second, and the worker answers a read between its steps, so a read keyed by
 * the latest step was often still loading when the next step changed its key: the view showed
 * nothing (issue 40, item 1). The newest answer already read for the same run stays on screen
 * instead, with the step it belongs to, until the next one arrives.
 */

/** A step a person picked, of the run it was picked on (another run on screen follows its latest step). */
export interface Pin {
  runId: string;
  step: number;
}

/** The pinned step when it is of this run, else the run's latest stored step; null before any. */
export function followedStep(available: readonly number[], pin: Pin | null, runId: string | null): number | null {
  if (pin && pin.runId === runId) return pin.step;
  return available.at(-1) ?? null;
}

/** A cached answer: its query key (a step, or the latest step it was asked at, last) and its data. */
export type Cached<T> = readonly [readonly unknown[], T | undefined];

/**
 * The answer with the greatest step (the key's last element) among `entries` of keys as long as
 * `key` that have data, at most `atMost`; null when none has. Keys of another length (a query
 * nested under this one's prefix, as an episode under its step) are not this query's answers.
 */
export function newestCached<T>(
  entries: readonly Cached<T>[],
  length: number,
  atMost = Infinity,
): { step: number; data: T } | null {
  let best: { step: number; data: T } | null = null;
  for (const [key, data] of entries) {
    const step = key.at(-1);
    if (key.length !== length || data === undefined || typeof step !== 'number' || step > atMost) continue;
    if (!best || step > best.step) best = { step, data };
  }
  return best;
}
