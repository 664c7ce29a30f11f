/**
 * The run's metrics as files (the dashboard's export buttons): JSON with the run's name, its exact
 * config, every step's metrics and commit time, and every evaluation, as the dashboard plots them;
 * and CSV, one row per step with the run's name, the step's commit time, a column per metric and
 * the held-out evaluation where the step has one (step 0: the evaluation before training). Times
 * are those the store kept when it committed each step (`RunHistory`'s `t`), as the Compare view's
 * export writes them (compare/export.ts). `npm run demo` builds its report from the JSON file
 * (e2e/demo/report.ts), so its shape is versioned: version 2 added `config`; version 3 added
 * `name` and each step's `t`. Not here: the Compare view's multi-run files (compare/export.ts).
 */
import type { ImportedRunOptions, RunOptions } from '../../worker/protocol';
import type { EvalPoint, StepPoint } from './live-run';

export interface MetricsFile {
  kind: 'dewpoint-metrics';
  version: 3;
  runId: string;
  /** The run's name as the runs table shows it (a person's, else the default); null when the listing had not got it. */
  name: string | null;
  status: string;
  totalSteps: number;
  /** The run's exact options (what "Config as JSON" showed when it started); null when unknown. */
  config: RunOptions | ImportedRunOptions | null;
  /**
   * Per step its metrics and `t`: when the step was committed, ms since the epoch (a number, as the
   * worker keeps it; `new Date(t)` reads it). `t` is absent when unknown: step 0 (the evaluation
   * before training), steps stored before times were kept, and an imported run's steps.
   */
  steps: { step: number; metrics: Record<string, number>; t?: number }[];
  /** Evaluations without their greedy samples. */
  evals: Omit<EvalPoint, 'samples'>[];
}

interface RunMetrics {
  runId: string;
  /** From the runs listing (RunSummary.name); null when it has not got the run yet. */
  name: string | null;
  status: string;
  totalSteps: number;
  config: RunOptions | ImportedRunOptions | null;
  steps: StepPoint[];
  evals: EvalPoint[];
}

export function metricsFile(run: RunMetrics): MetricsFile {
  return {
    kind: 'dewpoint-metrics',
    version: 3,
    runId: run.runId,
    name: run.name,
    status: run.status,
    totalSteps: run.totalSteps,
    config: run.config,
    steps: run.steps.map((s) => ({ step: s.step, metrics: s.metrics, ...(s.t !== undefined ? { t: s.t } : {}) })),
    evals: run.evals.map((e) => ({ step: e.step, accuracy: e.accuracy, meanLength: e.meanLength, n: e.n })),
  };
}

/** A CSV field: numbers as JavaScript prints them (full precision), empty when absent. */
const field = (v: number | undefined) => (v === undefined ? '' : String(v));
/** A text field, quoted when it holds a comma, a quote or a line break (RFC 4180): a person's run name may. */
const text = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
/** A commit time as ISO 8601 (UTC), empty when unknown. */
const iso = (t: number | undefined) => (t === undefined ? '' : new Date(t).toISOString());

/**
 * Columns, in this order: `step`; `run_name` (the same on every row, empty when unknown); `time`
 * (the step's commit time, ISO 8601 UTC, empty when unknown: step 0, old or imported steps); every
 * metric key (sorted); then `eval/accuracy`, `eval/mean_length`, `eval/n`.
 */
export function metricsCsv(run: Pick<RunMetrics, 'name' | 'steps' | 'evals'>): string {
  const keys = [...new Set(run.steps.flatMap((s) => Object.keys(s.metrics)))].sort();
  const evalAt = new Map(run.evals.map((e) => [e.step, e]));
  const stepsShown = [...new Set([...run.evals.map((e) => e.step), ...run.steps.map((s) => s.step)])].sort(
    (a, b) => a - b,
  );
  const stepAt = new Map(run.steps.map((s) => [s.step, s]));
  const name = text(run.name ?? '');
  const header = ['step', 'run_name', 'time', ...keys.map(text), 'eval/accuracy', 'eval/mean_length', 'eval/n'];
  const rows = stepsShown.map((step) => {
    const s = stepAt.get(step);
    const m = s?.metrics ?? {};
    const e = evalAt.get(step);
    return [
      String(step),
      name,
      iso(s?.t),
      ...keys.map((k) => field(m[k])),
      field(e?.accuracy),
      field(e?.meanLength),
      field(e?.n),
    ].join(',');
  });
  return [header.join(','), ...rows].join('\n') + '\n';
}
