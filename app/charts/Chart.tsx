/**
 * The one echarts wrapper: owns the instance, registers only the pieces used (line charts, grid,
 * tooltip, legend, x-axis zoom, canvas), resizes with its box, and takes series as plain data.
 * How they are drawn (smoothing, log axis, zoom resets) follows app/state/chart-settings.ts, so
 * every chart of every view reads the same; the option itself is built in chart-option.ts. The canvas
 * is redrawn paced (at most twice a second, while on screen, in short tasks), never once per event.
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
import type { EChartsCoreOption } from 'echarts/core';
import { type RefObject, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { useChartSettings } from '../state/chart-settings';
import { buildChart, tooltipText, type Series } from './chart-option';
import { createUpdateQueue, taskTimer } from '../shared/update-queue';
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

/**
 * Every chart's redraws, paced (shared/update-queue.ts): a chart draws its latest data at most twice a
 * second, and a task redraws charts for ~30 ms at most before input gets its turn. A redraw (the
 * echarts update, layout and paint of one chart) takes 10–40 ms; a live run's dashboard has a dozen,
 * and drawing them all on each of the run's events blocked the page for up to a second (issue 27, bug 8).
 */
const redraws = createUpdateQueue<object>({ minGapMs: 500, budgetMs: 30, ...taskTimer });

/**
 * The echarts instance of `el`, created and drawn through the queue: created in a task of its own
 * (a dozen charts mounting at once are a dozen tasks, not one), then `option` drawn whenever the
 * chart is on screen; one off screen (or in a closed <details>) draws its latest option when it
 * comes into view. Only the canvas waits: the accessible name and description render at once.
 */
function usePacedChart(
  el: RefObject<HTMLDivElement | null>,
  option: EChartsCoreOption,
  onZoom: (zoomed: boolean) => void,
): RefObject<echarts.ECharts | null> {
  const chart = useRef<echarts.ECharts | null>(null);
  const pending = useRef<EChartsCoreOption | null>(null);
  const visible = useRef(false);
  const draw = useCallback(() => {
    if (chart.current && (!visible.current || pending.current === null)) return;
    redraws.push(el, () => {
      if (!el.current) return;
      if (!chart.current) {
        const instance = echarts.init(el.current, undefined, { renderer: 'canvas' });
        instance.setOption(FRAME);
        instance.on('datazoom', () => onZoom(isZoomed(instance)));
        chart.current = instance;
      }
      const next = pending.current;
      if (!visible.current || next === null) return;
      pending.current = null;
      // Replacing the y axis lets it switch between value and log; the zoom (set once) is kept.
      chart.current.setOption(next, { replaceMerge: ['series', 'yAxis'] });
    });
  }, [el, onZoom]);
  useEffect(() => {
    const node = el.current;
    if (!node) return;
    const seen = new IntersectionObserver((entries) => {
      visible.current = entries.at(-1)!.isIntersecting;
      draw();
    });
    const sized = new ResizeObserver(() => chart.current?.resize());
    seen.observe(node);
    sized.observe(node);
    return () => {
      seen.disconnect();
      sized.disconnect();
      redraws.forget(el);
      chart.current?.dispose();
      chart.current = null;
    };
  }, [el, draw]);
  useEffect(() => {
    pending.current = option;
    draw();
  }, [option, draw]);
  return chart;
}

export function Chart({ label, series, xName = 'step', yName, height = 220 }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const [zoomed, setZoomed] = useState(false);
  const smoothing = useChartSettings((s) => s.smoothing);
  const logY = useChartSettings((s) => s.logY);
  const zoomResets = useChartSettings((s) => s.zoomResets);
  const built = useMemo(
    () => buildChart(series, { smoothing, logY }, { xName, yName }),
    [series, smoothing, logY, xName, yName],
  );
  const descId = useId();
  const chart = usePacedChart(el, built.option, setZoomed);

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
