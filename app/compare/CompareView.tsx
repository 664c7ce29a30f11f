/**
 * Compare: two or more stored runs (picked here or in the runs table) with any metric overlaid,
 * one colour per run and a legend of run names, and their configs side by side with the fields
 * that differ highlighted (and said in words). Reads each run's history from the worker; the
 * curves are the same Chart as the dashboard's (smoothing, log scale, zoom).
 */
import { useQueries, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Chart } from '../charts/Chart';
import { ChartSettings } from '../charts/ChartSettings';
import { ACCURACY, configRows, metricKeys, overlay } from './compare';
import { runLabel } from '../shared/runs-table';
import { runHistoryQuery, runsQuery } from '../queries/experiments';
import { useCompareStore } from '../state/compare-store';

export function CompareView() {
  const runs = useQuery(runsQuery());
  const { runIds, toggle } = useCompareStore();
  const [metric, setMetric] = useState<string | null>(null);
  const [onlyDiffering, setOnlyDiffering] = useState(true);
  const picked = useMemo(() => (runs.data ?? []).filter((r) => runIds.includes(r.runId)), [runs.data, runIds]);
  const histories = useQueries({ queries: picked.map((r) => runHistoryQuery(r.runId, r.lastStep)) });
  const loaded = histories.every((h) => h.data);
  // Small (a few runs × their steps): computed each render, which happens only as the queries settle.
  const named = loaded
    ? picked.map((r, i) => ({
        name: runLabel(r),
        steps: histories[i].data!.steps,
        evaluations: histories[i].data!.evaluations,
      }))
    : [];
  const keys = metricKeys(named);
  const shown =
    metric !== null && keys.includes(metric)
      ? metric
      : keys.includes('reward/mean')
        ? 'reward/mean'
        : (keys[0] ?? null);
  const series = shown ? overlay(named, shown) : [];
  const rows = useMemo(() => configRows(picked.map((r) => r.options)), [picked]);

  return (
    <section aria-labelledby="compare-title">
      <h1 id="compare-title">Compare runs</h1>
      {!runs.data?.length ? (
        <p>No stored runs yet: start runs in Experiments, then pick two or more here.</p>
      ) : (
        <fieldset className="compare-pick">
          <legend>Runs to compare</legend>
          {runs.data.map((r) => (
            <label key={r.runId}>
              <input
                type="checkbox"
                checked={runIds.includes(r.runId)}
                onChange={(e) => toggle(r.runId, e.target.checked)}
              />{' '}
              {runLabel(r)}{' '}
              <small>
                ({r.status}, {r.lastStep} / {r.options.steps} steps)
              </small>
            </label>
          ))}
        </fieldset>
      )}
      {picked.length < 2 ? (
        runs.data?.length ? (
          <p>Pick two or more runs to compare.</p>
        ) : null
      ) : (
        <>
          <h2>Curves</h2>
          <div className="controls">
            <label>
              Metric{' '}
              <select value={shown ?? ''} onChange={(e) => setMetric(e.target.value)} data-testid="compare-metric">
                {keys.map((k) => (
                  <option key={k} value={k}>
                    {k === ACCURACY ? 'held-out accuracy (eval/accuracy)' : k}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <ChartSettings />
          {!loaded ? (
            <p>Loading the runs&apos; histories…</p>
          ) : (
            shown && (
              <figure className="chart-panel" data-testid="compare-chart">
                <figcaption>
                  {shown} by step: {picked.map((r) => runLabel(r)).join(', ')}
                </figcaption>
                <Chart
                  label={`${shown} by step, one line per run: ${series.map((s) => `${s.name} (${s.points.length} points)`).join(', ')}`}
                  series={series}
                  yName={shown === ACCURACY ? 'accuracy' : shown}
                  height={280}
                />
              </figure>
            )
          )}
          <h2>Configs</h2>
          <label>
            <input type="checkbox" checked={onlyDiffering} onChange={(e) => setOnlyDiffering(e.target.checked)} /> Only
            the fields that differ ({rows.filter((r) => r.differs).length} of {rows.length})
          </label>
          <table className="compare-config" data-testid="compare-config">
            <thead>
              <tr>
                <th scope="col">Field</th>
                {picked.map((r) => (
                  <th key={r.runId} scope="col">
                    {runLabel(r)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows
                .filter((row) => row.differs || !onlyDiffering)
                .map((row) => (
                  <tr key={row.path} className={row.differs ? 'differs' : undefined} data-differs={row.differs}>
                    <th scope="row">
                      <code>{row.path}</code>
                      {row.differs && <span className="visually-hidden"> (differs)</span>}
                    </th>
                    {row.values.map((v, i) => (
                      <td key={picked[i].runId}>{v === null ? <em>absent</em> : <code>{v}</code>}</td>
                    ))}
                  </tr>
                ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
