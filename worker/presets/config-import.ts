/**
 * A person's config JSON (the Experiments view's "Import config JSON", the CLI's `train --config
 * FILE`) read onto its preset's defaults, so that a partial config, `{"preset": "grpo-arith",
 * "steps": 7}`, is a whole run: every option it leaves out is the preset's default (table.ts
 * `defaults`). Objects merge key by key (`policyLoss`, `kl`, `rejection`, ...), except a
 * discriminated union whose discriminator the config changes (`policyLoss.name` 'ppo' → 'gspo',
 * `importance.kind` 'off' → 'tis', `advantage.estimator`, `aggregation.mode`, DPO's `loss.type`):
 * that object is the config's alone, so no option of the default's variant leaks into the new one,
 * and the new variant's required options it leaves out take their `initial` value, as the form
 * fills them when a person picks the variant (app/experiments/objective-fields.ts `withField`).
 * The unions and initial values are read from the preset's form fields (fields.ts), derived from
 * its schema. A `null` empties an option the preset sets (`"filterGroups": null` turns grpo-calc's
 * dynamic sampling off), as clearing its field in the form does.
 *
 * Not the check: the completed options go through `checkRunOptions` (table.ts), so an unknown
 * option (kept by the merge) and a bad value are named as the form names them. Arrays and values
 * other than objects (a dataset's records) are the config's.
 */
import type { ConfigCompletion, FieldSpec, RunOptions } from '../contract/options';
import { isActive, valueAt } from './fields';
import { checkRunOptions, findPreset, optionFields } from './table';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Sets an own property, even one named `__proto__` (JSON.parse makes those own keys; the schema then refuses them). */
function put(o: Obj, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `given` over `defaults`; `unions` maps an object's dotted path to its discriminator's key. */
function mergeAt(defaults: Obj, given: Obj, path: string, unions: ReadonlyMap<string, string>): Obj {
  const key = unions.get(path);
  if (key !== undefined && Object.hasOwn(given, key) && given[key] !== defaults[key]) return structuredClone(given);
  const out = structuredClone(defaults);
  for (const [k, v] of Object.entries(given)) {
    // null empties an option, as clearing its field in the form does (a required one is then named as missing).
    if (v === null) {
      delete out[k];
      continue;
    }
    const old = Object.hasOwn(out, k) ? out[k] : undefined;
    put(out, k, isObject(v) && isObject(old) ? mergeAt(old, v, path ? `${path}.${k}` : k, unions) : structuredClone(v));
  }
  return out;
}

/** Sets the value at a dotted path of `o` (an active field's: the objects on the way are there). */
function setAt(o: Obj, path: string, value: unknown): void {
  const keys = path.split('.');
  const parent = valueAt(o, keys.slice(0, -1).join('.'));
  if (isObject(parent)) put(parent, keys.at(-1)!, value);
}

/** The discriminated unions among a preset's fields: object path → discriminator key (`policyLoss` → `name`). */
function unionsOf(fields: readonly FieldSpec[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of fields)
    for (const c of f.when ?? []) {
      const dot = c.path.lastIndexOf('.');
      out.set(dot < 0 ? '' : c.path.slice(0, dot), c.path.slice(dot + 1));
    }
  return out;
}

/**
 * `config` over the defaults of the preset it names, or null when it is not an object naming a
 * preset of the table. The result is not checked (see `completeRunOptions`).
 */
export function withPresetDefaults(config: unknown): Obj | null {
  if (!isObject(config) || typeof config.preset !== 'string') return null;
  const preset = findPreset(config.preset);
  if (!preset) return null;
  const fields = optionFields(preset.name);
  const merged = mergeAt(preset.defaults as unknown as Obj, config, '', unionsOf(fields));
  // A required option of a (new) variant that neither the config nor the defaults give: its initial value.
  for (const f of fields)
    if (!f.optional && f.initial !== undefined && isActive(f, merged) && valueAt(merged, f.path) === undefined)
      setAt(merged, f.path, f.initial);
  return merged;
}

/**
 * A config JSON completed from its preset's defaults and checked (`checkRunOptions`, problems
 * named by label and path); `ok: false` when it names no preset, with the problem that says so.
 */
export function completeRunOptions(config: unknown): ConfigCompletion {
  const merged = withPresetDefaults(config);
  if (merged === null) {
    const problems = checkRunOptions(config);
    return {
      ok: false,
      problems: problems.length ? problems : [{ path: 'preset', message: 'options must name a preset' }],
    };
  }
  return { ok: true, options: merged as unknown as RunOptions, problems: checkRunOptions(merged) };
}
