import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildChart } from './chart-option';
import {
  contrastRatio,
  DARK_PALETTE,
  frameOption,
  LIGHT_CHART_THEME,
  LIGHT_PALETTE,
  legendLayout,
  themeFromStyle,
  type ChartTheme,
} from './chart-theme';

/** The custom properties of a block of CSS (`--name: value;`). */
function customProperties(block: string): Record<string, string> {
  return Object.fromEntries([...block.matchAll(/(--[\w-]+)\s*:\s*([^;]+);/g)].map((m) => [m[1], m[2].trim()]));
}

const css = readFileSync(new URL('../styles.css', import.meta.url), 'utf8');
const light = customProperties(/^:root\s*\{([^}]*)\}/m.exec(css)![1]);
const dark = {
  ...light,
  ...customProperties(/@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([^}]*)\}/.exec(css)![1]),
};

describe('the theme of styles.css', () => {
  it('names every token, follows the system preference and keeps color-scheme: light dark', () => {
    for (const name of [
      '--fg',
      '--muted',
      '--bg',
      '--panel',
      '--border',
      '--control',
      '--accent',
      '--ok',
      '--bad',
      '--warn',
    ])
      for (const theme of [light, dark]) expect(theme[name], name).toMatch(/^#[0-9a-f]{6}$/i);
    for (const name of ['--space-1', '--space-2', '--space-3', '--space-4', '--text-sm', '--text-md', '--text-lg'])
      expect(light[name], name).toMatch(/rem$/);
    expect(css).toMatch(/color-scheme: light dark;/);
    expect(dark['--bg']).not.toBe(light['--bg']);
  });

  it('has text of at least 4.5:1 on the page and on panels, in both themes (WCAG 1.4.3)', () => {
    for (const [scheme, t] of [
      ['light', light],
      ['dark', dark],
    ] as const) {
      for (const fg of ['--fg', '--muted', '--accent', '--ok', '--bad', '--warn'])
        for (const bg of ['--bg', '--panel'])
          expect(contrastRatio(t[fg], t[bg]), `${scheme} ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
      // A button's or a field's edge is what marks it out (WCAG 1.4.11: 3:1).
      for (const bg of ['--bg', '--panel'])
        expect(contrastRatio(t['--control'], t[bg]), `${scheme} --control on ${bg}`).toBeGreaterThanOrEqual(3);
      expect(
        contrastRatio(t['--accent-fg'], t['--accent']),
        `${scheme} --accent-fg on --accent`,
      ).toBeGreaterThanOrEqual(4.5);
    }
  });

  it("has chart lines of at least 3:1 on the theme's background and panels (WCAG 1.4.11)", () => {
    for (const [palette, t] of [
      [LIGHT_PALETTE, light],
      [DARK_PALETTE, dark],
    ] as const)
      for (const color of palette)
        for (const bg of ['--bg', '--panel'])
          expect(contrastRatio(color, t[bg]), `${color} on ${bg} ${t[bg]}`).toBeGreaterThanOrEqual(3);
  });

  it("matches the chart theme's fallback values (a page that cannot read its variables draws as the light theme)", () => {
    const read = themeFromStyle((name) => light[name] ?? '', false);
    expect(read).toEqual(LIGHT_CHART_THEME);
    expect(themeFromStyle(() => '  ', true)).toEqual({ ...LIGHT_CHART_THEME, dark: true });
  });
});

describe('contrastRatio', () => {
  it('is 21 for black on white, 1 for a colour on itself, and symmetric', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 10);
    expect(contrastRatio('#777777', '#777777')).toBe(1);
    expect(contrastRatio('#0969da', '#ffffff')).toBeCloseTo(contrastRatio('#ffffff', '#0969da'), 12);
    // WebAIM's checker: #767676 on white is 4.54:1, the lightest grey that passes AA.
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(() => contrastRatio('red', '#ffffff')).toThrow(/not a #rrggbb colour/);
  });
});

describe('legendLayout', () => {
  // PPO's critic panel (dashboard-panels.ts): four names that do not fit one row of a half-width chart.
  const critic = ['critic/returns/mean', 'critic/values/mean', 'critic/returns/min', 'critic/returns/max'];
  const sevenPx = (t: string) => t.length * 7;

  it('wraps names that do not fit into more rows, and puts the plot under the last one', () => {
    const one = legendLayout(['loss/total'], 480, sevenPx);
    expect(one).toEqual({ rows: 1, height: 24, gridTop: 32, extraHeight: 0 });
    const wrapped = legendLayout(critic, 480, sevenPx);
    // Items are 25 + 5 + 7·len + 2 wide (165, 158, 158, 158) with 10 between, in 480 − 18 = 462 px.
    expect(wrapped.rows).toBe(2);
    expect(wrapped.height).toBe(10 + 2 * 14 + 10);
    expect(wrapped.gridTop).toBe(wrapped.height + 8);
    expect(wrapped.extraHeight).toBe(24);
    expect(legendLayout(critic, 1200, sevenPx).rows).toBe(1);
  });

  it('never puts more on a row than its width holds, so no name is cut off or paged', () => {
    for (const width of [200, 320, 480, 700])
      for (const names of [critic, ['a', 'bb', 'mean + std', 'mean − std', 'reward/mean', 'x'.repeat(40)]]) {
        const { rows } = legendLayout(names, width, sevenPx);
        // Greedy rows, recomputed: each row's items and gaps fit in the width (or the row holds one item).
        let count = 1;
        let x = 0;
        for (const n of names) {
          const w = 32 + sevenPx(n);
          if (x > 0 && x + w > width - 18) [count, x] = [count + 1, 0];
          x += w + 10;
        }
        expect(rows, `${width}px`).toBe(count);
      }
  });

  it('counts a name once (the faint raw curve shares its legend entry) and gives an unmeasured chart a row per name', () => {
    expect(legendLayout(['a', 'a', 'b'], 480, sevenPx).rows).toBe(1);
    expect(legendLayout(critic, 0, sevenPx).rows).toBe(4);
    expect(legendLayout([], 480, sevenPx).rows).toBe(0);
  });
});

describe('frameOption and the theme in the axes', () => {
  const theme: ChartTheme = {
    fg: '#eeeeee',
    muted: '#999999',
    border: '#444444',
    panel: '#222222',
    bg: '#111111',
    dark: true,
  };

  it('draws a plain (wrapping) legend, never a scrolling one, with the grid under it', () => {
    const legend = legendLayout(['a', 'b'], 480, (t) => t.length * 7);
    const o = frameOption(theme, legend) as {
      legend: { type: string; textStyle: { color: string } };
      grid: { top: number };
    };
    expect(o.legend.type).toBe('plain');
    expect(o.legend.textStyle.color).toBe('#eeeeee');
    expect(o.grid.top).toBe(legend.gridTop);
  });

  it("colours ticks, axis names and series from the theme's values and palette", () => {
    const built = buildChart([{ name: 'x', points: [[1, 2]] }], { smoothing: 0, logY: false }, { xName: 'step' }, theme)
      .option as {
      xAxis: { axisLabel: { color: string }; nameTextStyle: { color: string } };
      yAxis: { axisLabel: { color: string }; splitLine: { lineStyle: { color: string } } };
      series: { color: string }[];
    };
    expect(built.xAxis.axisLabel.color).toBe('#999999');
    expect(built.xAxis.nameTextStyle.color).toBe('#eeeeee');
    expect(built.yAxis.axisLabel.color).toBe('#999999');
    expect(built.yAxis.splitLine.lineStyle.color).toBe('#444444');
    expect(built.series[0].color).toBe(DARK_PALETTE[0]);
    const lightBuilt = buildChart([{ name: 'x', points: [[1, 2]] }], { smoothing: 0, logY: false }, { xName: 'step' });
    expect((lightBuilt.option as { series: { color: string }[] }).series[0].color).toBe(LIGHT_PALETTE[0]);
  });
});
