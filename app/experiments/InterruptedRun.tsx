/**
 * After a reload or a closed tab, the top of the Experiments page names the run that was cut off
 * mid-run (the latest, when several were) with its Continue button; the runs table below lists
 * them all. Not shown while a run is live in this tab (one run at a time), nor for the run the
 * dashboard already shows (it offers Continue itself).
 */
import { useQuery } from '@tanstack/react-query';
import { useShallow } from 'zustand/react/shallow';
import { runsQuery } from '../queries/experiments';
import { runLabel } from '../shared/runs-table';
import { useRunStore } from '../state/live-run';
import { continueLabel, isContinuable } from './continuable';
import { useContinueRun } from './continue-run';

export function InterruptedRun() {
  const runs = useQuery(runsQuery());
  const { current, live } = useRunStore(
    useShallow((s) => ({ current: s.runId, live: s.status === 'running' || s.status === 'paused' })),
  );
  const { go, refused } = useContinueRun();
  const cut = (runs.data ?? [])
    .filter((r) => r.status === 'interrupted' && isContinuable(r))
    .sort((a, b) => b.createdAt - a.createdAt);
  const r = cut[0];
  if (!r || live || r.runId === current) return null;
  return (
    <section aria-labelledby="interrupted-title" className="notice" data-testid="interrupted-run">
      <h2 id="interrupted-title">Interrupted run</h2>
      <p>
        <strong>{runLabel(r)}</strong> (run {r.runId}) was cut off at step {r.lastStep} of {r.options.steps}, when its
        page closed or reloaded mid-run. It continues from its checkpoint at step {r.checkpointStep}, under the same id.{' '}
        <button type="button" onClick={() => go(r)} aria-label={continueLabel(r)}>
          Continue from step {r.checkpointStep}
        </button>
      </p>
      {cut.length > 1 && (
        <p>
          {cut.length - 1} more interrupted run{cut.length > 2 ? 's are' : ' is'} in the runs table below.
        </p>
      )}
      {refused && (
        <p role="alert" className="bad">
          Could not continue: {refused}
        </p>
      )}
    </section>
  );
}
