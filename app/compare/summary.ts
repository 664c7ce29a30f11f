/**
 * The Compare view's summary table: per line (a run, or a seed group) and per chosen metric, the
 * final value and the best one, sortable by any column. "Best" needs a direction, which only the
 * metrics in METRIC_DIRECTIONS have: higher is better for rewards, accuracy and pass rates, lower
 * for the supervised losses, times and failures. Any other metric (the RL losses, KL, entropy,
 * lengths, norms, a metric added later) gets no best: its min and max are shown. A group's cell is
 * the mean over its seeds of each seed's value, with the seeds' range beside it. Pure.
 */
import { rangeText, readable } from '../shared/format';
import type { Line } from './lines';
import { runRows } from './lines';

type Direction = 'max' | 'min' | null;

/**
 * The metrics with a better direction, by exact key or pattern; the first that matches decides.
 * Deliberately short: a metric is listed only when more (or less) of it is better whatever the
 * run. Not listed, so no best: `loss/policy`, `loss/total`, `loss/kl`, `loss/value`, `critic/vf_loss`
 * (a surrogate objective's value: its advantages are centred, it rises and falls as the batch does,
 * and a lower one is not a better policy), KL and mismatch figures, entropy, lengths, norms, the
 * zero-std share (it rises both when a run fails everything and when it solves everything).
 */
const METRIC_DIRECTIONS: readonly { match: string | RegExp; direction: 'max' | 'min' }[] = [
  { match: 'reward/mean', direction: 'max' },
  { match: 'reward/inside_frac', direction: 'max' },
  { match: 'eval/accuracy', direction: 'max' },
  { match: 'eval/reward_mean', direction: 'max' },
  { match: 'eval/inside_frac', direction: 'max' },
  { match: /^eval\/pass@/, direction: 'max' },
  { match: 'critic/vf_explained_var', direction: 'max' },
  { match: 'perf/tokens_per_s', direction: 'max' },
  { match: 'episodes/termination_share/env_done', direction: 'max' },
  // A supervised loss is the fit to fixed targets (SFT's tokens, DPO's preferred answers): lower fits better.
  { match: 'loss/sft', direction: 'min' },
  { match: 'loss/dpo', direction: 'min' },
  { match: /^perf\/\w+_ms$/, direction: 'min' },
  { match: 'response/truncated_frac', direction: 'min' },
  { match: 'eval/errors', direction: 'min' },
  { match: 'episodes/corrupt', direction: 'min' },
  { match: 'episodes/aborted_groups', direction: 'min' },
  // Every other ending (worker/rl/types.ts TerminationReason) cut the episode short: a budget or a failure.
  { match: /^episodes\/termination_share\//, direction: 'min' },
];

/** Which way a metric improves (METRIC_DIRECTIONS); null when it has no better direction. */
export function metricDirection(key: string): Direction {
  const rule = METRIC_DIRECTIONS.find((r) => (typeof r.match === 'string' ? r.match === key : r.match.test(key)));
  return rule?.direction ?? null;
}

type StatKey = 'final' | 'max' | 'min';

interface Column {
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

interface SummaryRow {
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

/** A cell as the table writes it: the value ('–' when the line has none) and a group's range over its seeds, or null. */
export function cellText(row: SummaryRow, columnId: string): { value: string; range: string | null } {
  const v = row.cells[columnId];
  const range = row.spread[columnId];
  return { value: v === undefined ? '–' : readable(v), range: range ? rangeText(range[0], range[1]) : null };
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
