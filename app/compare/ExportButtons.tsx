/** Downloads the compared runs' metrics (export.ts): CSV in long form and JSON, with per-step times and run names. */
import { downloadText } from '../state/download';
import type { CompareRun } from './compare';
import { compareCsv, compareJson } from './export';

export function ExportButtons({ runs }: { runs: readonly CompareRun[] }) {
  const base = `dewpoint-compare-${runs.length}-runs`;
  return (
    <div className="compare-export" role="group" aria-label="Export the compared runs' metrics">
      <button type="button" onClick={() => downloadText(`${base}.csv`, compareCsv(runs), 'text/csv')}>
        Export compared metrics (CSV)
      </button>
      <button
        type="button"
        onClick={() => downloadText(`${base}.json`, JSON.stringify(compareJson(runs), null, 1), 'application/json')}
      >
        Export compared metrics (JSON)
      </button>
      <small>
        One row per run, step and metric: run name, run id, step, commit time (ISO 8601) and seconds the run had
        computed by then (pauses and stops left out), value.
      </small>
    </div>
  );
}
