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
}

interface ChartProps {
  /** Accessible name of the chart (its numbers are also given as text beside it). */
  label: string;
  series: Series[];
  xName?: string;
  yName?: string;
  height?: number;
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
    chart.current?.setOption(
      {
        animation: false,
        grid: { left: 50, right: 16, top: 30, bottom: 30 },
        tooltip: { trigger: 'axis' },
        legend: { top: 0 },
        xAxis: { type: 'value', name: xName, minInterval: 1 },
        yAxis: { type: 'value', name: yName, scale: true },
        series: series.map((s) => ({ name: s.name, type: 'line', showSymbol: s.points.length < 30, data: s.points })),
      },
      { replaceMerge: ['series'] },
    );
  }, [series, xName, yName]);

  return <div ref={el} role="img" aria-label={label} style={{ width: '100%', height }} />;
}
