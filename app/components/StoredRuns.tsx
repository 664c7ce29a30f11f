/**
 * Runs stored by the worker (IndexedDB: they survive a reload), newest first, each with its status
 * and last committed step; Open shows one in the live view, Groups and Batch.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { openStoredRun, runsQuery, storageQuery } from '../queries/experiments';
import { keys } from '../queries/keys';
import { useRunStore } from '../state/run-store';

export function StoredRuns() {
  const runs = useQuery(runsQuery());
  const storage = useQuery(storageQuery());
  const client = useQueryClient();
  const status = useRunStore((s) => s.status);
  const lastStep = useRunStore((s) => s.steps.at(-1)?.step ?? 0);
  const current = useRunStore((s) => s.runId);
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
              <td>{r.status}</td>
              <td>
                {r.lastStep} / {r.options.steps}
              </td>
              <td>{new Date(r.createdAt).toLocaleString()}</td>
              <td>
                <button type="button" onClick={() => void openStoredRun(r)} disabled={r.runId === current} aria-label={`Open run ${r.runId}`}>
                  Open
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
