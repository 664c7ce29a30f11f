/**
 * The journaled episodes of one step as a table: index, group and sample, task prompt and answer,
 * status, termination, reward, turns, policy version, whether it was trained on, whether its group
 * was aborted, whether a journal record of it is corrupt, and turns restored from the journal.
 * Filters by status, termination and reward (labelled selects) with a count; each row opens its
 * episode. Filtering is episodes.ts `filterEpisodes`; the view owns which episode is open.
 */
import { useMemo, useState } from 'react';
import type { EpisodeStatusName, EpisodeSummary } from '../../worker/protocol';
import {
  ALL_EPISODES,
  REWARD_FILTERS,
  countText,
  filterChoices,
  filterEpisodes,
  NOT_TRAINED_HERE,
  policyVersionText,
  type EpisodeFilter,
  type RewardFilter,
} from '../shared/episodes';

const yes = (v: boolean, word: string) =>
  v ? <span className="flag">{word}</span> : <span className="muted">no</span>;

function Filters({
  filter,
  set,
  episodes,
}: {
  filter: EpisodeFilter;
  set: (f: EpisodeFilter) => void;
  episodes: readonly EpisodeSummary[];
}) {
  const { statuses, terminations } = useMemo(() => filterChoices(episodes), [episodes]);
  return (
    <div className="controls" role="group" aria-label="Filter episodes">
      <label>
        Status{' '}
        <select
          value={filter.status}
          onChange={(e) => set({ ...filter, status: e.target.value as EpisodeStatusName | 'all' })}
        >
          <option value="all">all</option>
          {statuses.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Termination{' '}
        <select value={filter.termination} onChange={(e) => set({ ...filter, termination: e.target.value })}>
          <option value="all">all</option>
          {terminations.map((t) => (
            <option key={t} value={t}>
              {t || 'none recorded'}
            </option>
          ))}
        </select>
      </label>
      <label>
        Reward{' '}
        <select value={filter.reward} onChange={(e) => set({ ...filter, reward: e.target.value as RewardFilter })}>
          {Object.entries(REWARD_FILTERS).map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

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
  const shown = useMemo(() => filterEpisodes(episodes, filter), [episodes, filter]);
  return (
    <>
      <Filters filter={filter} set={setFilter} episodes={episodes} />
      <p role="status" data-testid="episode-count">
        {countText(shown.length, episodes.length)}
      </p>
      <table className="episodes-table">
        <caption>Episodes of step {step}</caption>
        <thead>
          <tr>
            <th scope="col">Episode</th>
            <th scope="col">Group / sample</th>
            <th scope="col">Task</th>
            <th scope="col">Status</th>
            <th scope="col">Termination</th>
            <th scope="col" className="num">
              Reward
            </th>
            <th scope="col" className="num">
              Turns
            </th>
            <th scope="col" className="num">
              Policy version
            </th>
            <th scope="col">Trained</th>
            <th scope="col">Group aborted</th>
            <th scope="col">Corrupt</th>
            <th scope="col" className="num">
              Resumed turns
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e) => (
            <tr key={e.index} data-testid="episode-row" aria-current={e.index === open ? 'true' : undefined}>
              <th scope="row">
                <button
                  type="button"
                  className="link-button"
                  onClick={() => onOpen(e.index)}
                  aria-label={`Open episode ${e.index}`}
                >
                  {e.index}
                </button>
              </th>
              <td>
                {e.group} / {e.sample}
              </td>
              <td>
                <code>{e.task.prompt}</code> → <code>{e.task.answer}</code>
              </td>
              <td className={e.status === 'completed' ? undefined : 'bad'}>{e.status}</td>
              <td>{e.termination ?? '—'}</td>
              <td className="num">{e.reward ?? 'unscored'}</td>
              <td className="num">{e.turns}</td>
              <td className="num">{policyVersionText(e.policyVersion, imported)}</td>
              <td>{imported ? NOT_TRAINED_HERE : e.trained ? 'yes' : <span className="muted">no</span>}</td>
              <td>{yes(e.groupAborted, 'group aborted')}</td>
              <td>{yes(e.corrupt, 'corrupt')}</td>
              <td className="num">{e.resumedTurns}</td>
            </tr>
          ))}
          {shown.length === 0 && (
            <tr>
              <td colSpan={12}>No episode matches the filters.</td>
            </tr>
          )}
        </tbody>
      </table>
    </>
  );
}
