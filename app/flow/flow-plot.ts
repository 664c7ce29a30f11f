/**
 * The pure part of the Flow view's plot (FlowPlot.tsx): a step's cloud summarised and described
 * in words, the target's outline as closed polylines, the earlier steps a trail shows, the reward
 * field as RGBA pixels, and the echarts option that layers them (field image, trail, points,
 * outline) over the square box. Not the echarts instance (FlowPlot owns it) and not the reward
 * itself: the worker scores the field (worker/flow/reward.ts); here inside means reward 1.
 */
import type { FlowCloud, FlowField } from '../../worker/protocol';
import { signed } from '../shared/estimate-text';
import { fixed } from '../shared/format';

interface CloudSummary {
  step: number;
  /** Points in the cloud, groups and samples per group. */
  n: number;
  groups: number;
  group: number;
  meanReward: number;
  /** Points with reward 1: inside the target (the smooth reward equals 1 only there). */
  inside: number;
  /** Points with a nonzero advantage; the rest belong to groups whose rewards were all equal. */
  trained: number;
}

export function cloudSummary(c: FlowCloud): CloudSummary {
  const n = c.rewards.length;
  if (c.points.length !== 2 * n || c.advantages.length !== n) {
    throw new Error(
      `cloudSummary: step ${c.step} has ${c.points.length} coordinates, ${n} rewards and ${c.advantages.length} advantages; expected (N, 2), N, N`,
    );
  }
  let sum = 0;
  let inside = 0;
  let trained = 0;
  for (let i = 0; i < n; i++) {
    sum += c.rewards[i];
    if (c.rewards[i] === 1) inside++;
    if (c.advantages[i] !== 0) trained++;
  }
  return {
    step: c.step,
    n,
    groups: c.group > 0 ? Math.ceil(n / c.group) : 0,
    group: c.group,
    meanReward: n ? sum / n : NaN,
    inside,
    trained,
  };
}

export const percent = (k: number, n: number) => (n ? `${fixed((100 * k) / n, 0)}%` : '–');

/** The plot's accessible name: the step, the mean reward and the fraction inside. */
export function describeCloud(s: CloudSummary): string {
  return `Sample cloud of step ${s.step}: ${s.n} points, mean reward ${fixed(s.meanReward, 3)}, ${percent(s.inside, s.n)} inside the target (${s.inside} of ${s.n})`;
}

/** The target's edges, each a closed polyline of `segments` + 1 points: a ring's two circles, or one circle per disc. */
export function targetOutline(t: FlowField['target'], segments = 96): [number, number][][] {
  if (!Number.isInteger(segments) || segments < 3)
    throw new Error(`targetOutline: segments = ${segments}; expected an integer ≥ 3`);
  const circle = ([cx, cy]: [number, number], r: number) =>
    Array.from({ length: segments + 1 }, (_, k): [number, number] => {
      const a = (2 * Math.PI * (k % segments)) / segments; // k = segments repeats the first point exactly
      return [cx + r * Math.cos(a), cy + r * Math.sin(a)];
    });
  return t.kind === 'ring'
    ? [circle(t.center, t.inner), circle(t.center, t.outer)]
    : t.discs.map((d) => circle(d.center, d.radius));
}

/** The up to `n` stored steps just before `step`, oldest first (none when `step` is not stored). */
export function trailSteps(steps: readonly number[], step: number | null, n = 5): number[] {
  const i = step === null ? -1 : steps.indexOf(step);
  return i < 0 ? [] : steps.slice(Math.max(0, i - n), i);
}

/** Reward 0 → near white, 1 → green: the field stays light under the points. */
const LOW = [250, 250, 250];
const HIGH = [110, 231, 150];

/**
 * The field as RGBA pixels of a size × size image, top row first: the field's row 0 is y = −box,
 * so it becomes the image's bottom row. Rewards are clamped to [0, 1].
 */
export function fieldPixels(f: FlowField): Uint8ClampedArray<ArrayBuffer> {
  const { size } = f;
  if (f.values.length !== size * size)
    throw new Error(`fieldPixels: ${f.values.length} values; expected size² = ${size * size}`);
  const out = new Uint8ClampedArray(size * size * 4);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const v = Math.min(1, Math.max(0, f.values[r * size + c] || 0));
      const o = 4 * ((size - 1 - r) * size + c);
      for (let k = 0; k < 3; k++) out[o + k] = Math.round(LOW[k] + v * (HIGH[k] - LOW[k]));
      out[o + 3] = 255;
    }
  }
  return out;
}

export type ColorBy = 'advantage' | 'group';

/** Sign of the advantage, each with its own colour and symbol (not colour alone). */
const SIGNS = [
  { name: 'advantage > 0', test: (a: number) => a > 0, color: '#1d4ed8', symbol: 'circle' },
  { name: 'advantage < 0', test: (a: number) => a < 0, color: '#c2410c', symbol: 'diamond' },
  { name: 'not trained (advantage 0)', test: (a: number) => a === 0, color: '#52525b', symbol: 'emptyCircle' },
] as const;
const GROUP_COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];
export const TRAIL_NAME = 'previous steps';
export const OUTLINE_NAME = 'target outline';
const FIELD_NAME = 'reward field';

type Point = [x: number, y: number, index: number];

