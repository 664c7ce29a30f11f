/**
 * What a Compare panel draws: one line per run, or, grouped, one line per set of runs that differ
 * only in their seed: the mean over the seeds at each step, with the min–max range as a band (as
 * Weights & Biases groups runs). x is the step, or the seconds the run spent computing up to it
 * (compare.ts `runSeconds`: pauses and stops left out; a group's x is its members' mean at that step). Pure.
 */
import type { Series } from '../charts/Chart';
import { ACCURACY, flattenConfig, runSeconds, valueAt, type CompareRun } from './compare';

export type XAxisKind = 'step' | 'wall';

/** A line of a panel: one run, or the runs of a seed group. */
export interface Line {
  id: string;
  name: string;
  members: CompareRun[];
}

/** One step's value of a metric for a run, with its wall-clock x when the step's time is stored. */
interface Row {
  step: number;
  /** The run's seconds computing up to the step (`runSeconds`), or null when the step has no stored time. */
  wall: number | null;
  value: number;
}

/** A run's values of `metric` in step order (held-out accuracy from its evaluations). */
export function runRows(run: CompareRun, metric: string): Row[] {
  if (metric === ACCURACY) {
    const at = new Map(run.steps.map((s) => [s.step, s]));
    return run.evaluations.map((e) => ({
      step: e.step,
      wall: runSeconds(run, at.get(e.step) ?? {}),
      value: e.accuracy,
    }));
  }
  return run.steps.flatMap((s) => {
    const value = valueAt(s.metrics, metric);
    return value === undefined ? [] : [{ step: s.step, wall: runSeconds(run, s), value }];
  });
}

/** The options less the seed, as text: runs with the same key differ only in their seed; null for an imported run. */
export function seedlessKey(run: Pick<CompareRun, 'options' | 'imported'>): string | null {
  if (run.imported || !('seed' in run.options)) return null;
  const flat = flattenConfig({ ...run.options, seed: 0 });
  return JSON.stringify(Object.entries(flat).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * One line per run, or (`grouped`) one per seed group: runs whose options are equal but for the
 * seed, in the order their first run is listed; a group of one is that run's line.
 */
export function linesOf(
  runs: readonly CompareRun[],
  grouped: boolean,
  groupName: (members: CompareRun[]) => string,
): Line[] {
  const single = (r: CompareRun): Line => ({ id: r.runId, name: r.name, members: [r] });
  if (!grouped) return runs.map(single);
  const byKey = new Map<string, CompareRun[]>();
  for (const r of runs) {
    const key = seedlessKey(r) ?? `run:${r.runId}`;
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  return [...byKey.values()].map((members) =>
    members.length === 1
      ? single(members[0])
      : { id: `group:${members.map((m) => m.runId).join('+')}`, name: groupName(members), members },
  );
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Per step that any member reported `metric` at: the members' values there (and their wall x
 * where stored), in step order. Members that did not reach a step are not in its values.
 */
function stepValues(
  members: readonly CompareRun[],
  metric: string,
): { step: number; values: number[]; walls: number[] }[] {
  const at = new Map<number, { values: number[]; walls: number[] }>();
  for (const m of members)
    for (const r of runRows(m, metric)) {
      const e = at.get(r.step) ?? { values: [], walls: [] };
      e.values.push(r.value);
      if (r.wall !== null) e.walls.push(r.wall);
      at.set(r.step, e);
    }
  return [...at.entries()].sort(([a], [b]) => a - b).map(([step, e]) => ({ step, ...e }));
}

/**
 * The series of a line for `metric` on x axis `x`: a run's values; a group's mean per step with
 * the min–max band. A step without a stored time has no wall-clock x and is left out there.
 */
export function lineSeries(line: Line, metric: string, x: XAxisKind): Series {
  if (line.members.length === 1) {
    const rows = runRows(line.members[0], metric);
    return {
      name: line.name,
      points: rows.flatMap((r) =>
        x === 'step' ? [[r.step, r.value]] : r.wall === null ? [] : [[r.wall, r.value]],
      ) as [number, number][],
    };
  }
  const rows = stepValues(line.members, metric).flatMap((s) => {
    const at = x === 'step' ? s.step : s.walls.length > 0 ? mean(s.walls) : null;
    return at === null ? [] : [{ x: at, mean: mean(s.values), lo: Math.min(...s.values), hi: Math.max(...s.values) }];
  });
  return {
    name: line.name,
    points: rows.map((r) => [r.x, r.mean]),
    band: rows.map((r) => [r.x, r.lo, r.hi]),
  };
}

/** Runs of the lines that have no stored step time (stored before times were kept, or imported): not on a wall-clock axis. */
export function runsWithoutTimes(lines: readonly Line[]): string[] {
  return lines
    .flatMap((l) => l.members)
    .filter((r) => r.steps.length > 0 && r.steps.every((s) => s.t === undefined))
    .map((r) => r.name);
}
