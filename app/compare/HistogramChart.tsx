/**
 * A distribution over steps as a heatmap: x the kept steps, y the bins (histograms.ts), colour the
 * samples in the cell (empty cells left blank). Its own echarts series (heatmap and its colour
 * scale), drawn through Chart.tsx's paced queue so it redraws like every other chart; its accessible
 * name and description say what it shows and the per-step means.
 */
import { HeatmapChart } from 'echarts/charts';
import { GridComponent, TooltipComponent, VisualMapContinuousComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useId, useMemo, useRef } from 'react';
import { usePacedChart } from '../charts/Chart';
import { useChartSettings } from '../state/chart-settings';
import type { Bins, Heatmap } from './histograms';

echarts.use([HeatmapChart, GridComponent, TooltipComponent, VisualMapContinuousComponent, CanvasRenderer]);

/** Viridis: perceptually even, and readable on a light and a dark page alike. */
const VIRIDIS = ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'];
const ignoreZoom = () => {};

interface HistogramChartProps {
  label: string;
  description: string;
  map: Heatmap;
  bins: Bins;
  yName: string;
}

export function HistogramChart({ label, description, map, bins, yName }: HistogramChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const descId = useId();
  const option = useMemo(
    () => ({
      legend: { show: false },
      grid: { left: 4, right: 70, top: 12, bottom: 30, outerBoundsMode: 'same', outerBoundsContain: 'all' },
      tooltip: {
        trigger: 'item',
        formatter: (p: { value: [number, number, number] }) =>
          `step ${map.steps[p.value[0]]}, ${yName} ${bins.labels[p.value[1]]}: ${p.value[2]} of ${map.samples[p.value[0]]} samples`,
      },
      dataZoom: [{}, { labelFormatter: (_: number, text: string) => text }],
      xAxis: { type: 'category', data: map.steps.map(String), name: 'step', nameLocation: 'middle', nameGap: 24 },
      yAxis: { type: 'category', data: bins.labels, name: yName, nameLocation: 'middle', nameRotate: 90, nameGap: 12 },
      visualMap: {
        type: 'continuous',
        min: 1,
        max: Math.max(map.max, 2),
        dimension: 2,
        orient: 'vertical',
        right: 0,
        top: 'middle',
        itemHeight: 120,
        calculable: false,
        text: [`${Math.max(map.max, 2)}`, '1'],
        inRange: { color: VIRIDIS },
      },
      series: [{ type: 'heatmap', data: map.cells, emphasis: { itemStyle: { borderColor: '#000', borderWidth: 1 } } }],
    }),
    [map, bins, yName],
  );
  const chart = usePacedChart(el, option, ignoreZoom);
  const zoomResets = useChartSettings((s) => s.zoomResets);
  useEffect(() => {
    if (zoomResets > 0) chart.current?.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
  }, [zoomResets, chart]);
  return (
    <div className="chart">
      <div ref={el} role="img" aria-label={label} aria-describedby={descId} style={{ width: '100%', height: 220 }} />
      <p id={descId} className="visually-hidden">
        {description}
      </p>
    </div>
  );
}
