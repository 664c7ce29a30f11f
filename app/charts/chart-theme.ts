/**
 * How a chart looks in the page's theme, as data: its colours (read from the CSS custom properties
 * of app/styles.css, light or dark after the system preference), a series palette readable on
 * either background, the legend laid out in wrapped rows (never paged, so no series is hidden
 * behind "1/2") and the grid placed under it. Pure: Chart.tsx reads the CSS variables and the
 * chart's width and passes them in. Contrast: WCAG 2.2 relative luminance (§1.4.3, §1.4.11).
 */
import type { EChartsCoreOption } from 'echarts/core';

export interface ChartTheme {
  /** Text (legend, axis names), as `--fg`. */
  fg: string;
  /** Tick labels and axis lines, as `--muted`. */
  muted: string;
  /** Split lines and the zoom slider's frame, as `--border`. */
  border: string;
  /** The tooltip's background, as `--panel`. */
  panel: string;
  /** The page's background, as `--bg`. */
  bg: string;
  /** The dark theme is on (the series palette follows it). */
  dark: boolean;
}

/** The values of styles.css, for tests and for a page whose variables cannot be read. */
export const LIGHT_CHART_THEME: ChartTheme = {
  fg: '#1f2328',
  muted: '#57606a',
  border: '#d0d7de',
  panel: '#f6f8fa',
  bg: '#ffffff',
  dark: false,
};

/**
 * Series colours, kept by index. Dark: Tableau 10 (each ≥ 3.8:1 on the dark background). Light:
 * Tableau's hues darkened where they were under 3:1 on white (orange, teal, olive, pink, grey), so
 * every line meets WCAG's 3:1 for graphics (chart-theme.test.ts checks both against styles.css).
 */
export const LIGHT_PALETTE = [
  '#1f77b4',
  '#c75400',
  '#d62728',
  '#0f8290',
  '#2ca02c',
  '#8a7d00',
  '#9467bd',
  '#c2399b',
  '#8c564b',
  '#6e6e6e',
];
export const DARK_PALETTE = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
];

export const paletteOf = (theme: ChartTheme) => (theme.dark ? DARK_PALETTE : LIGHT_PALETTE);

/** The theme from the page's custom properties (`read('--fg')`), each falling back to the light value when unset. */
export function themeFromStyle(read: (name: string) => string, dark: boolean): ChartTheme {
  const v = (name: string, fallback: string) => read(name).trim() || fallback;
  return {
    fg: v('--fg', LIGHT_CHART_THEME.fg),
    muted: v('--muted', LIGHT_CHART_THEME.muted),
    border: v('--border', LIGHT_CHART_THEME.border),
    panel: v('--panel', LIGHT_CHART_THEME.panel),
    bg: v('--bg', LIGHT_CHART_THEME.bg),
    dark,
  };
}

/** WCAG relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const m = /^#([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) throw new Error(`luminance: '${hex}' is not a #rrggbb colour`);
  const n = parseInt(m[1], 16);
  const [r, g, b] = [n >> 16, (n >> 8) & 255, n & 255].map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two `#rrggbb` colours, 1..21 (text needs 4.5, graphics 3). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * echarts' plain legend, as set in `frameOption`: a 25 × 14 icon, its text 5 px after it at 12 px
 * with a 14 px line, 10 px between items and between rows, 5 px padding, 4 px from each side.
 */
const LEGEND = { icon: 25, iconText: 5, gap: 10, row: 14, padding: 5, side: 4, font: 12 };
/** Room between the legend and the plot for the top tick label. */
const BELOW_LEGEND = 8;
/** The legend's font, for measuring its text as echarts draws it. */
export const LEGEND_FONT = `${LEGEND.font}px sans-serif`;

interface LegendLayout {
  /** Rows the legend wraps into at this width. */
  rows: number;
  /** The legend's height (px), padding included. */
  height: number;
  /** Where the plot starts: under the legend. */
  gridTop: number;
  /** Height added to the chart for the rows past the first, so the plot keeps its size. */
  extraHeight: number;
}

/**
 * The rows echarts' box layout (util/layout.ts `box`) puts `names` in at a chart `width`: an item
 * goes on the next row when it would pass the right edge. `textWidth` measures a name in
 * LEGEND_FONT; 2 px of slack per item keep a measurement's rounding from hiding one. A width of 0
 * (not measured yet) puts each name on a row of its own, which never hides one either.
 */
export function legendLayout(names: string[], width: number, textWidth: (text: string) => number): LegendLayout {
  const unique = [...new Set(names)];
  const max = width - 2 * LEGEND.side - 2 * LEGEND.padding;
  let rows = unique.length > 0 ? 1 : 0;
  let x = 0;
  for (const name of unique) {
    const w = LEGEND.icon + LEGEND.iconText + textWidth(name) + 2;
    if (x > 0 && (width <= 0 || x + w > max)) {
      rows += 1;
      x = 0;
    }
    x += w + LEGEND.gap;
  }
  const shown = Math.max(rows, 1);
  const height = 2 * LEGEND.padding + shown * LEGEND.row + (shown - 1) * LEGEND.gap;
  return { rows, height, gridTop: height + BELOW_LEGEND, extraHeight: (shown - 1) * (LEGEND.row + LEGEND.gap) };
}

/**
 * The parts of the option that follow the theme and the legend's rows: a plain legend (wrapping,
 * never scrolling), the grid under it, and the tooltip and zoom slider in the theme's colours.
 */
export function frameOption(theme: ChartTheme, legend: LegendLayout): EChartsCoreOption {
  return {
    textStyle: { color: theme.fg },
    grid: { top: legend.gridTop },
    legend: {
      type: 'plain',
      top: 0,
      left: LEGEND.side,
      right: LEGEND.side,
      padding: LEGEND.padding,
      itemGap: LEGEND.gap,
      itemWidth: LEGEND.icon,
      itemHeight: LEGEND.row,
      textStyle: { color: theme.fg, fontSize: LEGEND.font, lineHeight: LEGEND.row, fontFamily: 'sans-serif' },
      inactiveColor: theme.border,
    },
    tooltip: { backgroundColor: theme.panel, borderColor: theme.border, textStyle: { color: theme.fg } },
    dataZoom: [{}, { borderColor: theme.border, textStyle: { color: theme.muted } }],
  };
}
