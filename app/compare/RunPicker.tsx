/** The runs to compare, one checkbox per stored run (the runs table's checkboxes pick the same set). */
import type { RunSummary } from '../../worker/protocol';

interface RunPickerProps {
  runs: RunSummary[];
  picked: readonly string[];
  /** The name each run is shown by (run-name.ts), by run id. */
  names: ReadonlyMap<string, string>;
  toggle: (runId: string, on: boolean) => void;
}

export function RunPicker({ runs, picked, names, toggle }: RunPickerProps) {
  return (
    <fieldset className="compare-pick">
      <legend>Runs to compare</legend>
      {runs.map((r) => (
        <label key={r.runId}>
          <input
            type="checkbox"
            checked={picked.includes(r.runId)}
            onChange={(e) => toggle(r.runId, e.target.checked)}
          />{' '}
          {names.get(r.runId) ?? r.runId}{' '}
          <small>
            ({r.status}, {r.lastStep} / {r.options.steps} steps)
          </small>
        </label>
      ))}
    </fieldset>
  );
}
