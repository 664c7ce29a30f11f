/**
 * Run names that say what differs: a run nobody named is called by its preset and the options it
 * changed from the preset's defaults (`grpo-arith · lr 3e-3 · seed 2`), in the form's order with
 * the bookkeeping fields (evaluation and checkpoint cadence) last, a few at most. A run a person
 * named keeps that name; an imported run keeps its stored one. Names of one view are made unique.
 * A person's environment program (grpo-env, ppo-env) is one part, its file name and a short hash
 * (`calc_env.py@1a2b3c4d`): its command, full SHA-256, text and tasks are in the Configs table.
 * Pure: the preset's defaults and fields come from the worker's preset table (PresetInfo).
 */
import type { PresetInfo, RunOptions, RunSummary } from '../../worker/protocol';
import { runLabel } from '../shared/runs-table';
import { flattenConfig } from './compare';

/** A run id's time part (`grpo-m3x9k2-1` → `m3x9k2`), which tells apart runs of equal names. */
export const idTag = (runId: string) => runId.split('-')[1] ?? runId;

/** Options a name lists at most; the rest are counted (`+2 more`). */
const NAME_PARTS = 4;

/** Fields that change when a run is evaluated or checkpointed, not what it trains: named last. */
const BOOKKEEPING = new Set(['evalEvery', 'evalN', 'checkpointEvery']);
/** A variant's selector (`policyLoss.name`): named by its parent (`policyLoss gspo`). */
const SELECTORS = new Set(['name', 'type', 'kind', 'mode', 'estimator']);

/** The short key of a dotted path: its last part, or its parent's for a variant's selector. */
function shortKey(path: string): string {
  const parts = path.split('.');
  return parts.length > 1 && SELECTORS.has(parts.at(-1)!) ? parts.at(-2)! : parts.at(-1)!;
}

/** A JSON leaf as a name shows it: small numbers in exponent form (`3e-3`), strings unquoted. */
function shortValue(json: string): string {
  const v: unknown = JSON.parse(json);
  if (typeof v === 'number') return v !== 0 && Math.abs(v) < 1e-2 ? v.toExponential() : String(v);
  return typeof v === 'string' ? v : json;
}

/** Hex digits of a program's SHA-256 a name shows: enough to tell apart the versions of one file, as git's short hashes do. */
const SHORT_HASH = 8;

/** An environment program as a name shows it: its file name and its hash's first digits. */
function programLabel(program: { name: string; sha256: string }): string {
  return `${program.name}@${program.sha256.slice(0, SHORT_HASH)}`;
}

interface DifferingOption {
  path: string;
  /** `lr 3e-3` */
  text: string;
}

/** The options of `options` whose value is not the preset's default, in the form's field order (bookkeeping last). */
export function differingOptions(
  options: RunOptions,
  preset: Pick<PresetInfo, 'defaults' | 'fields'>,
): DifferingOption[] {
  const flat = flattenConfig(options);
  const base = flattenConfig(preset.defaults);
  const order = preset.fields.map((f) => f.path);
  const rank = (p: string) => {
    const i = order.indexOf(p);
    return (BOOKKEEPING.has(p) ? order.length + 1 : 0) + (i < 0 ? order.length : i);
  };
  const parts = Object.keys(flat)
    .filter((p) => p !== 'preset' && flat[p] !== base[p])
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((path) => ({ path, text: `${shortKey(path)} ${shortValue(flat[path])}` }));
  // The environment's many leaves (argv, sha256, the program's text, the tasks) make one part.
  const env = 'environment' in options ? options.environment : undefined;
  const outside = parts.filter((d) => !d.path.startsWith('environment.'));
  if (!env || outside.length === parts.length) return parts;
  return [{ path: 'environment', text: programLabel(env.program) }, ...outside];
}

/** The preset's name and the options that differ from its defaults, `max` at most. */
export function defaultRunName(
  options: RunOptions,
  preset: Pick<PresetInfo, 'defaults' | 'fields'>,
  max = NAME_PARTS,
): string {
  const parts = differingOptions(options, preset).map((d) => d.text);
  const more = parts.length - Math.min(parts.length, max);
  return [options.preset, ...parts.slice(0, max), ...(more > 0 ? [`+${more} more`] : [])].join(' · ');
}

/**
 * Whether a listed run's name is the worker's fill-in (worker/runs/run-manager.ts `defaultName`:
 * the preset and the id's time part), i.e. nobody named the run. The listing fills the name in, so
 * the app recognises it by that shape.
 */
export function hasWorkerDefaultName(r: Pick<RunSummary, 'runId' | 'name' | 'options'>): boolean {
  return r.name === undefined || r.name === `${r.options.preset} · ${idTag(r.runId)}`;
}

/**
 * A run as a view names it: the name a person gave it, else its preset and what differs from the
 * preset's defaults; an imported run, or one whose preset is not known (yet), by its stored name.
 */
export function runDisplayName(
  r: Pick<RunSummary, 'runId' | 'name' | 'options' | 'status'>,
  preset: Pick<PresetInfo, 'defaults' | 'fields'> | undefined,
): string {
  if (!hasWorkerDefaultName(r) || r.status === 'imported' || !preset) return runLabel(r);
  return defaultRunName(r.options as RunOptions, preset);
}

/**
 * The name of runs that differ only in their seed: the name their options would have at the
 * preset's seed, and the seeds in ascending order.
 */
export function seedGroupName(options: RunOptions[], preset: Pick<PresetInfo, 'defaults' | 'fields'>): string {
  const base = defaultRunName({ ...options[0], seed: preset.defaults.seed } as RunOptions, preset);
  return `${base} · seeds ${options
    .map((o) => o.seed)
    .sort((a, b) => a - b)
    .join(', ')}`;
}

/** The names, each one that repeats followed by its tag (`grpo-arith (m3x9k2)`). */
export function uniqueNames(items: readonly { name: string; tag: string }[]): string[] {
  const count = new Map<string, number>();
  for (const r of items) count.set(r.name, (count.get(r.name) ?? 0) + 1);
  return items.map((r) => (count.get(r.name)! > 1 ? `${r.name} (${r.tag})` : r.name));
}
