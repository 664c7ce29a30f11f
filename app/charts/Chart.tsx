/**
 * The one echarts wrapper: owns the instance, registers only the pieces used (line charts, grid,
 * tooltip, legend, x-axis zoom, canvas), resizes with its box, and takes series as plain data.
 * How they are drawn (smoothing, log axis, zoom resets) follows app/state/chart-settings.ts, so
 * every chart of every view reads the same; the option itself is built in chart-option.ts.
 */
import { LineChart } from 'echarts/charts';
import {
  DataZoomInsideComponent,
  DataZoomSliderComponent,
  GridComponent,
  LegendComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { useChartSettings } from '../state/chart-settings';
import { buildChart, tooltipText, type Series } from './chart-option';
import { fixed } from '../shared/format';

echarts.use([
  LineChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  DataZoomInsideComponent,
  DataZoomSliderComponent,
  CanvasRenderer,
]);

export type { Series } from './chart-option';

interface ChartProps {
  /** Accessible name of the chart (its numbers are also given as text beside it). */
  label: string;
  series: Series[];
  xName?: string;
  yName?: string;
  height?: number;
}

/** The layout and interactions, set once: legend above the grid, axis names inside it, zoom on x. */
const FRAME = {
  animation: false,
  // outerBounds 'same' + 'all': tick labels and axis names fit inside this box instead of spilling onto the legend.
  grid: { left: 4, right: 18, top: 34, bottom: 30, outerBoundsMode: 'same', outerBoundsContain: 'all' },
  legend: { type: 'scroll', top: 0, left: 'center' },
  tooltip: { trigger: 'axis', formatter: tooltipText },
  dataZoom: [
    // filterMode 'none': a line leaving the zoomed window is cut at the edge, not ended at its last point inside.
    { type: 'inside', xAxisIndex: 0, filterMode: 'none' },
    {
      type: 'slider',
      xAxisIndex: 0,
      filterMode: 'none',
      height: 14,
      bottom: 4,
      labelFormatter: (v: number) => fixed(v, 0),
    },
  ],
};

const isZoomed = (instance: echarts.ECharts) => {
  const zoom = (instance.getOption().dataZoom as { start?: number; end?: number }[] | undefined)?.[0];
  return zoom !== undefined && ((zoom.start ?? 0) > 0 || (zoom.end ?? 100) < 100);
};

export function Chart({ label, series, xName = 'step', yName, height = 220 }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const [zoomed, setZoomed] = useState(false);
  const smoothing = useChartSettings((s) => s.smoothing);
  const logY = useChartSettings((s) => s.logY);
  const zoomResets = useChartSettings((s) => s.zoomResets);
  const built = useMemo(
    () => buildChart(series, { smoothing, logY }, { xName, yName }),
    [series, smoothing, logY, xName, yName],
  );
  const descId = useId();

  useEffect(() => {
    if (!el.current) return;
    const instance = echarts.init(el.current, undefined, { renderer: 'canvas' });
    chart.current = instance;
    instance.setOption(FRAME);
    instance.on('datazoom', () => setZoomed(isZoomed(instance)));
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(el.current);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    // Replacing the y axis lets it switch between value and log; the zoom (set once) is kept.
    chart.current?.setOption(built.option, { replaceMerge: ['series', 'yAxis'] });
  }, [built]);

  const resetZoom = () => {
    chart.current?.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
    setZoomed(false);
  };
  useEffect(() => {
    if (zoomResets === 0) return;
    chart.current?.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
    setZoomed(false);
  }, [zoomResets]);

  return (
    <div className="chart">
      <div
        ref={el}
        role="img"
        aria-label={built.log ? `${label} (log y axis)` : label}
        aria-describedby={descId}
        style={{ width: '100%', height }}
      />
      <p id={descId} className="visually-hidden">
        {built.description}
      </p>
      {built.noData && <p className="chart-no-data">{built.noData}</p>}
      {built.logProblem && <p className="chart-note">{built.logProblem}</p>}
      {zoomed && (
        <button type="button" className="chart-reset-zoom" onClick={resetZoom}>
          Reset zoom
        </button>
      )}
    </div>
  );
}
