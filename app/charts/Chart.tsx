/**
 * The one echarts wrapper: owns the instance, registers only the pieces used (line charts, grid,
 * tooltip, legend, x-axis zoom, canvas), resizes with its box, and takes series as plain data.
 * How they are drawn (smoothing, log axis, zoom resets) follows app/state/chart-settings.ts, so
 * every chart of every view reads the same; the option itself is built in chart-option.ts, in the
 * colours of the page's theme (chart-theme.ts, from styles.css's custom properties, redrawn when the
 * system switches between light and dark), with a legend that wraps into as many rows as its names
 * need at the chart's width (the chart grows by those rows). The canvas is redrawn paced (at most
 * twice a second, while on screen, in short tasks), never once per event.
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
import { type RefObject, useCallback, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useChartSettings } from '../state/chart-settings';
import { buildChart, tooltipText, type Series } from './chart-option';
import { frameOption, legendLayout, LEGEND_FONT, themeFromStyle, type ChartTheme } from './chart-theme';
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

/**
 * The layout and interactions, set once: legend above the grid (its rows and the grid's top follow
 * the data, chart-theme.ts `frameOption`), axis names inside it, zoom on x.
 */
const FRAME = {
  animation: false,
  // outerBounds 'same' + 'all': tick labels and axis names fit inside this box instead of spilling onto the legend.
  grid: { left: 4, right: 18, top: 34, bottom: 30, outerBoundsMode: 'same', outerBoundsContain: 'all' },
  // Plain, not 'scroll': a paged legend ("1/2") hides series; this one wraps.
  legend: { type: 'plain' },
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
 * Exported for charts of other kinds (the Compare view's heatmaps), so every canvas shares the pacing.
 * `frame` (the theme's colours, the legend's rows) is merged in only when it changed: most redraws
 * carry the data alone.
 */
export function usePacedChart(
  el: RefObject<HTMLDivElement | null>,
  option: EChartsCoreOption,
  onZoom: (zoomed: boolean) => void,
  frame?: EChartsCoreOption,
): RefObject<echarts.ECharts | null> {
  const chart = useRef<echarts.ECharts | null>(null);
  const pending = useRef<EChartsCoreOption | null>(null);
  const visible = useRef(false);
  const latestFrame = useRef<EChartsCoreOption | undefined>(undefined);
  const drawnFrame = useRef<EChartsCoreOption | undefined>(undefined);
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
      const f = latestFrame.current;
      const withFrame = f && f !== drawnFrame.current ? { ...next, ...f } : next;
      drawnFrame.current = f;
      // Replacing the y axis lets it switch between value and log; the zoom (set once) is kept.
      chart.current.setOption(withFrame, { replaceMerge: ['series', 'yAxis'] });
      // The chart shows its latest option (a redraw can trail a change by up to a pace): specs wait on it.
      if (pending.current === null) el.current.dataset.drawn = 'true';
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
    latestFrame.current = frame;
    if (el.current) el.current.dataset.drawn = 'false';
    draw();
  }, [el, option, frame, draw]);
  return chart;
}

const darkScheme = () => window.matchMedia?.('(prefers-color-scheme: dark)');

function readTheme(): ChartTheme {
  const style = getComputedStyle(document.documentElement);
  return themeFromStyle((name) => style.getPropertyValue(name), darkScheme()?.matches ?? false);
}

/** The page theme's chart colours, read again when the system switches between light and dark. */
function useChartTheme(): ChartTheme {
  const [theme, setTheme] = useState(readTheme);
  useEffect(() => {
    const query = darkScheme();
    if (!query) return;
    const change = () => setTheme(readTheme());
    query.addEventListener('change', change);
    return () => query.removeEventListener('change', change);
  }, []);
  return theme;
}

let measurer: CanvasRenderingContext2D | null | undefined;
/** A legend name's width in px, in the font echarts draws it with. */
function legendTextWidth(text: string): number {
  if (measurer === undefined) {
    measurer = document.createElement('canvas').getContext('2d');
    if (measurer) measurer.font = LEGEND_FONT;
  }
  // Without a 2-D context (never in a browser): a generous 7.5 px a character.
  return measurer ? measurer.measureText(text).width : text.length * 7.5;
}

/** The element's width, measured before the first paint and again whenever it changes. */
function useWidth(el: RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const node = el.current;
    if (!node) return;
    setWidth(Math.round(node.getBoundingClientRect().width));
    const sized = new ResizeObserver((entries) => setWidth(Math.round(entries.at(-1)!.contentRect.width)));
    sized.observe(node);
    return () => sized.disconnect();
  }, [el]);
  return width;
}

export function Chart({ label, series, xName = 'step', yName, height = 220 }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const [zoomed, setZoomed] = useState(false);
  const smoothing = useChartSettings((s) => s.smoothing);
  const logY = useChartSettings((s) => s.logY);
  const zoomResets = useChartSettings((s) => s.zoomResets);
  const theme = useChartTheme();
  const width = useWidth(el);
  const built = useMemo(
    () => buildChart(series, { smoothing, logY }, { xName, yName }, theme),
    [series, smoothing, logY, xName, yName, theme],
  );
  const names = useMemo(() => series.map((s) => s.name).join('\n'), [series]);
  const legend = useMemo(() => legendLayout(names ? names.split('\n') : [], width, legendTextWidth), [names, width]);
  const frame = useMemo(() => frameOption(theme, legend), [theme, legend]);
  const descId = useId();
  const chart = usePacedChart(el, built.option, setZoomed, frame);

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
        style={{ width: '100%', height: height + legend.extraHeight }}
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
