/**
 * Reading and editing run options by a field's dotted path, as the worker's form description
 * (FieldSpec) names them. Not validation: the worker checks the options (checkRunOptions) and the
 * form shows its problems. A variant switch (a new policy loss, estimator, IS kind, ...) drops the
 * options the new variant does not have and fills in the required ones it has.
 */
import type { FieldSection, FieldSpec, RunOptions } from '../../worker/protocol';

type Value = string | number | boolean | undefined;

export function valueAt(options: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), options);
}

/** A copy of `options` with `path` set to `value` (undefined: removed). */
function setAt<T>(options: T, path: string, value: Value): T {
  const [key, ...rest] = path.split('.');
  const copy = { ...(options as Record<string, unknown>) };
  if (rest.length) copy[key] = setAt(copy[key] ?? {}, rest.join('.'), value);
  else if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy as T;
}

/** Whether a field applies to these options (each of its conditions holds). */
export function isActive(field: FieldSpec, options: unknown): boolean {
  return (field.when ?? []).every((c) => c.values.includes(valueAt(options, c.path) as string));
}

/** `options` with one field changed, then made consistent with the (maybe new) variants. */
export function withField(options: RunOptions, fields: FieldSpec[], path: string, value: Value): RunOptions {
  let next = setAt(options, path, value);
  const active = fields.filter((f) => isActive(f, next));
  const activePaths = new Set(active.map((f) => f.path));
  for (const f of fields) if (!activePaths.has(f.path) && valueAt(next, f.path) !== undefined) next = setAt(next, f.path, undefined);
  for (const f of active) {
    const v = valueAt(next, f.path);
    if (f.kind === 'select' && v !== undefined && !f.values!.includes(v as string)) next = setAt(next, f.path, f.optional ? undefined : (f.initial ?? f.values![0]));
    else if (v === undefined && !f.optional && f.initial !== undefined) next = setAt(next, f.path, f.initial);
  }
  return next;
}

/** The active fields grouped by section, in the order the worker lists them. */
export function sectionsOf(fields: FieldSpec[], options: RunOptions): [FieldSection, FieldSpec[]][] {
  const out = new Map<FieldSection, FieldSpec[]>();
  for (const f of fields) {
    if (!isActive(f, options)) continue;
    out.set(f.section, [...(out.get(f.section) ?? []), f]);
  }
  return [...out];
}
