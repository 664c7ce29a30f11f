import { describe, expect, it } from 'vitest';
import {
  buildChart,
  emaSmooth,
  logScaleProblem,
  niceLinearAxis,
  niceLogAxis,
  noDataNote,
  tooltipText,
  type Series,
} from './chart-option';

type Drawn = {
  id: string;
  name: string;
  color: string;
  data: [number, number][];
  lineStyle: { opacity?: number };
  stack?: string;
  areaStyle?: object;
};
type Axis = {
  type: string;
  min: number;
  max: number;
  interval?: number;
  axisLabel: { formatter: (v: number) => string };
};
const parts = (b: ReturnType<typeof buildChart>) => b.option as unknown as { series: Drawn[]; yAxis: Axis };
const view = { smoothing: 0.6, logY: false };
const axes = { xName: 'step', yName: 'loss' };

describe('emaSmooth (TensorBoard)', () => {
  it('debiases the moving average by 1 - w^n: hand values', () => {
    const s = emaSmooth(
      [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      0.5,
    );
    // last: 0.5, 1.25, 2.125; divided by 1 - 0.5^n = 0.5, 0.75, 0.875
    expect(s.map(([x]) => x)).toEqual([1, 2, 3]);
    expect(s[0][1]).toBeCloseTo(1, 12);
    expect(s[1][1]).toBeCloseTo(1.25 / 0.75, 12);
    expect(s[2][1]).toBeCloseTo(2.125 / 0.875, 12);
    const t = emaSmooth(
      [
        [1, 1],
        [2, 0],
      ],
      0.6,
    ); // last 0.4 / 0.4, then 0.24 / 0.64
    expect(t[1][1]).toBeCloseTo(0.375, 12);
  });

  it('is the identity at weight 0 and keeps a constant series constant', () => {
    const pts: [number, number][] = [
      [1, 0.3],
      [2, -1.7],
      [5, 4],
    ];
    expect(emaSmooth(pts, 0)).toEqual(pts);
    expect(
      emaSmooth(
        [
          [1, 0.1],
          [2, 0.1],
          [3, 0.1],
        ],
        0.99,
      ),
    ).toEqual([
      [1, 0.1],
      [2, 0.1],
      [3, 0.1],
    ]);
  });

  it('passes non-finite values through without averaging them in', () => {
    const s = emaSmooth(
      [
        [1, 1],
        [2, NaN],
        [3, Infinity],
        [4, 3],
      ],
      0.5,
    );
    expect(s[1][1]).toBeNaN();
    expect(s[2][1]).toBe(Infinity);
    expect(s[3][1]).toBeCloseTo((0.5 * 0.5 + 0.5 * 3) / 0.75, 12); // n = 2 at step 4
  });
});

describe('axis bounds', () => {
  it('rounds data-scaled bounds to multiples of a 1-2-5 step', () => {
    expect(niceLinearAxis(0.1234, 0.4567)).toEqual({ min: 0.1, max: 0.5, interval: 0.1, decimals: 1 });
    expect(niceLinearAxis(3.2013, 3.2491)).toEqual({ min: 3.2, max: 3.25, interval: 0.01, decimals: 2 });
    expect(niceLinearAxis(120, 980)).toEqual({ min: 0, max: 1000, interval: 200, decimals: 0 });
    expect(niceLinearAxis(0.02, 0.97)).toEqual({ min: 0, max: 1, interval: 0.2, decimals: 1 });
    expect(niceLinearAxis(-0.25, 1)).toEqual({ min: -0.5, max: 1, interval: 0.5, decimals: 1 });
  });

  it('draws a flat curve (float noise included) from 0, and never a -0 bound', () => {
    expect(niceLinearAxis(1 - 2e-10, 1 + 2e-10)).toEqual({ min: 0, max: 1, interval: 0.2, decimals: 1 });
    expect(niceLinearAxis(0, 0)).toEqual({ min: 0, max: 1, interval: 0.2, decimals: 1 });
    expect(Object.is(niceLinearAxis(-1e-9, 0.5).min, -0)).toBe(false);
  });

  it('spans whole decades on a log axis', () => {
    expect(niceLogAxis(0.003, 2.5)).toEqual({ min: 0.001, max: 10 });
    expect(niceLogAxis(100, 100)).toEqual({ min: 100, max: 1000 });
  });
});

describe('buildChart', () => {
  const loss: Series = {
    name: 'loss/policy',
    points: [
      [1, 0.5],
      [2, 0.3],
      [3, 0.35],
    ],
  };

  it('draws the smoothed curve over the faint raw one, same colour and legend name', () => {
    const { series } = parts(buildChart([loss], view, axes));
    expect(series.map((s) => [s.name, s.id])).toEqual([
      ['loss/policy', '0:loss/policy'],
      ['loss/policy', '0:loss/policy (raw)'],
    ]);
    expect(series[0].color).toBe(series[1].color);
    expect(series[1].lineStyle.opacity).toBe(0.25);
    expect(series[1].data).toEqual(loss.points);
    expect(series[0].data.map(([, y]) => y)).toEqual(emaSmooth(loss.points, 0.6).map(([, y]) => y));
    expect(parts(buildChart([loss], { ...view, smoothing: 0 }, axes)).series.map((s) => s.id)).toEqual([
      '0:loss/policy',
    ]);
  });

  it('stacks raw curves apart from the smoothed ones and bounds the axis by the stacked sum', () => {
    const a: Series = {
      name: 'perf/sample_ms',
      points: [
        [1, 100],
        [2, 120],
      ],
      stack: 'time',
    };
    const b: Series = {
      name: 'perf/train_ms',
      points: [
        [1, 50],
        [2, 60],
      ],
      stack: 'time',
    };
    const built = parts(buildChart([a, b], view, axes));
    expect(built.series.map((s) => s.stack)).toEqual(['time', 'time (raw)', 'time', 'time (raw)']);
    expect(built.yAxis.max).toBeGreaterThanOrEqual(180);
  });

  it('uses a log axis only when every value is > 0, and says why not', () => {
    const on = buildChart([loss], { ...view, logY: true }, axes);
    expect(on.log).toBe(true);
    expect(parts(on).yAxis).toMatchObject({ type: 'log', min: 0.1, max: 1 });
    const withZero = buildChart(
      [
        loss,
        {
          name: 'rl/pg_clipfrac',
          points: [
            [1, 0],
            [2, 0.1],
          ],
        },
      ],
      { ...view, logY: true },
      axes,
    );
    expect(withZero.log).toBe(false);
    expect(parts(withZero).yAxis.type).toBe('value');
    expect(withZero.logProblem).toBe('Log scale not used: rl/pg_clipfrac has values ≤ 0 (lowest 0).');
    expect(logScaleProblem([{ name: 'r', points: [[1, -0.25]] }])).toBe(
      'Log scale not used: r has values ≤ 0 (lowest -0.25).',
    );
    expect(buildChart([loss], view, axes).logProblem).toBeNull();
  });

  it('labels ticks with the decimals of the interval and never prints -0', () => {
    const axis = parts(
      buildChart(
        [
          {
            name: 'reward/mean',
            points: [
              [1, -0.12],
              [2, 0.41],
            ],
          },
        ],
        { ...view, smoothing: 0 },
        axes,
      ),
    ).yAxis;
    expect([axis.min, axis.max, axis.interval]).toEqual([-0.2, 0.6, 0.2]); // 0.53 / 5 = 0.106 → interval 0.2
    expect([-0.2, -0, -1e-17, 0.4].map(axis.axisLabel.formatter)).toEqual(['-0.2', '0.0', '0.0', '0.4']);
  });

  it('says in words which series have no points', () => {
    expect(noDataNote([loss])).toBeNull();
    expect(buildChart([loss, { name: 'loss/sft', points: [] }], view, axes).noData).toBe(
      'No data to draw for loss/sft (not reported, or not yet).',
    );
    expect(noDataNote([{ name: 'x', points: [[1, NaN]] }])).toBe('No data to draw for x (not reported, or not yet).');
    expect(noDataNote([])).toBe('Nothing to plot.');
  });

  it('describes the smoothing and the axis for screen readers', () => {
    expect(buildChart([loss], view, axes).description).toBe(
      'Curves smoothed (exponential moving average, weight 0.60), raw values drawn faint behind them; linear y axis.',
    );
  });
});

describe('buildChart bands', () => {
  const mean: Series = {
    name: 'group',
    points: [
      [1, 0.5],
      [2, 0.6],
    ],
    band: [
      [1, 0.25, 0.75],
      [2, 0.5, 1.5],
    ],
  };
  it('draws a band as its low edge plus a filled span stacked on it, behind the line, and bounds the axis by it', () => {
    const built = parts(buildChart([mean], { ...view, smoothing: 0 }, axes));
    expect(built.series.map((s) => s.id)).toEqual(['0:group', '0:group (band low)', '0:group (band)']);
    expect(built.series[1].data).toEqual([
      [1, 0.25],
      [2, 0.5],
    ]);
    expect(built.series[2].data).toEqual([
      [1, 0.5, 0.75],
      [2, 1, 1.5],
    ]);
    expect(built.series[1].stack).toBe(built.series[2].stack);
    expect(built.series[2].areaStyle).toBeDefined();
    expect(built.yAxis.max).toBeGreaterThanOrEqual(1.5);
    expect(built.yAxis.min).toBeLessThanOrEqual(0.25);
  });
  it('refuses a log axis when the band reaches 0', () => {
    const low: Series = { ...mean, band: [[1, 0, 1]] };
    expect(buildChart([low], { ...view, logY: true }, axes).log).toBe(false);
  });
});

describe('tooltipText', () => {
  it('names the x axis and gives a band as a range beside the value, helper series left out', () => {
    const text = tooltipText(
      [
        { seriesId: '0:g', seriesName: 'g', marker: '●', value: [12.5, 0.5] },
        { seriesId: '0:g (band low)', seriesName: 'g', marker: '●', value: [12.5, 0.25] },
        { seriesId: '0:g (band)', seriesName: 'g', marker: '●', value: [12.5, 0.5, 0.75] },
      ],
      'seconds',
    );
    expect(text).toBe('seconds 12.5<br/>●g: 0.5 (range 0.25 – 0.75)');
  });

  it('lists each series once: smoothed value, raw value beside it', () => {
    const text = tooltipText([
      { seriesId: '0:loss', seriesName: 'loss', marker: '●', value: [3, 0.123456] },
      { seriesId: '0:loss (raw)', seriesName: 'loss', marker: '●', value: [3, -0.00000001] },
      { seriesId: '1:a<b', seriesName: 'a<b', marker: '●', value: [3, 2] },
    ]);
    expect(text).toBe('step 3<br/>●loss: 0.1235 (raw -1e-8)<br/>●a&#60;b: 2');
  });
});
