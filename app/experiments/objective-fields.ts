/**
 * Reading and editing run options by a field's dotted path, as the worker's form description
 * (FieldSpec) names them, and grouping the fields into the form's sections: the common ones
 * (FieldSpec.common) first, then one per FieldSection. Not validation: the worker checks the
 * options (checkRunOptions) and the form shows its problems. A variant switch (a new policy loss,
 * estimator, IS kind, ...) drops the options the new variant does not have and fills in the
 * required ones it has.
 */
import type { FieldSection, FieldSpec, OptionProblem, RunOptions } from '../../worker/protocol';

/** The form's always-open first section: the fields the schema marks `common`. */
export const COMMON_SECTION = 'Common';
export type FormSection = typeof COMMON_SECTION | FieldSection;

type Value = string | number | boolean | undefined;

export function valueAt(options: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
      options,
    );
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
function isActive(field: FieldSpec, options: unknown): boolean {
  return (field.when ?? []).every((c) => c.values.includes(valueAt(options, c.path) as string));
}

/** `options` with one field changed, then made consistent with the (maybe new) variants. */
export function withField(options: RunOptions, fields: FieldSpec[], path: string, value: Value): RunOptions {
  let next = setAt(options, path, value);
  const active = fields.filter((f) => isActive(f, next));
  const activePaths = new Set(active.map((f) => f.path));
  for (const f of fields)
    if (!activePaths.has(f.path) && valueAt(next, f.path) !== undefined) next = setAt(next, f.path, undefined);
  for (const f of active) {
    const v = valueAt(next, f.path);
    if (f.kind === 'select' && v !== undefined && !f.values!.includes(v as string))
      next = setAt(next, f.path, f.optional ? undefined : (f.initial ?? f.values![0]));
    else if (v === undefined && !f.optional && f.initial !== undefined) next = setAt(next, f.path, f.initial);
  }
  return next;
}

/** The section a field is shown in: the common one for a common field, else its own. */
export const sectionOf = (field: FieldSpec): FormSection => (field.common ? COMMON_SECTION : field.section);

/** The active fields grouped by the section they are shown in, the common section first, each in the order the worker lists them. */
export function sectionsOf(fields: FieldSpec[], options: RunOptions): [FormSection, FieldSpec[]][] {
  const out = new Map<FormSection, FieldSpec[]>();
  for (const f of fields) {
    if (!isActive(f, options)) continue;
    out.set(sectionOf(f), [...(out.get(sectionOf(f)) ?? []), f]);
  }
  return [...out].sort(([a], [b]) => Number(b === COMMON_SECTION) - Number(a === COMMON_SECTION));
}

/** The field the form shows for `path` with these options, if any. */
export function shownField(fields: FieldSpec[], options: unknown, path: string): FieldSpec | undefined {
  return fields.find((f) => f.path === path && isActive(f, options));
}

/** How many problems each section's shown fields have (sections without any are left out). */
export function problemsBySection(
  fields: FieldSpec[],
  options: RunOptions,
  problems: OptionProblem[],
): Map<FormSection, number> {
  const out = new Map<FormSection, number>();
  for (const p of problems) {
    const f = shownField(fields, options, p.path);
    if (f) out.set(sectionOf(f), (out.get(sectionOf(f)) ?? 0) + 1);
  }
  return out;
}

/** The problems in the order of their fields in the form (the common section first), those without a shown field last. */
export function inFormOrder(fields: FieldSpec[], options: RunOptions, problems: OptionProblem[]): OptionProblem[] {
  const order = sectionsOf(fields, options).flatMap(([, list]) => list.map((f) => f.path));
  const rank = (p: OptionProblem) => (order.includes(p.path) ? order.indexOf(p.path) : order.length);
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

/** The problems no shown field can hold (an unknown option, a wrong preset or shape): the form cannot show or fix them. */
export function unshownProblems(fields: FieldSpec[], options: unknown, problems: OptionProblem[]): OptionProblem[] {
  return problems.filter((p) => !shownField(fields, options, p.path));
}

/** A person's config JSON (pasted or from a file), parsed; `what` names it in the reason when it is not JSON. */
export function parseConfigJson(
  text: string,
  what: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (!text.trim()) return { ok: false, reason: `${what} is empty: paste the JSON that "Config as JSON" shows` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, reason: `${what} is not JSON: ${(e as Error).message}` };
  }
}
