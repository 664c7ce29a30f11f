/**
 * One Flow-GRPO step on the plane: the run's reward field as an image underneath, a faint trail of
 * the previous steps' points, this step's points coloured by advantage sign or by group (a legend
 * toggles each set), and the target's outline, over the square box with equal x and y scale. Its
 * accessible name and the summary beside it give the step, the mean reward, the fraction inside
 * and how many points were trained. Owns its echarts instance (Chart.tsx is for line charts) and
 * registers only what it draws; the option is built in flow-plot.ts.
 */
import { LineChart, ScatterChart, CustomChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import type { FlowCloud, FlowField } from '../../worker/protocol';
import {
  FLOW_PLOT_SIZE,
  buildFlowOption,
  cloudSummary,
  describeCloud,
  fieldPixels,
  percent,
  type ColorBy,
} from './flow-plot';
import { fixed } from '../shared/format';

echarts.use([ScatterChart, LineChart, CustomChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

interface FlowPlotProps {
  cloud: FlowCloud;
  field: FlowField;
  /** Earlier steps' clouds, oldest first (empty: no trail). */
  trail: FlowCloud[];
}

/** The field as a size × size canvas, which the plot stretches over the box. */
function fieldCanvas(field: FlowField): HTMLCanvasElement | null {
  const canvas = document.createElement('canvas');
  canvas.width = field.size;
  canvas.height = field.size;
  const ctx = canvas.getContext('2d');
  if (!ctx) {
    console.warn('FlowPlot: no 2-D canvas context; the reward field is not drawn');
    return null;
  }
  ctx.putImageData(new ImageData(fieldPixels(field), field.size, field.size), 0, 0);
  return canvas;
}

export function FlowPlot({ cloud, field, trail }: FlowPlotProps) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  const [colorBy, setColorBy] = useState<ColorBy>('advantage');
  const image = useMemo(() => fieldCanvas(field), [field]);
  const option = useMemo(
    () => buildFlowOption({ cloud, field, trail, colorBy, image }),
    [cloud, field, trail, colorBy, image],
  );
  const summary = useMemo(() => cloudSummary(cloud), [cloud]);
  const summaryId = useId();
  const colorName = useId();

  useEffect(() => {
    if (!el.current) return;
    const instance = echarts.init(el.current, undefined, { renderer: 'canvas' });
    chart.current = instance;
    return () => {
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    // Series and legend entries change with the colouring; the legend's picks (by name) are kept.
    chart.current?.setOption(option, { replaceMerge: ['series'] });
  }, [option]);

  const kind = field.target.kind === 'ring' ? 'the ring' : `${field.target.discs.length} discs`;
  return (
    <div className="flow-plot">
      <div
        ref={el}
        role="img"
        aria-label={describeCloud(summary)}
        aria-describedby={summaryId}
        data-testid="flow-plot"
        style={FLOW_PLOT_SIZE}
      />
      <div className="flow-side">
        <fieldset>
          <legend>Colour points by</legend>
          {(['advantage', 'group'] as const).map((by) => (
            <label key={by}>
              <input
                type="radio"
                name={colorName}
                value={by}
                checked={colorBy === by}
                onChange={() => setColorBy(by)}
              />{' '}
              {by === 'advantage' ? 'advantage sign' : 'group'}
            </label>
          ))}
        </fieldset>
        <dl className="facts" id={summaryId} data-testid="flow-summary">
          <dt>Step</dt>
          <dd>{summary.step}</dd>
          <dt>Points</dt>
          <dd>
            {summary.n} points ({summary.groups} groups × {summary.group})
          </dd>
          <dt>Mean reward</dt>
          <dd>{fixed(summary.meanReward, 3)}</dd>
          <dt>Inside the target</dt>
          <dd>
            {summary.inside} of {summary.n} ({percent(summary.inside, summary.n)}; reward 1)
          </dd>
          <dt>Trained</dt>
          <dd>
            {summary.trained} of {summary.n} (advantage ≠ 0)
            {summary.trained < summary.n &&
              `; ${summary.n - summary.trained} not, in groups whose rewards were all equal`}
          </dd>
        </dl>
        <p className="flow-note">
          Underneath: the run's reward over [−{field.box}, {field.box}]², light (0) to green (1), with the outline of{' '}
          {kind}.
          {trail.length > 0 &&
            ` Grey dots: the points of the ${trail.length} previous ${trail.length === 1 ? 'step' : 'steps'}, fainter the older.`}
        </p>
      </div>
    </div>
  );
}
