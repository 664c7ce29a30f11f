/**
 * The runs stored by the worker (IndexedDB: they survive a reload) as a table a person works
 * with: sortable columns, a text and status filter, a checkbox per run to compare, and per run
 * Open (its curves, Groups and Batch), Continue (a stopped, failed or interrupted run from its
 * last checkpoint; not one live in another tab) and Details (config, run again, name, notes,
 * delete). Rows are RunRow; sorting and filtering are runs-table.ts.
 */
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import type { RunStatus, RunSummary } from '../../worker/protocol';
import {
  deleteRun,
  exportRunBundle,
  exportRunFiles,
  openStoredRun,
  runsQuery,
  storageQuery,
  updateRun,
} from '../queries/experiments';
import { downloadZip } from '../state/download';
import { createUpdateQueue, taskTimer } from '../shared/update-queue';
import { keys } from '../queries/keys';
import { useCompareStore } from '../state/compare-store';
import { useRunStore } from '../state/live-run';
import type { RowActions } from './RunRow';
import { RunRow } from './RunRow';
import { useContinueRun } from './continue-run';
import { usePageStore } from './page-store';
import type { SortKey } from '../shared/runs-table';
import { SORT_LABELS, deletedText, filterRuns, runLabel, sortRuns } from '../shared/runs-table';

/**
 * Refreshes of the listing while a run goes: at most one a second. Each ships every stored run's
 * options (datasets included) over comlink, and a step can end several times a second.
 */
const refreshes = createUpdateQueue<'runs'>({ minGapMs: 1000, budgetMs: 0, ...taskTimer });

const kb = (n: number) => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} kB`);
const STATUSES: (RunStatus | 'all')[] = ['all', 'running', 'paused', 'finished', 'stopped', 'failed', 'interrupted'];
/** Columns in order: a sort key, or a plain heading. */
const COLUMNS: (SortKey | string)[] = [
  'compare',
  'name',
  'preset',
  'Hyperparameters',
  'status',
  'steps',
  'reward',
  'accuracy',
  'Backend',
  'started',
  'duration',
  'Actions',
];

export function RunsTable() {
  const runs = useQuery(runsQuery());
  const storage = useQuery(storageQuery());
  const client = useQueryClient();
  const status = useRunStore((s) => s.status);
  const lastStep = useRunStore((s) => s.steps.at(-1)?.step ?? 0);
  const current = useRunStore((s) => s.runId);
  const compared = useCompareStore((s) => s.runIds);
  const [sort, setSort] = useState<{ key: SortKey; dir: 'ascending' | 'descending' }>({
    key: 'started',
    dir: 'descending',
  });
  const [text, setText] = useState('');
  const [statusFilter, setStatusFilter] = useState<RunStatus | 'all'>('all');
  const [said, setSaid] = useState('');
  const { go: continueRun, refused } = useContinueRun();
  const live = status === 'running' || status === 'paused';
  const refresh = () => void client.invalidateQueries({ queryKey: keys.runs() });
  // The listing follows the live run's status and steps (the latest one always lands).
  useEffect(
    () => refreshes.push('runs', () => void client.invalidateQueries({ queryKey: keys.runs() })),
    [client, status, lastStep],
  );
  const shown = useMemo(
    () => sortRuns(filterRuns(runs.data ?? [], { text, status: statusFilter }), sort.key, sort.dir),
    [runs.data, text, statusFilter, sort],
  );
  if (!runs.data?.length) return null;

  const actions: RowActions = {
    // Open and Continue go to the run: the form collapses and the dashboard takes the focus.
    open: (r) => void openStoredRun(r).then(() => usePageStore.getState().goToRun()),
    continueRun,
    save: async (r, meta) => {
      const reason = await updateRun(r.runId, meta);
      refresh();
      return reason;
    },
    remove: async (r: RunSummary) => {
      const d = await deleteRun(r.runId);
      refresh();
      if (!d.ok) return `Could not delete ${runLabel(r)}: ${d.reason}`;
      if (r.runId === current) useRunStore.getState().clear();
      useCompareStore.getState().toggle(r.runId, false);
      return deletedText(runLabel(r), d);
    },
    exportTo: async (r, to) => {
      const e = await exportRunFiles(r.runId, to);
      if (!e.ok) return `Cannot export ${runLabel(r)} to ${to}: ${e.reason}`;
      // One archive: a browser stops a page's second download to ask for permission.
      const name = `dewpoint-${r.runId}-${to}.zip`;
      const size = downloadZip(name, e.files);
      return `Exported ${runLabel(r)} for ${to}: ${name} (${kb(size)}) with ${e.files.map((f) => `${f.name} (${kb(f.bytes.byteLength)})`).join(', ')}.`;
    },
    bundle: async (r, to) => {
      const b = await exportRunBundle(r.runId, to);
      const target = to === 'verl' ? 'verl' : 'SkyRL';
      if (!b.ok) return { said: `Cannot bundle ${runLabel(r)} for ${target}: ${b.reason}`, preflight: [] };
      const name = `dewpoint-${r.runId}-${to}-bundle.zip`;
      const size = downloadZip(name, b.files);
      const refused = b.preflight.filter((c) => c.status === 'refused').map((c) => c.rule);
      return {
        said:
          `Bundled ${runLabel(r)} for ${target}: ${name} (${kb(size)}), ${b.files.length} files, ` +
          `${b.checkpointStep === null ? 'no checkpoint (no model/)' : `model/ from the checkpoint of step ${b.checkpointStep}`}; ` +
          `preflight ${refused.length ? `refused: ${refused.join(', ')}` : 'passed'} (listed below the buttons).`,
        preflight: b.preflight,
      };
    },
    announce: setSaid,
  };
  const sortBy = (key: SortKey) =>
    setSort((s) => ({ key, dir: s.key === key && s.dir === 'descending' ? 'ascending' : 'descending' }));

  return (
    <section aria-labelledby="stored-title">
      <h2 id="stored-title">Runs</h2>
      <p>
        {storage.data === 'indexeddb'
          ? 'Kept in this browser (IndexedDB): they survive a reload.'
          : 'Kept in memory: a reload loses them.'}
      </p>
      <div className="controls" role="search" aria-label="Filter runs">
        <label>
          Filter{' '}
          <input
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="name, preset, lr, notes…"
          />
        </label>
        <label>
          Status{' '}
          <select value={statusFilter} onChange={(e) => setStatusFilter(e.target.value as RunStatus | 'all')}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span>
          {shown.length} of {runs.data.length} runs
        </span>
        <a
          href="#/compare"
          className={compared.length < 2 ? 'disabled-link' : undefined}
          aria-disabled={compared.length < 2}
        >
          Compare selected ({compared.length})
        </a>
      </div>
      <p role="status" className="announce">
        {said}
      </p>
      <table data-testid="stored-runs" className="runs-table">
        <thead>
          <tr>
            {COLUMNS.map((c) =>
              c in SORT_LABELS ? (
                <th key={c} scope="col" aria-sort={sort.key === c ? sort.dir : 'none'}>
                  <button type="button" className="sort" onClick={() => sortBy(c as SortKey)}>
                    {SORT_LABELS[c as SortKey]}
                    {sort.key === c ? (sort.dir === 'ascending' ? ' ▲' : ' ▼') : ''}
                  </button>
                </th>
              ) : (
                <th key={c} scope="col">
                  {c === 'compare' ? <span className="visually-hidden">Compare</span> : c}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <RunRow
              key={r.runId}
              r={r}
              current={r.runId === current}
              live={live}
              columns={COLUMNS.length}
              actions={actions}
            />
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
