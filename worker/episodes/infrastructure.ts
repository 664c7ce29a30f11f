/**
 * When the environment fails and the model is not to blame: the episodes of a batch (or of a wave of
 * a held-out evaluation) that ended as infrastructure failures (status `error`: the program exited,
 * missed its deadline, wrote a line that is not a JSON reply, answered with its own error, or the
 * companion refused a request). Counted here, and past the run's `envErrorLimit` turned into the
 * run's failure (`EnvironmentBroken`), whose message names the share, the first failing episode's
 * detail (the failure's kind and the program's own words) and the last lines of its stderr: a
 * person who wrote a broken program reads why at once, instead of a green run at 0%.
 *
 * Not the rollout (rollout.ts ends each episode and says why) and not the run loop (which stores
 * the failure as the run's message).
 */
import type { CollectedEpisode } from './rollout';

/** The share of a batch's episodes that may fail for the infrastructure before the run stops, when a run names none. */
export const ENV_ERROR_LIMIT_DEFAULT = 0.5;

/** How many of stderr's last lines a failure's message quotes. */
const STDERR_LINES = 8;

/**
 * A run stopped because its environment failed (too many infrastructure failures in one batch):
 * the message says why in the person's words; `episode` is the first failing episode when the
 * journal holds it (a training step's episode that got past its reset), for a link to it.
 */
export class EnvironmentBroken extends Error {
  override readonly name = 'EnvironmentBroken';
  constructor(
    message: string,
    readonly episode: { step: number; index: number } | null,
  ) {
    super(message);
  }
}

/** Infrastructure failures among `episodes`: how many, and the first (in episode order). */
export function infraFailures(episodes: readonly CollectedEpisode[]): {
  failed: number;
  total: number;
  first: CollectedEpisode | null;
} {
  const failed = episodes.filter((e) => e.episode.status === 'error');
  return { failed: failed.length, total: episodes.length, first: failed[0] ?? null };
}

/** The last STDERR_LINES lines of `stderr`, indented under a heading; '' when there is none. */
export function stderrLines(stderr: string | undefined): string {
  const lines = (stderr ?? '').trimEnd().split('\n');
  if (lines.length === 1 && lines[0] === '') return '';
  const shown = lines.slice(-STDERR_LINES);
  const cut = lines.length > shown.length ? ` (its last ${shown.length} lines)` : '';
  return `\nthe program's stderr${cut}:\n${shown.map((l) => `  ${l}`).join('\n')}`;
}

/**
 * Throws EnvironmentBroken when the share of `episodes` that failed for the infrastructure reaches
 * `limit` (1: only when every one failed). `where` names the batch in words ("step 3", "the held-out
 * evaluation before step 1"); `journaledStep`, the step the episodes are journaled under (null: not
 * journaled, so no link to them).
 */
export function checkInfrastructure(
  episodes: readonly CollectedEpisode[],
  limit: number,
  where: string,
  journaledStep: number | null,
): void {
  const { failed, total, first } = infraFailures(episodes);
  if (total === 0 || !first || failed / total < limit) return;
  const share = failed === total ? `all ${total}` : `${failed} of ${total}`;
  const stop =
    failed === total
      ? ''
      : ` (at least ${Math.round(limit * 100)}% of a batch stops the run: the option envErrorLimit)`;
  // Only an episode that got past its reset has journal records to open.
  const journaled = journaledStep !== null && first.episode.initial !== null;
  throw new EnvironmentBroken(
    `the environment failed on ${share} episodes of ${where}${stop}. ` +
      `The first, episode ${first.index} (task ${first.task.id}): ${first.episode.detail ?? 'no detail'}` +
      stderrLines(first.stderr),
    journaled ? { step: journaledStep, index: first.index } : null,
  );
}

/**
 * The commonest detail among failures, with task ids and step numbers taken out so the same fault
 * on different tasks counts as one, and how many had it; null when there are none.
 */
export function commonestFailure(
  failures: readonly { task: string; detail?: string }[],
): { detail: string; count: number } | null {
  const counts = new Map<string, number>();
  for (const f of failures) {
    const detail = (f.detail ?? 'no detail')
      .split(`task ${f.task}`)
      .join('a task')
      .replace(/\bstep \d+/g, 'a step');
    counts.set(detail, (counts.get(detail) ?? 0) + 1);
  }
  let best: { detail: string; count: number } | null = null;
  for (const [detail, count] of counts) if (!best || count > best.count) best = { detail, count };
  return best;
}
