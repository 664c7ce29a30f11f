/**
 * The Compare view's logic as pure functions: runs' configs flattened to dotted paths and laid side
 * by side with the fields that differ marked, the metrics they share, and one curve per run for a
 * metric (held-out accuracy as `eval/accuracy`). The view renders them with the Chart component.
 */
import type { ImportedRunOptions, RunOptions } from '../../worker/protocol';
import type { Series } from '../charts/Chart';

/** The held-out accuracy, offered beside the step metrics. */
export const ACCURACY = 'eval/accuracy';

/** `{ policyLoss: { name: 'ppo' } }` → `{ 'policyLoss.name': 'ppo' }`; leaves as JSON text. */
export function flattenConfig(
  options: RunOptions | ImportedRunOptions | Record<string, unknown>,
  prefix = '',
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(options)) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0)
      Object.assign(out, flattenConfig(v as Record<string, unknown>, path));
    else out[path] = JSON.stringify(v);
  }
  return out;
}

export interface ConfigRow {
  path: string;
  /** Per run, in order: the value, or null when that run has no such field. */
  values: (string | null)[];
  differs: boolean;
}

/** Every field any of the configs has, in path order, with whether the runs disagree on it. */
export function configRows(configs: readonly (RunOptions | ImportedRunOptions)[]): ConfigRow[] {
  const flat = configs.map((c) => flattenConfig(c));
  const paths = [...new Set(flat.flatMap((f) => Object.keys(f)))].sort();
  return paths.map((path) => {
    const values = flat.map((f) => f[path] ?? null);
    return { path, values, differs: values.some((v) => v !== values[0]) };
  });
}

export interface RunHistory {
  name: string;
  steps: { step: number; metrics: Record<string, number> }[];
  evaluations: { step: number; accuracy: number }[];
}

/** The metrics any of the runs reported, sorted, with held-out accuracy first when one was evaluated. */
export function metricKeys(runs: readonly RunHistory[]): string[] {
  const keys = [...new Set(runs.flatMap((r) => r.steps.flatMap((s) => Object.keys(s.metrics))))].sort();
  return runs.some((r) => r.evaluations.length > 0) ? [ACCURACY, ...keys] : keys;
}

/** One series per run (named by the run) for `metric`; a run without it gives an empty series. */
export function overlay(runs: readonly RunHistory[], metric: string): Series[] {
  return runs.map((r) => ({
    name: r.name,
    points:
      metric === ACCURACY
        ? r.evaluations.map((e) => [e.step, e.accuracy] as [number, number])
        : r.steps.filter((s) => metric in s.metrics).map((s) => [s.step, s.metrics[metric]] as [number, number]),
  }));
}
