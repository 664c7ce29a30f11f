/**
 * The Compare view's summary table: per line (a run, or a seed group) and per chosen metric, the
 * final value and the best one, sortable by any column. "Best" needs a direction, inferred from
 * the metric's name: higher is better for rewards, accuracy and pass rates, lower for losses,
 * times and failure counts; for any other metric (KL, entropy, lengths, norms) no direction is
 * assumed and both the min and the max are shown. A group's cell is the mean over its seeds of each
 * seed's value, with the seeds' range beside it. Pure.
 */
import type { Line } from './lines';
import { runRows } from './lines';

export type Direction = 'max' | 'min' | null;

/** Lower is better: losses, times, and episodes or samples that failed, were cut off or aborted. */
const LOWER =
  /(^|\/)loss(\/|$)|_loss$|_ms$|zero_std|truncated|aborted|corrupt|error|cancelled|timeout|max_turns|max_(prompt|response)_length/;
/** Spreads say nothing about better or worse (a reward's std is not a reward). */
const NEUTRAL = /std|var$/;
/** Higher is better: rewards, accuracy, pass rates, throughput, episodes the environment ended. */
const HIGHER = /reward|accuracy|pass|inside_frac|explained_var|tokens_per_s|completed|env_done/;

/** Which way a metric improves, by its name; null when the name does not say. */
export function metricDirection(key: string): Direction {
  if (LOWER.test(key)) return 'min';
  if (HIGHER.test(key) && !(NEUTRAL.test(key) && !key.endsWith('explained_var'))) return 'max';
  return null;
}

export type StatKey = 'final' | 'max' | 'min';

export interface Column {
  id: string;
  metric: string;
  stat: StatKey;
  /** The header under the metric's name: `final`, `best (max ↑)`, `best (min ↓)`, or `min` and `max` when no direction is known. */
  label: string;
}

/** Per metric: final, then best by its direction, or min and max when it has none. */
export function summaryColumns(metrics: readonly string[]): Column[] {
  return metrics.flatMap((metric) => {
    const col = (stat: StatKey, label: string): Column => ({ id: `${metric}:${stat}`, metric, stat, label });
    const dir = metricDirection(metric);
    const best =
      dir === 'max'
        ? [col('max', 'best (max ↑)')]
        : dir === 'min'
          ? [col('min', 'best (min ↓)')]
          : [col('min', 'min'), col('max', 'max')];
    return [col('final', 'final'), ...best];
  });
}

/** Final (last step's), max and min of values in step order; null when there are none. */
export function statsOf(values: readonly number[]): Record<StatKey, number> | null {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return null;
  return { final: finite.at(-1)!, max: Math.max(...finite), min: Math.min(...finite) };
}

export interface SummaryRow {
  id: string;
  name: string;
  /** Runs in the line (a group: its seeds). */
  runs: number;
  /** By column id: the value (a group's mean over its seeds), absent when the line has none. */
  cells: Record<string, number | undefined>;
  /** A group's range over its seeds, by column id. */
  spread: Record<string, [number, number] | undefined>;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function summaryRows(lines: readonly Line[], metrics: readonly string[]): SummaryRow[] {
  const columns = summaryColumns(metrics);
  return lines.map((line) => {
    const cells: SummaryRow['cells'] = {};
    const spread: SummaryRow['spread'] = {};
    for (const metric of metrics) {
      const stats = line.members.flatMap((m) => statsOf(runRows(m, metric).map((r) => r.value)) ?? []);
      if (stats.length === 0) continue;
      for (const c of columns.filter((c) => c.metric === metric)) {
        const vs = stats.map((s) => s[c.stat]);
        cells[c.id] = mean(vs);
        if (line.members.length > 1) spread[c.id] = [Math.min(...vs), Math.max(...vs)];
      }
    }
    return { id: line.id, name: line.name, runs: line.members.length, cells, spread };
  });
}

/** Rows sorted by `key` (`name` or a column id); rows without a value last, whichever the direction. */
export function sortSummary(rows: readonly SummaryRow[], key: string, dir: 'ascending' | 'descending'): SummaryRow[] {
  const sign = dir === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => {
    if (key === 'name') return sign * a.name.localeCompare(b.name);
    const [x, y] = [a.cells[key], b.cells[key]];
    if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
    return sign * (x - y);
  });
}
