/**
 * The dashboard's grid of panels (dashboard-panels.ts), as many columns as the width holds. A panel
 * that is flat by construction for the run's options (flat-panels.ts) is collapsed to its title and
 * the reason, with a button that draws it anyway; collapsed panels come last, so the grid's rows of
 * charts stay full.
 */
import { useMemo, useState } from 'react';
import { Chart } from '../charts/Chart';
import type { Panel } from './dashboard-panels';
import type { FlatPanels } from './flat-panels';

export function DashboardCharts({ panels, flat }: { panels: Panel[]; flat: FlatPanels }) {
  // Panels a person chose to draw although they are flat.
  const [shown, setShown] = useState<ReadonlySet<string>>(() => new Set());
  const ordered = useMemo(
    () => [...panels.filter((p) => !(p.id in flat)), ...panels.filter((p) => p.id in flat)],
    [panels, flat],
  );
  const toggle = (id: string) =>
    setShown((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <div className="chart-grid">
      {ordered.map((p) => {
        const why = flat[p.id];
        const drawn = !why || shown.has(p.id);
        return (
          <figure
            key={p.id}
            className={`chart-panel${why ? ' flat' : ''}`}
            data-testid={`chart-${p.id}`}
            aria-labelledby={`panel-${p.id}`}
          >
            <figcaption id={`panel-${p.id}`}>{p.title}</figcaption>
            {why && (
              <>
                <p className="flat-note" data-testid="flat-note">
                  {p.title} — {why}
                </p>
                <button
                  type="button"
                  className="flat-toggle"
                  aria-expanded={drawn}
                  aria-controls={`panel-${p.id}-chart`}
                  onClick={() => toggle(p.id)}
                >
                  {drawn ? 'Hide the chart' : 'Show the chart anyway'}
                  <span className="visually-hidden"> ({p.title})</span>
                </button>
              </>
            )}
            <div id={`panel-${p.id}-chart`} hidden={!drawn}>
              {drawn && <Chart label={p.label} series={p.series} yName={p.yName} height={200} />}
            </div>
          </figure>
        );
      })}
    </div>
  );
}
