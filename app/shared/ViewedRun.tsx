/**
 * Which run the Groups and Batch views show: `useShownRun` resolves the shared pick
 * (app/state/viewed-run.ts; null follows the live or opened run) against the stored runs, and
 * `RunPicker` is its labelled select; `RunStepHeading` names the run and the step on screen. Not
 * the Experiments runs table: picking here opens nothing in the dashboard.
 */
import { useQuery } from '@tanstack/react-query';
import type { RunSummary } from '../../worker/protocol';
import { runsQuery } from '../queries/experiments';
import { runLabel } from './runs-table';
import { useRunStore } from '../state/live-run';
import { useViewedRun } from '../state/viewed-run';

export interface ShownRun {
  /** The run on screen: the picked one, else the live one; null when there is neither. */
  runId: string | null;
  /** It is the live (or opened) run of the dashboard. */
  live: boolean;
  /** `name ?? runId`. */
  name: string;
  /** Its planned steps; null while unknown. */
  totalSteps: number | null;
  /** Its last step as far as this tab knows (keys the stored-steps query, so it refreshes as a live run goes). */
  latestStep: number;
  liveRunId: string | null;
  /** The stored runs, the live one first when the store does not list it yet. */
  runs: RunSummary[];
}

export function useShownRun(): ShownRun {
  const liveRunId = useRunStore((s) => s.runId);
  const liveTotal = useRunStore((s) => s.totalSteps);
  const liveLatest = useRunStore((s) => s.steps.at(-1)?.step ?? 0);
  const picked = useViewedRun((s) => s.runId);
  const stored = useQuery(runsQuery()).data ?? [];
  const runId = picked ?? liveRunId;
  const live = runId !== null && runId === liveRunId;
  const summary = stored.find((r) => r.runId === runId);
  return {
    runId,
    live,
    name: summary ? runLabel(summary) : (runId ?? ''),
    totalSteps: live ? liveTotal : (summary?.options.steps ?? null),
    latestStep: live ? liveLatest : (summary?.lastStep ?? 0),
    liveRunId,
    runs: stored,
  };
}

/** A labelled select of the stored runs; picking the live run goes back to following it. */
function RunPicker({ shown }: { shown: ShownRun }) {
  const view = useViewedRun((s) => s.view);
  const listed = shown.runs.some((r) => r.runId === shown.liveRunId) || shown.liveRunId === null;
  const options: Pick<RunSummary, 'runId' | 'name'>[] = listed
    ? shown.runs
    : [{ runId: shown.liveRunId! }, ...shown.runs];
  if (!options.length) return null;
  return (
    <label>
      Run{' '}
      <select
        value={shown.runId ?? ''}
        onChange={(e) => view(e.target.value === shown.liveRunId || e.target.value === '' ? null : e.target.value)}
      >
        {shown.runId === null && <option value="">none open</option>}
        {options.map((r) => (
          <option key={r.runId} value={r.runId}>
            {runLabel(r)}
            {r.runId === shown.liveRunId ? ' (current)' : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A view's title and its run picker, shown whether or not a run is open. */
export function ViewTitle({ id, title, shown }: { id: string; title: string; shown: ShownRun }) {
  return (
    <>
      <h1 id={id}>{title}</h1>
      <div className="controls">
        <RunPicker shown={shown} />
      </div>
    </>
  );
}

/** "Run <name> · step 12 of 150": what the view shows. */
export function RunStepHeading({ shown, step }: { shown: ShownRun; step: number | null }) {
  return (
    <h2 className="viewed-run">
      Run {shown.name}
      {step !== null && ` · step ${step}${shown.totalSteps ? ` of ${shown.totalSteps}` : ''}`}
      {!shown.live && <small> (a stored run, not the current one)</small>}
    </h2>
  );
}
