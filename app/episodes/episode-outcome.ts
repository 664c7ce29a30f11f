/**
 * An episode's outcome, the Episodes view's main filter, read from what a stored episode has
 * (contract/records.ts `EpisodeSummary`: its status, termination, reward and corrupt flag):
 *
 * - success: completed with the full reward (≥ 1: the environments score 1 for a solved task,
 *   grpo-code the fraction of its cases that pass);
 * - failure: completed with less (a wrong answer, a program failing some case), or unscored;
 * - truncated: ran out of turns, prompt or response ids, or time (`max_turns`, `timeout`, …):
 *   the agent's doing, scored 0 or masked by the truncation rule;
 * - error: an environment or sandbox failure (`sandbox_error`, `env_error`, …), a cancelled
 *   episode (its group aborted, the run stopped) or a journal record that failed its checksum:
 *   not the agent's doing, never trained on;
 * - unfinished: still running (no final record).
 *
 * Also the task's prompt cut to one short line for the list. No React; tested in
 * episode-outcome.test.ts.
 */
import type { EpisodeSummary } from '../../worker/protocol';

export const OUTCOMES = ['success', 'failure', 'truncated', 'error', 'unfinished'] as const;
type EpisodeOutcome = (typeof OUTCOMES)[number];
export type OutcomeFilter = EpisodeOutcome | 'all';

/** What each outcome covers, for the filter's description. */
export const OUTCOME_HELP: Record<EpisodeOutcome, string> = {
  success: 'completed with the full reward',
  failure: 'completed with less than the full reward',
  truncated: 'ran out of turns, ids or time',
  error: 'environment or sandbox error, cancelled, or a corrupt journal record',
  unfinished: 'still running',
};

type Outcome = Pick<EpisodeSummary, 'status' | 'reward' | 'corrupt'>;

export function episodeOutcome(e: Outcome): EpisodeOutcome {
  if (e.corrupt) return 'error';
  switch (e.status) {
    case 'completed':
      return e.reward !== null && e.reward >= 1 ? 'success' : 'failure';
    case 'truncated':
      return 'truncated';
    case 'error':
    case 'cancelled':
      return 'error';
    case 'running':
      return 'unfinished';
  }
}

/** What caused a truncation or an error: the termination, "cancelled" or "corrupt journal record"; undefined otherwise. */
export function outcomeCause(e: Outcome & Pick<EpisodeSummary, 'termination'>): string | undefined {
  const outcome = episodeOutcome(e);
  if (e.corrupt) return 'corrupt journal record';
  if (outcome === 'error' && e.status === 'cancelled') return 'cancelled';
  return outcome === 'truncated' || outcome === 'error' ? e.termination : undefined;
}

/** The outcome with what caused it: "truncated (max_turns)", "error (cancelled)", "error (corrupt journal record)". */
export function outcomeText(e: Outcome & Pick<EpisodeSummary, 'termination'>): string {
  const why = outcomeCause(e);
  return why ? `${episodeOutcome(e)} (${why})` : episodeOutcome(e);
}

export function filterByOutcome<T extends Outcome>(list: readonly T[], f: OutcomeFilter): T[] {
  return f === 'all' ? [...list] : list.filter((e) => episodeOutcome(e) === f);
}

/** How many episodes have each outcome. */
export function outcomeCounts(list: readonly Outcome[]): Record<EpisodeOutcome, number> {
  const n = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<EpisodeOutcome, number>;
  for (const e of list) n[episodeOutcome(e)]++;
  return n;
}

/**
 * A task's prompt on one short line for the list: whitespace runs as one space, cut at `max`
 * characters (never inside a character) with "…". `cut` says whether anything was left out.
 */
export function shortText(text: string, max = 40): { text: string; cut: boolean } {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  if (chars.length <= max) return { text: flat, cut: flat !== text };
  return { text: `${chars.slice(0, Math.max(1, max - 1)).join('')}…`, cut: true };
}
