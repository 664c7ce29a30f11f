/**
 * The runs table's logic as pure functions: each run's key hyperparameters in a line, the columns
 * it sorts by, and the filter. The RunsTable component renders them; the worker stores the runs.
 */
import type { ImportedRunOptions, RunOptions, RunStatus, RunSummary } from '../../worker/protocol';

/** A run as the views name it: its name (listRuns fills in the default), else its id. */
export const runLabel = (r: Pick<RunSummary, 'runId' | 'name'>) => r.name ?? r.runId;

/** The hyperparameters a person tells runs apart by: lr, prompts × group (pairs), loss, β. */
export function keyParams(r: RunSummary): string {
  const imported = importedOf(r);
  if (imported)
    return (
      `verl rollouts · ${imported.files.map((f) => f.name).join(', ')} · grouped by ${imported.grouping} · ` +
      `advantages ${imported.advantages === 'dump' ? 'from the dump' : 'recomputed'}`
    );
  const o = trainedOptions(r)!;
  const lr = `lr ${o.lr}`;
  // By the options a run has, whatever its preset: pairs (DPO), a policy loss (GRPO, PPO), a turn limit, a critic.
  if ('pairs' in o) return `${lr} · ${o.pairs} pairs · ${o.loss.type} · β ${o.beta}`;
  if (!('policyLoss' in o)) return lr;
  const turns = 'maxTurns' in o ? ` · ≤ ${o.maxTurns} turns` : '';
  const critic = 'gamma' in o ? ` · GAE γ ${o.gamma} λ ${o.lam} · c_v ${o.valueCoefficient}` : '';
  return `${lr} · ${o.prompts} × ${o.group}${turns} · ${o.policyLoss.name}, ${o.aggregation.mode}${critic} · β ${o.beta}`;
}

/** A trained run's options, or null for an imported run (it has no config to run). */
export function trainedOptions(r: Pick<RunSummary, 'status' | 'options'>): RunOptions | null {
  return r.status === 'imported' ? null : (r.options as RunOptions);
}

/** An imported run's record (verl rollouts: status `imported`), or null for a run trained here. */
export function importedOf(r: Pick<RunSummary, 'status' | 'options'>): ImportedRunOptions | null {
  return r.status === 'imported' ? (r.options as ImportedRunOptions) : null;
}

export type SortKey = 'name' | 'preset' | 'status' | 'steps' | 'reward' | 'accuracy' | 'started' | 'duration';

export const SORT_LABELS: Record<SortKey, string> = {
  name: 'Name',
  preset: 'Preset',
  status: 'Status',
  steps: 'Steps',
  reward: 'Mean reward',
  accuracy: 'Held-out accuracy',
  started: 'Started',
  duration: 'Duration',
};

const value: Record<SortKey, (r: RunSummary) => string | number | undefined> = {
  name: (r) => runLabel(r).toLowerCase(),
  preset: (r) => r.options.preset,
  status: (r) => r.status,
  steps: (r) => r.lastStep,
  reward: (r) => r.latest?.rewardMean,
  accuracy: (r) => r.latest?.accuracy,
  started: (r) => r.createdAt,
  // Runs stored before compute time was kept have none.
  duration: (r) => r.activeMs,
};

/** Runs sorted by `key` (runs without a value last, whatever the direction), ties newest first. */
export function sortRuns(runs: readonly RunSummary[], key: SortKey, dir: 'ascending' | 'descending'): RunSummary[] {
  const sign = dir === 'ascending' ? 1 : -1;
  return [...runs].sort((a, b) => {
    const [x, y] = [value[key](a), value[key](b)];
    if (x === undefined || y === undefined) return x === y ? b.createdAt - a.createdAt : x === undefined ? 1 : -1;
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return c !== 0 ? sign * c : b.createdAt - a.createdAt;
  });
}

interface RunFilter {
  /** Words that must all appear in the run's name, id, preset, status, hyperparameters or notes. */
  text: string;
  status: RunStatus | 'all';
}

export function filterRuns(runs: readonly RunSummary[], f: RunFilter): RunSummary[] {
  const words = f.text.toLowerCase().split(/\s+/).filter(Boolean);
  return runs.filter((r) => {
    if (f.status !== 'all' && r.status !== f.status) return false;
    const hay = [r.name, r.runId, r.options.preset, r.status, keyParams(r), r.notes].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** `1.3 MB`, `412 kB`, `900 B` (decimal units, as browsers report storage). */
export function bytesText(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} kB`;
  return `${n} B`;
}

/** What the table says after a delete. */
export function deletedText(title: string, d: { steps: number; bytes: number }): string {
  return `Deleted ${title}: ${d.steps} step${d.steps === 1 ? '' : 's'} and every other record of it, about ${bytesText(d.bytes)} of stored data freed.`;
}

/**
 * What deleting a run removes, as its confirmation says it: the stored steps with the records they
 * keep, and its checkpoint only when it has one (an imported run and a flow run have none).
 */
export function deleteScope(r: Pick<RunSummary, 'status' | 'options' | 'lastStep' | 'checkpointStep'>): string {
  const imported = importedOf(r);
  const checkpoint = r.checkpointStep !== undefined ? ', and its checkpoint' : '';
  if (!imported) return `${r.lastStep} steps with their groups, batches and sessions${checkpoint}`;
  const n = imported.stepNumbers.length;
  const kept = imported.present.includes('response_ids') ? 'groups, batches and sessions' : 'groups';
  return `${n} imported step${n === 1 ? '' : 's'} with ${n === 1 ? 'its' : 'their'} ${kept}${checkpoint}`;
}
