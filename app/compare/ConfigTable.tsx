/** The compared runs' configs side by side, the fields that differ highlighted (and said in words). */
import { useMemo, useState } from 'react';
import type { ImportedRunOptions, RunOptions } from '../../worker/protocol';
import { configRows } from './compare';

interface ConfigTableProps {
  runs: readonly { runId: string; name: string; options: RunOptions | ImportedRunOptions }[];
}

export function ConfigTable({ runs }: ConfigTableProps) {
  const [onlyDiffering, setOnlyDiffering] = useState(true);
  const rows = useMemo(() => configRows(runs.map((r) => r.options)), [runs]);
  return (
    <>
      <h2>Configs</h2>
      <label>
        <input type="checkbox" checked={onlyDiffering} onChange={(e) => setOnlyDiffering(e.target.checked)} /> Only the
        fields that differ ({rows.filter((r) => r.differs).length} of {rows.length})
      </label>
      <div className="compare-table-wrap">
        <table className="compare-config" data-testid="compare-config">
          <thead>
            <tr>
              <th scope="col">Field</th>
              {runs.map((r) => (
                <th key={r.runId} scope="col">
                  {r.name}
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
                    <td key={runs[i].runId}>{v === null ? <em>absent</em> : <code>{v}</code>}</td>
                  ))}
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
