/**
 * The compared runs' metrics as files: CSV in long form (one row per run, step and metric: run
 * name, run id, step, the step's commit time as ISO 8601 and as seconds since the run started,
 * metric, value) and JSON (per run its name, id, start, config, and steps with their times and
 * metrics). Evaluations are rows of `eval/accuracy`, `eval/mean_length` and `eval/n`. A time is
 * empty (null) for a step stored before times were kept and for an imported run. Only stored
 * metrics are written, not the view's derived termination shares. Pure: the view downloads them.
 */
import type { ImportedRunOptions, RunOptions } from '../../worker/protocol';
import { runSeconds, type CompareRun } from './compare';

const CSV_HEADER = ['run_name', 'run_id', 'step', 'time', 'wall_s', 'metric', 'value'];

/** A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180). */
export function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

const iso = (t: number | undefined) => (t === undefined ? '' : new Date(t).toISOString());
/** The step's seconds on the time axis (`runSeconds`: the run's compute time up to it), '' without a stored time. */
const wall = (run: CompareRun, s: { t?: number; activeMs?: number } | undefined) => {
  const seconds = s ? runSeconds(run, s) : null;
  return seconds === null ? '' : String(seconds);
};

export function compareCsv(runs: readonly CompareRun[]): string {
  const lines = [CSV_HEADER.join(',')];
  for (const run of runs) {
    const at = new Map(run.steps.map((s) => [s.step, s]));
    const rows: [number, string, number | undefined][] = [
      ...run.steps.flatMap((s) =>
        Object.keys(s.metrics)
          .sort()
          .map((k): [number, string, number] => [s.step, k, s.metrics[k]]),
      ),
      ...run.evaluations.flatMap((e): [number, string, number | undefined][] => [
        [e.step, 'eval/accuracy', e.accuracy],
        [e.step, 'eval/mean_length', e.meanLength],
        [e.step, 'eval/n', e.n],
      ]),
    ].sort((a, b) => a[0] - b[0]);
    for (const [step, metric, value] of rows) {
      if (value === undefined) continue;
      const s = at.get(step);
      lines.push(
        [
          csvField(run.name),
          csvField(run.runId),
          String(step),
          iso(s?.t),
          wall(run, s),
          csvField(metric),
          String(value),
        ].join(','),
      );
    }
  }
  return lines.join('\n') + '\n';
}

interface CompareMetricsFile {
  kind: 'dewpoint-compare-metrics';
  version: 1;
  runs: {
    name: string;
    runId: string;
    /** ISO 8601. */
    startedAt: string;
    config: RunOptions | ImportedRunOptions;
    steps: { step: number; time: string | null; wallS: number | null; metrics: Record<string, number> }[];
    evals: CompareRun['evaluations'];
  }[];
}

export function compareJson(runs: readonly CompareRun[]): CompareMetricsFile {
  return {
    kind: 'dewpoint-compare-metrics',
    version: 1,
    runs: runs.map((r) => ({
      name: r.name,
      runId: r.runId,
      startedAt: new Date(r.createdAt).toISOString(),
      config: r.options,
      steps: r.steps.map((s) => ({
        step: s.step,
        time: s.t === undefined ? null : new Date(s.t).toISOString(),
        wallS: runSeconds(r, s),
        metrics: s.metrics,
      })),
      evals: r.evaluations,
    })),
  };
}
