/**
 * The Episodes list's filters: the outcome (episode-outcome.ts) as a radio group with each
 * outcome's count, then status, termination and reward as labelled selects (episodes.ts). The
 * list owns their state.
 */
import { useId, useMemo } from 'react';
import type { EpisodeStatusName, EpisodeSummary } from '../../worker/protocol';
import { REWARD_FILTERS, filterChoices, type EpisodeFilter, type RewardFilter } from '../shared/episodes';
import { OUTCOMES, OUTCOME_HELP, outcomeCounts, type OutcomeFilter } from './episode-outcome';

export function OutcomeFilterGroup({
  value,
  set,
  episodes,
}: {
  value: OutcomeFilter;
  set: (f: OutcomeFilter) => void;
  episodes: readonly EpisodeSummary[];
}) {
  const counts = useMemo(() => outcomeCounts(episodes), [episodes]);
  const name = useId();
  // 'unfinished' only when some episode is still running; the others always, so the choices stay put.
  const choices = OUTCOMES.filter((o) => o !== 'unfinished' || counts[o] > 0);
  return (
    <fieldset className="outcome-filter" data-testid="outcome-filter">
      <legend>Outcome</legend>
      <label>
        <input type="radio" name={name} value="all" checked={value === 'all'} onChange={() => set('all')} />
        all ({episodes.length})
      </label>
      {choices.map((o) => (
        <label key={o} title={OUTCOME_HELP[o]}>
          <input type="radio" name={name} value={o} checked={value === o} onChange={() => set(o)} />
          {o} ({counts[o]})
        </label>
      ))}
    </fieldset>
  );
}

export function Filters({
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
