/**
 * The one echarts wrapper: owns the instance, registers only the pieces used (line charts, grid,
 * tooltip, legend, canvas), resizes with its box, and takes series as plain data.
 */
import { LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

echarts.use([LineChart, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer]);

export interface Series {
  name: string;
  points: [number, number][];
  /** Series with the same `stack` are drawn as stacked areas (parts of a whole, e.g. step time). */
  stack?: string;
  /** A dashed line, for bounds drawn around another series (mean ± std). */
  dashed?: boolean;
}

interface ChartProps {
  /** Accessible name of the chart (its numbers are also given as text beside it). */
  label: string;
  series: Series[];
  xName?: string;
  yName?: string;
  height?: number;
}

/** Axis ticks: an exponent for tiny or huge values (a loss near 0 otherwise reads -0.0000000006), else the tick without float noise. */
function axisNumber(v: number): string {
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? Number(v.toPrecision(3)).toExponential() : String(Number(v.toPrecision(12)));
}

export function Chart({ label, series, xName = 'step', yName, height = 220 }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    if (!el.current) return;
    const instance = echarts.init(el.current, undefined, { renderer: 'canvas' });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(el.current);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    // Zooming the y axis to the data (scale) would magnify float noise on a flat curve (an ESS of 1 ± 2e-10): start such an axis at 0.
    const ys = series.flatMap((s) => s.points.map(([, y]) => y)).filter(Number.isFinite);
    const lo = Math.min(...ys);
    const hi = Math.max(...ys);
    const flat = ys.length > 0 && hi - lo <= 1e-6 * Math.max(Math.abs(lo), Math.abs(hi));
    chart.current?.setOption(
      {
        animation: false,
        grid: { left: 50, right: 16, top: 30, bottom: 30 },
        tooltip: { trigger: 'axis' },
        legend: { top: 0 },
        xAxis: { type: 'value', name: xName, minInterval: 1 },
        yAxis: { type: 'value', name: yName, scale: !flat, axisLabel: { formatter: axisNumber } },
        series: series.map((s) => ({
          name: s.name,
          type: 'line',
          showSymbol: s.points.length < 30,
          data: s.points,
          ...(s.stack ? { stack: s.stack, areaStyle: { opacity: 0.35 } } : {}),
          ...(s.dashed ? { lineStyle: { type: 'dashed', width: 1 } } : {}),
        })),
      },
      { replaceMerge: ['series'] },
    );
  }, [series, xName, yName]);

  return <div ref={el} role="img" aria-label={label} style={{ width: '100%', height }} />;
}
