/**
 * Final and best values per run (or seed group) and per panel metric, sortable by any column
 * (summary.ts says how "best" is chosen). Column headers are buttons; the sorted one carries aria-sort.
 */
import { type ReactNode, useMemo, useState } from 'react';
import type { Line } from './lines';
import { metricTitle } from './PanelControls';
import { cellText, sortSummary, summaryColumns, summaryRows } from './summary';

interface Sort {
  key: string;
  dir: 'ascending' | 'descending';
}

function SortButton({
  id,
  sort,
  setSort,
  children,
}: {
  id: string;
  sort: Sort | null;
  setSort: (s: Sort) => void;
  children: ReactNode;
}) {
  const on = sort?.key === id;
  return (
    <button
      type="button"
      className="compare-sort"
      onClick={() =>
        setSort({
          key: id,
          dir:
            on && sort.dir === 'descending'
              ? 'ascending'
              : on
                ? 'descending'
                : id === 'name'
                  ? 'ascending'
                  : 'descending',
        })
      }
    >
      {children}
      <span aria-hidden="true">{on ? (sort.dir === 'ascending' ? ' ▲' : ' ▼') : ''}</span>
    </button>
  );
}

export function SummaryTable({ lines, metrics }: { lines: readonly Line[]; metrics: readonly string[] }) {
  const [sort, setSort] = useState<Sort | null>(null);
  const columns = useMemo(() => summaryColumns(metrics), [metrics]);
  const rows = useMemo(() => summaryRows(lines, metrics), [lines, metrics]);
  const shown = sort ? sortSummary(rows, sort.key, sort.dir) : rows;
  const ariaSort = (id: string) => (sort?.key === id ? sort.dir : 'none');
  const grouped = lines.some((l) => l.members.length > 1);
  return (
    <div className="compare-table-wrap">
      <table className="compare-summary" data-testid="compare-summary">
        <caption>
          Final and best value of each panel&apos;s metric per run
          {grouped ? ' or seed group (the mean over its seeds, their range in brackets)' : ''}, to 3 significant digits.
          Best is the max (↑) for rewards, accuracy and pass rates, the min (↓) for the supervised losses (loss/sft,
          loss/dpo), times and failures; a metric with no better direction (an RL loss such as loss/policy, KL, lengths)
          shows its min and max. Click a header to sort.
        </caption>
        <thead>
          <tr>
            <th scope="col" rowSpan={2} aria-sort={ariaSort('name')}>
              <SortButton id="name" sort={sort} setSort={setSort}>
                Run
              </SortButton>
            </th>
            {metrics.map((m) => (
              <th key={m} scope="colgroup" colSpan={columns.filter((c) => c.metric === m).length}>
                {metricTitle(m)}
              </th>
            ))}
          </tr>
          <tr>
            {columns.map((c) => (
              <th key={c.id} scope="col" aria-sort={ariaSort(c.id)}>
                <SortButton id={c.id} sort={sort} setSort={setSort}>
                  <span className="visually-hidden">{metricTitle(c.metric)}: </span>
                  {c.label}
                </SortButton>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.id}>
              <th scope="row">
                {r.name}
                {r.runs > 1 && <small> ({r.runs} runs)</small>}
              </th>
              {columns.map((c) => {
                const { value, range } = cellText(r, c.id);
                return (
                  <td key={c.id} data-column={c.id}>
                    {value}
                    {range && <small> ({range})</small>}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
