/**
 * The controls every chart follows (app/state/chart-settings.ts): smoothing as in TensorBoard,
 * a log y axis, and a reset of every chart's zoom. Placed above a grid of charts; holds no data.
 */
import { useId } from 'react';
import { MAX_SMOOTHING, useChartSettings } from '../state/chart-settings';
import { fixed } from '../shared/format';

export function ChartSettings() {
  const { smoothing, logY, setSmoothing, setLogY, resetZoom } = useChartSettings();
  const id = useId();
  return (
    <fieldset className="chart-settings">
      <legend>Chart settings</legend>
      <label htmlFor={`${id}-smoothing`}>Smoothing</label>
      <input
        id={`${id}-smoothing`}
        type="range"
        min={0}
        max={MAX_SMOOTHING}
        step={0.01}
        value={smoothing}
        onChange={(e) => setSmoothing(Number(e.target.value))}
        aria-describedby={`${id}-smoothing-note`}
      />
      <output htmlFor={`${id}-smoothing`} data-testid="smoothing-value">
        {fixed(smoothing, 2)}
      </output>
      <small id={`${id}-smoothing-note`}>
        Exponential moving average, debiased as in TensorBoard; the raw curve stays faint behind it. 0 turns it off.
      </small>
      <label className="chart-settings-log">
        <input type="checkbox" checked={logY} onChange={(e) => setLogY(e.target.checked)} /> Log scale (y axis)
      </label>
      <button type="button" onClick={resetZoom}>
        Reset zoom on all charts
      </button>
      <small>Zoom a chart with the mouse wheel over it or the slider under it.</small>
    </fieldset>
  );
}
