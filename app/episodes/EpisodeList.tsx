/**
 * The journaled episodes of one step as a table: index, the task (its prompt and answer on one
 * short line; the full text with its group and sample in the cell's tooltip and the Open button's
 * description), outcome (episode-outcome.ts: success, failure, truncated, error, with what caused
 * it), reward, turns, whether it was trained on, and notes (group aborted, corrupt record, turns
 * restored from the journal); group, sample, policy version and the rest are in the opened episode
 * (EpisodePanel), which the view shows beside the list. Filters by outcome (a radio group with
 * counts), status, termination and reward (labelled selects), with a count; each row opens its
 * episode. Filtering is episodes.ts `filterEpisodes` and episode-outcome.ts `filterByOutcome`, the
 * controls EpisodeFilters.tsx; the view owns which episode is open.
 */
import { useId, useMemo, useState } from 'react';
import type { EpisodeSummary } from '../../worker/protocol';
import { ALL_EPISODES, countText, filterEpisodes, NOT_TRAINED_HERE, type EpisodeFilter } from '../shared/episodes';
import { episodeOutcome, filterByOutcome, outcomeCause, shortText, type OutcomeFilter } from './episode-outcome';
import { Filters, OutcomeFilterGroup } from './EpisodeFilters';

export function EpisodeList({
  step,
  episodes,
  open,
  onOpen,
  imported = false,
}: {
  step: number;
  episodes: readonly EpisodeSummary[];
  open: number | null;
  onOpen: (index: number) => void;
  /** The run was imported (verl rollouts): not trained here, so no policy version or update of ours applies. */
  imported?: boolean;
}) {
  const [filter, setFilter] = useState<EpisodeFilter>(ALL_EPISODES);
  const [outcome, setOutcome] = useState<OutcomeFilter>('all');
  const shown = useMemo(() => filterByOutcome(filterEpisodes(episodes, filter), outcome), [episodes, filter, outcome]);
  const ids = useId();
  return (
    <>
      <OutcomeFilterGroup value={outcome} set={setOutcome} episodes={episodes} />
      <Filters filter={filter} set={setFilter} episodes={episodes} />
      <p role="status" data-testid="episode-count">
        {countText(shown.length, episodes.length)}
      </p>
      <div className="episodes-scroll" role="region" aria-label={`Episodes of step ${step}`} tabIndex={0}>
        <table className="episodes-table">
          <caption>Episodes of step {step}</caption>
          <thead>
            <tr>
              <th scope="col">Episode</th>
              <th scope="col">Task</th>
              <th scope="col">Outcome</th>
              <th scope="col" className="num">
                Reward
              </th>
              <th scope="col" className="num">
                Turns
              </th>
              <th scope="col">Trained</th>
              <th scope="col">Notes</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => {
              const prompt = shortText(e.task.prompt);
              const answer = shortText(e.task.answer, 16);
              const full = `${e.task.prompt} → ${e.task.answer} (group ${e.group}, sample ${e.sample})`;
              const taskId = `${ids}-task-${e.index}`;
              const good = episodeOutcome(e) === 'success';
              return (
                <tr key={e.index} data-testid="episode-row" aria-current={e.index === open ? 'true' : undefined}>
                  <th scope="row">
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => onOpen(e.index)}
                      aria-label={`Open episode ${e.index}`}
                      aria-describedby={taskId}
                      data-episode={e.index}
                    >
                      {e.index}
                    </button>
                  </th>
                  <td className="episode-task" title={full} data-testid="episode-task">
                    <code>{prompt.text}</code> → <code>{answer.text}</code>
                    <span id={taskId} hidden>
                      Task: {full}
                    </span>
                  </td>
                  <td className={good ? 'ok' : 'bad'} data-testid="episode-outcome">
                    {episodeOutcome(e)}
                    {outcomeCause(e) && <small className="outcome-cause"> ({outcomeCause(e)})</small>}
                  </td>
                  <td className="num">{e.reward ?? 'unscored'}</td>
                  <td className="num">{e.turns}</td>
                  <td>{imported ? NOT_TRAINED_HERE : e.trained ? 'yes' : <span className="muted">no</span>}</td>
                  <td>
                    <Notes e={e} />
                  </td>
                </tr>
              );
            })}
            {shown.length === 0 && (
              <tr>
                <td colSpan={7}>No episode matches the filters.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** What else to know of an episode at a glance: its group aborted, a corrupt record, turns restored from the journal. */
function Notes({ e }: { e: EpisodeSummary }) {
  const notes = [
    e.groupAborted && 'group aborted',
    e.corrupt && 'corrupt',
    e.resumedTurns > 0 &&
      `${e.resumedTurns} turn${e.resumedTurns === 1 ? '' : 's'} restored${e.resumedBy ? ` (by ${e.resumedBy})` : ''}`,
  ].filter((n): n is string => Boolean(n));
  if (!notes.length) return <span className="muted">—</span>;
  return <span className="flag">{notes.join(' · ')}</span>;
}
