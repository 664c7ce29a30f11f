/**
 * What a chart draws, as data: TensorBoard's smoothing, round axis bounds, the log-scale check and
 * the no-data note, and the echarts option built from them. Pure (no DOM, no echarts instance):
 * Chart.tsx owns the instance and passes this option to it.
 * Smoothing reference: TensorBoard's line chart (tensorboard/components/vz_line_chart2/
 * line-chart.ts, `resmoothDataset`): an exponential moving average debiased by 1 - w^n.
 */
import type { EChartsCoreOption } from 'echarts/core';
import { fixed, significant } from '../shared/format';
import { LIGHT_CHART_THEME, paletteOf, type ChartTheme } from './chart-theme';

export interface Series {
  name: string;
  points: [number, number][];
  /** Series with the same `stack` are drawn as stacked areas (parts of a whole, e.g. step time). */
  stack?: string;
  /** A dashed line, for bounds drawn around another series (mean ± std). */
  dashed?: boolean;
  /**
   * `[x, low, high]` per x: a range shaded behind the line in its colour (the Compare view's
   * min–max over seeds), smoothed like the line; no legend entry of its own, and the tooltip gives
   * it beside the line's value.
   */
  band?: [number, number, number][];
}

interface ChartView {
  /** TensorBoard's smoothing weight w in [0, 0.99]; 0 draws the raw values only. */
  smoothing: number;
  /** Ask for a log y axis (refused, with the reason, when a value is ≤ 0). */
  logY: boolean;
}

const RAW = ' (raw)';
/** A band is two stacked series: its low edge (drawn without ink) and its span high − low (filled). */
const BAND_LOW = ' (band low)';
const BAND = ' (band)';
const isHelper = (id: string | undefined) => !!id && [RAW, BAND_LOW, BAND].some((suffix) => id.endsWith(suffix));

/**
 * TensorBoard's smoothing: last = w·last + (1 − w)·y, shown as last / (1 − w^n) after n finite
 * values, so the start is not pulled towards 0. Non-finite values pass through and are not
 * averaged in; a constant series is returned as is (no float noise from the debiasing).
 */
export function emaSmooth(points: [number, number][], weight: number): [number, number][] {
  const constant = points.every(([, y]) => y === points[0][1]);
  let last = 0;
  let n = 0;
  return points.map(([x, y]) => {
    if (constant || !Number.isFinite(y)) return [x, y];
    last = last * weight + (1 - weight) * y;
    n += 1;
    return [x, weight === 1 ? last : last / (1 - weight ** n)];
  });
}

interface LinearAxis {
  min: number;
  max: number;
  interval: number;
  /** Decimals the tick labels need (those of the interval). */
  decimals: number;
}

/** 1, 2 or 5 × 10^k, the smallest of them ≥ `raw`. */
function niceStep(raw: number): number {
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw * (1 - 1e-9))!;
}

// `+ 0` turns a -0 (floor of a tiny negative ratio) into 0.
const round = (v: number) => Number(v.toPrecision(12)) + 0;

/**
 * Round bounds around [lo, hi] on multiples of a 1-2-5 step (about `ticks` intervals). A flat
 * range (all values equal, or float noise like an ESS of 1 ± 2e-10) is drawn from 0 instead of
 * magnifying the noise.
 */
export function niceLinearAxis(lo: number, hi: number, ticks = 5): LinearAxis {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return { min: 0, max: 1, interval: 0.2, decimals: 1 };
  if (hi - lo <= 1e-6 * Math.max(Math.abs(lo), Math.abs(hi))) [lo, hi] = [Math.min(lo, 0), Math.max(hi, 0)];
  if (lo === hi) hi = lo + 1;
  const interval = niceStep((hi - lo) / ticks);
  const min = round(Math.floor(lo / interval + 1e-9) * interval);
  const max = round(Math.ceil(hi / interval - 1e-9) * interval);
  return { min, max, interval, decimals: Math.max(0, -Math.floor(Math.log10(interval) + 1e-9)) };
}

/** Decades around [lo, hi] (both > 0), at least one. */
export function niceLogAxis(lo: number, hi: number): { min: number; max: number } {
  const a = Math.floor(Math.log10(lo) + 1e-9);
  const b = Math.max(Math.ceil(Math.log10(hi) - 1e-9), a + 1);
  return { min: round(10 ** a), max: round(10 ** b) };
}

const finite = (points: [number, number][]) => points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));

