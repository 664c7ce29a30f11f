/**
 * The run's metrics as files (the dashboard's export buttons): JSON with the run's exact config,
 * every step's metrics and every evaluation, as the dashboard plots them; and CSV, one row per
 * step with a column per metric and the held-out evaluation where the step has one (step 0: the
 * evaluation before training). `npm run demo` builds its report from the JSON file
 * (e2e/demo/report.ts), so its shape is versioned: version 2 added `config`.
 */
import type { ImportedRunOptions, RunOptions } from '../../worker/protocol';
import type { EvalPoint, StepPoint } from './run-store';

export interface MetricsFile {
  kind: 'dewpoint-metrics';
  version: 2;
  runId: string;
  status: string;
  totalSteps: number;
  /** The run's exact options (what "Config as JSON" showed when it started); null when unknown. */
  config: RunOptions | ImportedRunOptions | null;
  steps: StepPoint[];
  /** Evaluations without their greedy samples. */
  evals: Omit<EvalPoint, 'samples'>[];
}

export interface RunMetrics {
  runId: string;
  status: string;
  totalSteps: number;
  config: RunOptions | ImportedRunOptions | null;
  steps: StepPoint[];
  evals: EvalPoint[];
}

export function metricsFile(run: RunMetrics): MetricsFile {
  return {
    kind: 'dewpoint-metrics',
    version: 2,
    runId: run.runId,
    status: run.status,
    totalSteps: run.totalSteps,
    config: run.config,
    steps: run.steps.map((s) => ({ step: s.step, metrics: s.metrics })),
    evals: run.evals.map((e) => ({ step: e.step, accuracy: e.accuracy, meanLength: e.meanLength, n: e.n })),
  };
}

/** A CSV field: numbers as JavaScript prints them (full precision), empty when absent. */
const field = (v: number | undefined) => (v === undefined ? '' : String(v));

/** Columns: step, every metric key (sorted), then eval/accuracy, eval/mean_length, eval/n. */
export function metricsCsv(run: Pick<RunMetrics, 'steps' | 'evals'>): string {
  const keys = [...new Set(run.steps.flatMap((s) => Object.keys(s.metrics)))].sort();
  const evalAt = new Map(run.evals.map((e) => [e.step, e]));
  const stepsShown = [...new Set([...run.evals.map((e) => e.step), ...run.steps.map((s) => s.step)])].sort(
    (a, b) => a - b,
  );
  const metricsAt = new Map(run.steps.map((s) => [s.step, s.metrics]));
  const header = ['step', ...keys, 'eval/accuracy', 'eval/mean_length', 'eval/n'];
  const rows = stepsShown.map((step) => {
    const m = metricsAt.get(step) ?? {};
    const e = evalAt.get(step);
    return [String(step), ...keys.map((k) => field(m[k])), field(e?.accuracy), field(e?.meanLength), field(e?.n)].join(
      ',',
    );
  });
  return [header.join(','), ...rows].join('\n') + '\n';
}
