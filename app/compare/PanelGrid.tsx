/**
 * The panel grid: one chart per chosen metric, one line per run or seed group (a group's band is
 * its seeds' min–max), laid out in as many columns as the width allows. Each panel can be removed.
 */
import { useMemo } from 'react';
import { Chart } from '../charts/Chart';
import { ACCURACY } from './compare';
import { lineSeries, type Line, type XAxisKind } from './lines';
import { metricTitle } from './PanelControls';

interface PanelGridProps {
  lines: readonly Line[];
  metrics: readonly string[];
  x: XAxisKind;
  remove: (metric: string) => void;
}

const X_NAME: Record<XAxisKind, string> = { step: 'step', wall: 'seconds' };

function Panel({
  lines,
  metric,
  x,
  remove,
}: {
  lines: readonly Line[];
  metric: string;
  x: XAxisKind;
  remove: () => void;
}) {
  const series = useMemo(() => lines.map((l) => lineSeries(l, metric, x)), [lines, metric, x]);
  const banded = lines.some((l) => l.members.length > 1);
  const title = metricTitle(metric);
  const parts = series.map(
    (s, i) =>
      `${s.name} (${lines[i].members.length > 1 ? `mean of ${lines[i].members.length} runs, ` : ''}${s.points.length} points)`,
  );
  return (
    <figure className="compare-panel" data-testid="compare-panel" data-metric={metric}>
      <figcaption>
        <span>{title}</span>
        <button type="button" className="compare-remove" onClick={remove} aria-label={`Remove the panel ${title}`}>
          ×
        </button>
      </figcaption>
      <Chart
        label={
          `${title} by ${x === 'step' ? 'step' : 'seconds running'}, one line per ${banded ? 'run or seed group (mean, band min–max)' : 'run'}: ` +
          parts.join(', ')
        }
        series={series}
        xName={X_NAME[x]}
        yName={metric === ACCURACY ? 'accuracy' : metric}
        height={240}
      />
    </figure>
  );
}

export function PanelGrid({ lines, metrics, x, remove }: PanelGridProps) {
  if (metrics.length === 0) return <p>No panel: choose metrics above.</p>;
  return (
    <div className="compare-grid">
      {metrics.map((m) => (
        <Panel key={m} lines={lines} metric={m} x={x} remove={() => remove(m)} />
      ))}
    </div>
  );
}