/** Why a log y axis cannot draw these series (the first one with a value ≤ 0), or null. */
export function logScaleProblem(series: Series[]): string | null {
  for (const s of series) {
    const ys = [...finite(s.points).map(([, y]) => y), ...(s.band ?? []).map(([, lo]) => lo).filter(Number.isFinite)];
    const lowest = Math.min(...ys);
    if (ys.length > 0 && lowest <= 0)
      return `Log scale not used: ${s.name} has values ≤ 0 (lowest ${significant(lowest)}).`;
  }
  return null;
}

/** The sentence shown instead of a silent empty plot: which series have no point, or null. */
export function noDataNote(series: Series[]): string | null {
  if (series.length === 0) return 'Nothing to plot.';
  const empty = series.filter((s) => finite(s.points).length === 0).map((s) => s.name);
  return empty.length > 0 ? `No data to draw for ${empty.join(', ')} (not reported, or not yet).` : null;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface TooltipParam {
  seriesId?: string;
  seriesName?: string;
  marker?: unknown;
  value?: unknown;
}

/**
 * One line per series at the hovered x (`xName` and its value first): the smoothed value, the raw
 * one beside it, and the band's range where the series has one.
 */
export function tooltipText(params: TooltipParam | TooltipParam[], xName = 'step'): string {
  const list = Array.isArray(params) ? params : [params];
  const y = (p: TooltipParam) => significant((p.value as [number, number])[1]);
  const byId = new Map(list.map((p) => [p.seriesId, p]));
  const lines = list
    .filter((p) => !isHelper(p.seriesId))
    .map((p) => {
      const r = byId.get(`${p.seriesId}${RAW}`);
      // The band's span series carries [x, high − low, high].
      const b = byId.get(`${p.seriesId}${BAND}`)?.value as [number, number, number] | undefined;
      const range = b ? ` (range ${significant(b[2] - b[1])} – ${significant(b[2])})` : '';
      return `${typeof p.marker === 'string' ? p.marker : ''}${escape(p.seriesName ?? '')}: ${y(p)}${r ? ` (raw ${y(r)})` : ''}${range}`;
    });
  const x = list.length > 0 ? (list[0].value as [number, number])[0] : NaN;
  return [`${escape(xName)} ${significant(x)}`, ...lines].join('<br/>');
}

/** A band's low and high edges, each smoothed as a line is (weight 0: as given); non-finite rows left out. */
function smoothBand(band: [number, number, number][], w: number): [number, number, number][] {
  const rows = band.filter(([x, lo, hi]) => [x, lo, hi].every(Number.isFinite));
  if (w === 0 || rows.length === 0) return rows;
  const lo = emaSmooth(
    rows.map(([x, l]) => [x, l]),
    w,
  );
  const hi = emaSmooth(
    rows.map(([x, , h]) => [x, h]),
    w,
  );
  return rows.map(([x], i) => [x, lo[i][1], hi[i][1]]);
}

interface BuiltChart {
  /** The parts of the option that follow the data: axes and series (grid, legend, zoom are set once in Chart.tsx). */
  option: EChartsCoreOption;
  /** Whether the y axis is logarithmic (asked for and possible). */
  log: boolean;
  /** Why a log axis was asked for and refused, shown under the chart. */
  logProblem: string | null;
  /** Shown when a series has no point. */
  noData: string | null;
  /** How the curves are drawn, for the chart's accessible description. */
  description: string;
}

/** The axes and series of `series` as `view` asks, in `theme`'s colours (the light theme unless told). */
export function buildChart(
  series: Series[],
  view: ChartView,
  axes: { xName: string; yName?: string },
  theme: ChartTheme = LIGHT_CHART_THEME,
): BuiltChart {
  const palette = paletteOf(theme);
  // Each series keeps its hue in both curves; tick labels and lines in the theme's muted colours.
  const axisStyle = {
    nameTextStyle: { color: theme.fg },
    axisLine: { lineStyle: { color: theme.muted } },
    axisTick: { lineStyle: { color: theme.muted } },
    splitLine: { lineStyle: { color: theme.border } },
  };
  const w = Math.min(Math.max(view.smoothing, 0), 0.99);
  const logProblem = view.logY ? logScaleProblem(series) : null;
  const drawn = series.map((s) => ({ ...s, points: finite(s.points) }));
  const smooth = drawn.map((s) => (w > 0 ? finite(emaSmooth(s.points, w)) : s.points));
  const bands = drawn.map((s) => smoothBand(s.band ?? [], w));

  // Bounds over what is drawn: raw and smoothed values, and the stacked sums of each.
  const ys = [...drawn.map((s) => s.points), ...smooth].flatMap((points) => points.map(([, y]) => y));
  for (const band of bands) for (const [, lo, hi] of band) ys.push(lo, hi);
  for (const variant of [drawn.map((s) => s.points), smooth]) {
    const sums = new Map<string, number>();
    drawn.forEach((s, i) => {
      if (s.stack) for (const [x, y] of variant[i]) sums.set(`${s.stack}@${x}`, (sums.get(`${s.stack}@${x}`) ?? 0) + y);
    });
    ys.push(...sums.values());
  }
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  const log = view.logY && logProblem === null && ys.length > 0;

  const lin = niceLinearAxis(lo, hi);
  const tiny = lin.interval < 1e-3 || Math.max(Math.abs(lin.min), Math.abs(lin.max)) >= 1e6;
  const yAxis = log
    ? {
        type: 'log',
        logBase: 10,
        ...niceLogAxis(lo, hi),
        axisLabel: { color: theme.muted, formatter: (v: number) => significant(v, 3) },
      }
    : {
        type: 'value',
        min: lin.min,
        max: lin.max,
        interval: lin.interval,
        axisLabel: {
          color: theme.muted,
          formatter: (v: number) => (tiny ? significant(v, 3) : fixed(v, lin.decimals)),
        },
      };

  const out: object[] = [];
  drawn.forEach((s, i) => {
    const color = palette[i % palette.length];
    out.push({
      id: `${i}:${s.name}`,
      name: s.name,
      type: 'line',
      color,
      z: 3,
      data: smooth[i],
      showSymbol: s.points.length < 30,
      ...(s.stack ? { stack: s.stack, areaStyle: { opacity: 0.35 } } : {}),
      lineStyle: { width: s.dashed ? 1 : 2, ...(s.dashed ? { type: 'dashed' } : {}) },
    });
    // The band behind the line: its low edge without ink, then the span stacked on it and filled.
    if (bands[i].length > 0) {
      const helper = { name: s.name, type: 'line', color, z: 1, silent: true, showSymbol: false, stack: `band:${i}` };
      out.push(
        {
          ...helper,
          id: `${i}:${s.name}${BAND_LOW}`,
          data: bands[i].map(([x, lo]) => [x, lo]),
          lineStyle: { opacity: 0 },
          emphasis: { disabled: true },
        },
        {
          ...helper,
          id: `${i}:${s.name}${BAND}`,
          data: bands[i].map(([x, lo, hi]) => [x, hi - lo, hi]),
          lineStyle: { opacity: 0 },
          areaStyle: { opacity: 0.18 },
          emphasis: { disabled: true },
        },
      );
    }
    // The raw curve, faint behind the smoothed one (same name: one legend entry toggles both).
    if (w > 0) {
      out.push({
        id: `${i}:${s.name}${RAW}`,
        name: s.name,
        type: 'line',
        color,
        z: 2,
        silent: true,
        showSymbol: false,
        data: s.points,
        ...(s.stack ? { stack: s.stack + RAW } : {}),
        lineStyle: { width: 1, opacity: 0.25, ...(s.dashed ? { type: 'dashed' } : {}) },
        emphasis: { disabled: true },
      });
    }
  });

  return {
    option: {
      xAxis: {
        type: 'value',
        name: axes.xName,
        nameLocation: 'middle',
        nameGap: 24,
        minInterval: 1,
        ...axisStyle,
        axisLabel: { color: theme.muted, formatter: (v: number) => significant(v) },
      },
      yAxis: {
        ...yAxis,
        ...axisStyle,
        name: axes.yName,
        nameLocation: 'middle',
        nameRotate: 90,
        nameGap: 12,
        nameMoveOverlap: true,
      },
      tooltip: { formatter: (p: TooltipParam | TooltipParam[]) => tooltipText(p, axes.xName) },
      series: out,
    },
    log,
    logProblem,
    noData: noDataNote(series),
    description: `${w > 0 ? `Curves smoothed (exponential moving average, weight ${fixed(w, 2)}), raw values drawn faint behind them` : 'Raw values, not smoothed'}; ${log ? 'logarithmic' : 'linear'} y axis.`,
  };
}
