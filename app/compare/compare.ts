/**
 * The Compare view's data model and its simplest logic, as pure functions: a compared run (its
 * history with per-step commit times), runs' configs flattened to dotted paths and laid side by
 * side with the fields that differ marked, the metrics they reported (plus the termination shares
 * derived from the episode counts), a metric's value at a step, and the panels shown by default
 * for the runs' families. Lines, the summary table, the export and the histograms are beside it
 * (lines.ts, summary.ts, export.ts, histograms.ts); the view renders them.
 */
import type { ImportedRunOptions, PresetFamily, PresetView, RunOptions } from '../../worker/protocol';

/** The held-out accuracy, offered beside the step metrics. */
export const ACCURACY = 'eval/accuracy';

/** Episode counts by termination reason, as the episode trainer logs them (worker/train/grpo-episodes.ts `episodeMetrics`). */
const TERMINATION = 'episodes/termination/';
/** Derived here: the share of a step's episodes that ended for that reason (count / `episodes/count`; 0 when not logged). */
export const TERMINATION_SHARE = 'episodes/termination_share/';
const EPISODES = 'episodes/count';

/** A run as Compare reads it: its history, named, with its options and start. */
export interface CompareRun {
  runId: string;
  /** The name the view shows (run-name.ts), unique among the compared runs. */
  name: string;
  /** ms since the epoch: the time axis of a step stored without its compute time is the seconds since then. */
  createdAt: number;
  options: RunOptions | ImportedRunOptions;
  /** Imported from another framework's files (status `imported`): no seed to group by, no training times. */
  imported: boolean;
  /**
   * Per step its metrics and, where stored, when it was committed (`t`, ms since the epoch) and the
   * run's compute time up to it (`activeMs`: pauses, stops and the gap before a Continue left out).
   */
  steps: { step: number; metrics: Record<string, number>; t?: number; activeMs?: number }[];
  evaluations: { step: number; accuracy: number; meanLength?: number; n?: number }[];
}

/**
 * A step's x on the time axis, in seconds: the run's compute time up to it, or, for a step stored
 * before that was kept, the seconds from the run's start to its commit (which counts pauses); null
 * without a stored time.
 */
export function runSeconds(run: Pick<CompareRun, 'createdAt'>, s: { t?: number; activeMs?: number }): number | null {
  if (s.activeMs !== undefined) return s.activeMs / 1000;
  return s.t === undefined ? null : (s.t - run.createdAt) / 1000;
}

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

interface ConfigRow {
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

/** A metric's value in one step's metrics (a termination share computed from the counts), or undefined. */
export function valueAt(metrics: Record<string, number>, key: string): number | undefined {
  if (!key.startsWith(TERMINATION_SHARE)) return metrics[key];
  const n = metrics[EPISODES];
  if (!(n > 0)) return undefined;
  return (metrics[TERMINATION + key.slice(TERMINATION_SHARE.length)] ?? 0) / n;
}

/**
 * The metrics any of the runs reported, sorted, with held-out accuracy first when one was
 * evaluated, and a termination share for each termination reason counted.
 */
export function metricKeys(runs: readonly Pick<CompareRun, 'steps' | 'evaluations'>[]): string[] {
  const stored = new Set(runs.flatMap((r) => r.steps.flatMap((s) => Object.keys(s.metrics))));
  const shares = [...stored]
    .filter((k) => k.startsWith(TERMINATION))
    .map((k) => TERMINATION_SHARE + k.slice(TERMINATION.length));
  const keys = [...stored, ...shares].sort();
  return runs.some((r) => r.evaluations.length > 0) ? [ACCURACY, ...keys] : keys;
}

/** What picks a run's default panels: its preset's family and views (PresetInfo), never its name. */
interface PanelTraits {
  family: PresetFamily;
  views: readonly PresetView[];
}

/** Default panels by family, first found first; multi-turn runs (an Episodes view) lead with turns and terminations. */
const DEFAULTS: Record<PresetFamily | 'episodes', string[]> = {
  episodes: ['reward/mean', 'episodes/turns_mean', TERMINATION_SHARE, 'response/mean_length', ACCURACY],
  grpo: ['reward/mean', ACCURACY, 'response/mean_length', 'loss/policy'],
  ppo: ['reward/mean', ACCURACY, 'critic/vf_explained_var', 'loss/value'],
  sft: ['loss/sft', ACCURACY],
  dpo: ['loss/dpo', ACCURACY, 'loss/nll_chosen'],
  flow: ['reward/mean', 'eval/reward_mean', 'reward/inside_frac'],
};
/** Panels shown at first at most. */
const MAX_DEFAULT_PANELS = 6;

/**
 * The panels shown before a person picks: the runs' families' defaults (TERMINATION_SHARE stands
 * for every termination share present) among the metrics reported, else the first few metrics.
 */
export function defaultMetrics(keys: readonly string[], traits: readonly PanelTraits[]): string[] {
  const lists = traits.map((t) => DEFAULTS[t.views.includes('Episodes') ? 'episodes' : t.family]);
  const wanted = [...new Set(lists.flatMap((l) => l))].flatMap((k) =>
    k === TERMINATION_SHARE ? keys.filter((m) => m.startsWith(TERMINATION_SHARE)) : [k],
  );
  const picked = [...new Set(wanted)].filter((k) => keys.includes(k)).slice(0, MAX_DEFAULT_PANELS);
  return picked.length > 0 ? picked : keys.slice(0, 4);
}
