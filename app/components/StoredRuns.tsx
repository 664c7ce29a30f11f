/**
 * Runs stored by the worker (IndexedDB: they survive a reload), newest first, each with its status
 * and last committed step; Open shows one in the live view, Groups and Batch; Continue goes on
 * from the last checkpoint of a stopped, failed or interrupted (tab closed mid-run) run; a run live
 * in another tab of this origin shows as such and cannot be continued here.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { RunSummary } from '../../worker/protocol';
import { continueRun, openStoredRun, runsQuery, storageQuery } from '../queries/experiments';
import { keys } from '../queries/keys';
import { useRunStore } from '../state/run-store';

export function StoredRuns() {
  const runs = useQuery(runsQuery());
  const storage = useQuery(storageQuery());
  const client = useQueryClient();
  const status = useRunStore((s) => s.status);
  const lastStep = useRunStore((s) => s.steps.at(-1)?.step ?? 0);
  const current = useRunStore((s) => s.runId);
  const [refused, setRefused] = useState<string | null>(null);
  const live = status === 'running' || status === 'paused';
  const continuable = (r: RunSummary) => (r.status === 'stopped' || r.status === 'failed' || r.status === 'interrupted') && r.checkpointStep !== undefined;
  const onContinue = async (r: RunSummary) => {
    setRefused(null);
    try {
      setRefused(await continueRun(r));
    } catch (e) {
      const err = e as Error;
      setRefused(`${err.name}: ${err.message}`);
    }
    void client.invalidateQueries({ queryKey: keys.runs() });
  };
  useEffect(() => {
    void client.invalidateQueries({ queryKey: keys.runs() });
  }, [client, status, lastStep]);
  if (!runs.data?.length) return null;
  return (
    <section aria-labelledby="stored-title">
      <h2 id="stored-title">Stored runs</h2>
      <p>{storage.data === 'indexeddb' ? 'Kept in this browser (IndexedDB): they survive a reload.' : 'Kept in memory: a reload loses them.'}</p>
      <table data-testid="stored-runs">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Preset</th>
            <th scope="col">Status</th>
            <th scope="col">Steps</th>
            <th scope="col">Started</th>
            <th scope="col">
              <span className="visually-hidden">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.data.map((r) => (
            <tr key={r.runId} aria-current={r.runId === current ? 'true' : undefined}>
              <th scope="row">{r.runId}</th>
              <td>{r.options.preset}</td>
              <td>{r.elsewhere ? `${r.status} in another tab` : r.status}</td>
              <td>
                {r.lastStep} / {r.options.steps}
                {r.checkpointStep !== undefined && <small> (checkpoint {r.checkpointStep})</small>}
              </td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
              <td>
                <button type="button" onClick={() => void openStoredRun(r)} disabled={r.runId === current} aria-label={`Open run ${r.runId}`}>
                  Open
                </button>
                {continuable(r) && (
                  <button type="button" onClick={() => void onContinue(r)} disabled={live} aria-label={`Continue run ${r.runId} from step ${r.checkpointStep}`}>
                    Continue
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {refused && (
        <p role="alert" className="bad">
          Could not continue: {refused}
        </p>
      )}
    </section>
  );
}