/** The cloud's points as scatter series, one per advantage sign or per group; each datum carries its index. */
export function pointSeries(
  c: FlowCloud,
  by: ColorBy,
): { name: string; color: string; symbol: string; data: Point[] }[] {
  const n = c.rewards.length;
  const at = (i: number): Point => [c.points[2 * i], c.points[2 * i + 1], i];
  const all = Array.from({ length: n }, (_, i) => i);
  if (by === 'advantage')
    return SIGNS.map((s) => ({
      name: s.name,
      color: s.color,
      symbol: s.symbol,
      data: all.filter((i) => s.test(c.advantages[i])).map(at),
    }));
  const groups = Math.ceil(n / Math.max(1, c.group));
  return Array.from({ length: groups }, (_, g) => ({
    name: `group ${g + 1}`,
    color: GROUP_COLORS[g % GROUP_COLORS.length],
    symbol: 'circle',
    data: all.slice(g * c.group, (g + 1) * c.group).map(at),
  }));
}

/** One point's tooltip: its group and sample, reward and advantage. */
export function pointText(c: FlowCloud, i: number): string {
  const g = Math.floor(i / c.group);
  return `group ${g + 1}, sample ${i - g * c.group + 1}: (${fixed(c.points[2 * i], 2)}, ${fixed(c.points[2 * i + 1], 2)}), reward ${fixed(c.rewards[i], 3)}, advantage ${signed(c.advantages[i])}`;
}

interface FlowPlotInput {
  cloud: FlowCloud;
  field: FlowField;
  /** Earlier steps' clouds, oldest first; drawn fainter the older they are. */
  trail: FlowCloud[];
  colorBy: ColorBy;
  /** The field drawn as an image (a canvas of fieldPixels); null draws no field. */
  image: HTMLCanvasElement | null;
}

/** The grid in pixels: with the container FLOW_PLOT_SIZE, the box is a 360 × 360 square (equal x and y scale); the legend wraps below it. */
export const FLOW_PLOT_SIZE = { width: 420, height: 460 };
const GRID = { left: 44, right: 16, top: 16, bottom: 84 };

interface RenderApi {
  coord: (p: [number, number]) => number[];
}

/** The echarts option: field image, trail, points, outline, bottom to top, over x, y ∈ [−box, box]. */
export function buildFlowOption({ cloud, field, trail, colorBy, image }: FlowPlotInput) {
  const box = field.box;
  // The box's edges (±1.25) get no label of their own: the nice ticks inside it do.
  const axis = () => ({
    type: 'value' as const,
    min: -box,
    max: box,
    axisLine: { onZero: false },
    axisLabel: { formatter: (v: number) => fixed(v, 1), showMinLabel: false, showMaxLabel: false },
    splitLine: { show: false },
  });
  const points = pointSeries(cloud, colorBy);
  const legend = [...points.map((p) => p.name), ...(trail.length ? [TRAIL_NAME] : []), OUTLINE_NAME];
  const fieldSeries = image
    ? [
        {
          type: 'custom' as const,
          name: FIELD_NAME,
          silent: true,
          z: 0,
          data: [[-box, -box]],
          renderItem: (_: unknown, api: RenderApi) => {
            const [x0, y0] = api.coord([-box, box]);
            const [x1, y1] = api.coord([box, -box]);
            return { type: 'image', style: { image, x: x0, y: y0, width: x1 - x0, height: y1 - y0 } };
          },
        },
      ]
    : [];
  const trailSeries = trail.length
    ? [
        {
          type: 'scatter' as const,
          name: TRAIL_NAME,
          silent: true,
          z: 1,
          symbolSize: 4,
          itemStyle: { color: '#71717a' },
          data: trail.flatMap((c, k) => {
            const opacity = 0.12 + (0.3 * (k + 1)) / trail.length;
            return Array.from({ length: c.rewards.length }, (_, i) => ({
              value: [c.points[2 * i], c.points[2 * i + 1]],
              itemStyle: { opacity },
            }));
          }),
        },
      ]
    : [];
  const outline = targetOutline(field.target).map((line) => ({
    type: 'line' as const,
    name: OUTLINE_NAME,
    silent: true,
    z: 3,
    symbol: 'none',
    lineStyle: { color: '#166534', width: 1.5 },
    itemStyle: { color: '#166534' },
    data: line,
  }));
  return {
    animation: false,
    grid: { ...GRID, outerBoundsMode: 'none' },
    xAxis: axis(),
    yAxis: axis(),
    // Two rows fit below the grid; more entries (many groups) scroll.
    legend: {
      type: legend.length > 10 ? 'scroll' : 'plain',
      bottom: 0,
      left: 'center',
      itemWidth: 14,
      itemHeight: 10,
      itemGap: 10,
      data: legend,
    },
    tooltip: {
      trigger: 'item',
      formatter: (p: { value?: unknown }) =>
        Array.isArray(p.value) && p.value.length === 3 ? pointText(cloud, p.value[2] as number) : '',
    },
    series: [
      ...fieldSeries,
      ...trailSeries,
      ...points.map((p) => ({
        type: 'scatter' as const,
        name: p.name,
        z: 2,
        symbol: p.symbol,
        symbolSize: 8,
        itemStyle: { color: p.color },
        data: p.data,
      })),
      ...outline,
    ],
  };
}
