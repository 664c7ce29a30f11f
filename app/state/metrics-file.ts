/**
 * The run's metrics as a file (the dashboard's "Export metrics (JSON)" button): every step's
 * metrics and every evaluation, as the dashboard plots them. `npm run demo` builds its report
 * from this file (e2e/demo/report.ts), so the shape is versioned.
 */
import type { EvalPoint, StepPoint } from './run-store';

export interface MetricsFile {
  kind: 'dewpoint-metrics';
  version: 1;
  runId: string;
  status: string;
  totalSteps: number;
  steps: StepPoint[];
  /** Evaluations without their greedy samples. */
  evals: Omit<EvalPoint, 'samples'>[];
}

export function metricsFile(run: { runId: string; status: string; totalSteps: number; steps: StepPoint[]; evals: EvalPoint[] }): MetricsFile {
  return {
    kind: 'dewpoint-metrics', version: 1, runId: run.runId, status: run.status, totalSteps: run.totalSteps,
    steps: run.steps.map((s) => ({ step: s.step, metrics: s.metrics })),
    evals: run.evals.map((e) => ({ step: e.step, accuracy: e.accuracy, meanLength: e.meanLength, n: e.n })),
  };
}
