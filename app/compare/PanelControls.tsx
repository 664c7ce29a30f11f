/**
 * What the panel grid shows: the metrics (one panel each, chosen from every metric the runs
 * reported, grouped by their prefix), the x axis (step or wall-clock), and whether runs that differ
 * only in their seed are drawn as one line with a band.
 */
import { ACCURACY, TERMINATION_SHARE } from './compare';
import type { XAxisKind } from './lines';

interface PanelControlsProps {
  keys: readonly string[];
  shown: readonly string[];
  /** The metrics chosen, or null for the runs' defaults. */
  setShown: (metrics: string[] | null) => void;
  x: XAxisKind;
  setX: (x: XAxisKind) => void;
  grouped: boolean;
  setGrouped: (on: boolean) => void;
  /** How many seed groups of two or more runs the picked runs make. */
  groups: number;
}

/** A metric as the picker and the panels name it. */
export function metricTitle(key: string): string {
  if (key === ACCURACY) return 'held-out accuracy (eval/accuracy)';
  if (key.startsWith(TERMINATION_SHARE)) return `share of episodes ending in ${key.slice(TERMINATION_SHARE.length)}`;
  return key;
}

export function PanelControls({ keys, shown, setShown, x, setX, grouped, setGrouped, groups }: PanelControlsProps) {
  const prefixes = [...new Set(keys.map((k) => k.split('/')[0]))];
  const toggle = (k: string, on: boolean) => setShown(on ? [...shown, k] : shown.filter((m) => m !== k));
  return (
    <div className="compare-controls">
      <fieldset>
        <legend>X axis</legend>
        <label>
          <input type="radio" name="compare-x" checked={x === 'step'} onChange={() => setX('step')} /> Step
        </label>
        <label>
          <input type="radio" name="compare-x" checked={x === 'wall'} onChange={() => setX('wall')} /> Time running
          (seconds the run computed, pauses and stops left out)
        </label>
      </fieldset>
      <label>
        <input type="checkbox" checked={grouped} onChange={(e) => setGrouped(e.target.checked)} /> Group runs that
        differ only in their seed: mean line, min–max band ({groups} group{groups === 1 ? '' : 's'})
      </label>
      <details className="compare-metrics">
        <summary>
          Metrics: {shown.length} panel{shown.length === 1 ? '' : 's'} of {keys.length} metrics
        </summary>
        <button type="button" onClick={() => setShown(null)}>
          Default panels for these runs
        </button>
        {prefixes.map((p) => (
          <fieldset key={p}>
            <legend>{p}</legend>
            {keys
              .filter((k) => k.split('/')[0] === p)
              .map((k) => (
                <label key={k}>
                  <input type="checkbox" checked={shown.includes(k)} onChange={(e) => toggle(k, e.target.checked)} />{' '}
                  {metricTitle(k)}
                </label>
              ))}
          </fieldset>
        ))}
      </details>
    </div>
  );
}
