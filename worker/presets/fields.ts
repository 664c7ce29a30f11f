/**
 * The form description of each preset's options, derived from its zod schema (schema.ts) through
 * `z.toJSONSchema`, and the problems a set of options has, each naming the field by its label and
 * its dotted path (`Clip ε high (policyLoss.clipHigh) must be a number in [0, 10], got -1`: the
 * form shows labels, the config JSON and the CLI use paths) and its allowed range or values. The
 * app renders the fields and shows the problems; it never validates itself.
 *
 * A discriminated union (`policyLoss` by `name`, ...) becomes a select for the discriminator and
 * the variants' options with a `when` condition; an option several variants share with the same
 * range is one field. Not the schema itself, nor the defaults (table.ts).
 */
import { z } from 'zod';
import type { FieldSpec, OptionProblem } from '../contract/options';
import { FIELD_SECTIONS } from '../contract/options';

/** The part of JSON Schema that `z.toJSONSchema` gives for these schemas, plus our metadata. */
interface Json {
  type?: string;
  properties?: Record<string, Json>;
  required?: string[];
  oneOf?: Json[];
  anyOf?: Json[];
  const?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  title?: string;
  description?: string;
  section?: FieldSpec['section'];
  initial?: FieldSpec['initial'];
  common?: boolean;
  /** Set from a file, not a form input (the run options' `dataset`): left out of the fields. */
  file?: boolean;
}

type When = NonNullable<FieldSpec['when']>;

function allowedOf(f: Omit<FieldSpec, 'allowed'>): string {
  if (f.kind === 'select') return `one of ${f.values!.join(', ')}`;
  if (f.kind === 'boolean') return 'true or false';
  if (f.kind === 'integer') return `an integer in ${f.min}..${f.max}`;
  return `a number in ${f.minExclusive ? '(' : '['}${f.min}, ${f.max}${f.maxExclusive ? ')' : ']'}`;
}

function leaf(node: Json, path: string, optional: boolean, when: When): FieldSpec {
  if (!node.title || !node.section || !node.description)
    throw new Error(`schema field ${path} has no title, section or description in its meta`);
  const f: Omit<FieldSpec, 'allowed'> = {
    path,
    label: node.title,
    section: node.section,
    help: node.description,
    kind: 'number',
    optional,
  };
  if (when.length) f.when = when;
  if (node.initial !== undefined) f.initial = node.initial;
  if (node.common) f.common = true;
  if (node.enum || node.const !== undefined) {
    f.kind = 'select';
    f.values = node.enum ?? [node.const!];
  } else if (node.type === 'boolean') {
    f.kind = 'boolean';
  } else if (node.type === 'integer' || node.type === 'number') {
    f.kind = node.type;
    f.min = node.minimum ?? node.exclusiveMinimum;
    f.max = node.maximum ?? node.exclusiveMaximum;
    if (f.min === undefined || f.max === undefined) throw new Error(`schema field ${path} has no lower or upper bound`);
    if (node.exclusiveMinimum !== undefined) f.minExclusive = true;
    if (node.exclusiveMaximum !== undefined) f.maxExclusive = true;
  } else {
    throw new Error(`schema field ${path}: no form input for ${JSON.stringify(node)}`);
  }
  return { ...f, allowed: allowedOf(f) };
}

function walk(node: Json, prefix: string, optional: boolean, when: When, meta: Json, out: FieldSpec[]): void {
  const variants = node.oneOf ?? node.anyOf;
  if (variants) {
    // The discriminator: the one property every variant pins to constants.
    const values = (v: Json, k: string) =>
      v.properties?.[k]?.enum ?? (v.properties?.[k]?.const !== undefined ? [v.properties[k].const!] : undefined);
    const key = Object.keys(variants[0].properties ?? {}).find((k) => variants.every((v) => values(v, k)));
    if (!key) throw new Error(`schema field ${prefix}: a union without a discriminator`);
    out.push(leaf({ ...meta, enum: variants.flatMap((v) => values(v, key)!) }, `${prefix}.${key}`, false, when));
    for (const v of variants) {
      const rest: Json = {
        ...v,
        properties: Object.fromEntries(Object.entries(v.properties!).filter(([k]) => k !== key)),
      };
      walk(rest, prefix, false, [...when, { path: `${prefix}.${key}`, values: values(v, key)! }], {}, out);
    }
    return;
  }
  if (node.type === 'object' && node.properties) {
    for (const [k, child] of Object.entries(node.properties)) {
      if ((!prefix && k === 'preset') || child.file) continue;
      walk(child, prefix ? `${prefix}.${k}` : k, !(node.required ?? []).includes(k), when, child, out);
    }
    return;
  }
  out.push(leaf(node, prefix, optional, when));
}

/** Merges the entries of one path that differ only in the values of their last condition (an option shared by variants). */
function merge(fields: FieldSpec[]): FieldSpec[] {
  const out: FieldSpec[] = [];
  const sameBut = (a: FieldSpec, b: FieldSpec) => {
    if (!a.when || !b.when || a.when.length !== b.when.length) return false;
    const strip = (f: FieldSpec) =>
      JSON.stringify({ ...f, when: f.when!.map((c, i) => (i === f.when!.length - 1 ? c.path : c)) });
    return strip(a) === strip(b);
  };
  for (const f of fields) {
    const twin = out.find((g) => g.path === f.path && sameBut(g, f));
    if (twin) twin.when![twin.when!.length - 1].values.push(...f.when!.at(-1)!.values);
    else out.push(structuredClone(f));
  }
  return out;
}

/** The form fields of a schema's options: the common ones first, then by section (FIELD_SECTIONS), each as in the schema. */
export function fieldsOfSchema(schema: z.ZodType): FieldSpec[] {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Json;
  const fields: FieldSpec[] = [];
  walk(json, '', false, [], {}, fields);
  const rank = (f: FieldSpec) => (f.common ? -1 : FIELD_SECTIONS.indexOf(f.section));
  return merge(fields).sort((a, b) => rank(a) - rank(b));
}

/** The value at a dotted path, or undefined. */
export function valueAt(options: unknown, path: string): unknown {
  if (!path) return options;
  return path
    .split('.')
    .reduce<unknown>(
      (o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
      options,
    );
}

/** Whether a field is shown for these options (each of its conditions holds). */
export function isActive(field: FieldSpec, options: unknown): boolean {
  return (field.when ?? []).every((c) => c.values.includes(valueAt(options, c.path) as string));
}

const show = (v: unknown) =>
  v === undefined
    ? 'nothing'
    : typeof v === 'string'
      ? `'${v}'`
      : typeof v === 'number'
        ? String(v)
        : JSON.stringify(v);

/**
 * How a problem names a field, given its dotted path and its label (undefined where the preset has
 * no such field, e.g. an unknown key or `preset`).
 */
export type FieldNamer = (path: string, label: string | undefined) => string;

/** The label and the path, `Clip ε high (policyLoss.clipHigh)`; the path alone where there is no label. */
export const labelAndPath: FieldNamer = (path, label) => (label ? `${label} (${path})` : path);

/**
 * The problems of `options` the schema found (`error`), each naming the field (by `name`) from
 * `fields`, the form fields of the options' preset (none for an unknown preset), and its allowed
 * range or values. The preset table's `checkRunOptions` calls it with the preset's fields.
 */
export function problemsOf(
  options: unknown,
  error: z.ZodError,
  fields: FieldSpec[],
  name: FieldNamer,
): OptionProblem[] {
  const preset = valueAt(options, 'preset') as string;
  /** The field at `path`: the one shown for these options, else any variant's. */
  const fieldAt = (path: string) => {
    const candidates = fields.filter((f) => f.path === path);
    return candidates.find((f) => isActive(f, options)) ?? candidates[0];
  };
  const named = (path: string) => name(path, fieldAt(path)?.label);
  return error.issues.flatMap((issue): OptionProblem[] => {
    const path = issue.path.join('.');
    const got = show(valueAt(options, path));
    // schema.ts writes a custom problem as its predicate, naming other fields as `{path}`.
    if (issue.code === 'custom')
      return [
        { path, message: `${named(path)} ${issue.message.replace(/\{([\w.]+)\}/g, (_, p: string) => named(p))}` },
      ];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => {
        const p = path ? `${path}.${k}` : k;
        const only = fields.filter((f) => f.path === p).flatMap((f) => f.when ?? []);
        const where = only.length
          ? `; it applies only when ${only.map((c) => `${named(c.path)} is ${c.values.join(' or ')}`).join(', or ')}`
          : '';
        return { path: p, message: `${named(p)} is not an option of ${preset}${where}` };
      });
    }
    if (!path) return [{ path, message: `options must be an object with a preset, got ${got}` }];
    const field = fieldAt(path);
    if (field) return [{ path, message: `${named(path)} must be ${field.allowed}, got ${got}` }];
    const { options: choices, values } = issue as { options?: unknown; values?: unknown };
    const listed = choices ?? values;
    if (Array.isArray(listed))
      return [{ path, message: `${named(path)} must be one of ${listed.join(', ')}, got ${got}` }];
    // A schema's own message written as a predicate ('must hold ...') reads after the name, as custom ones do.
    if (issue.message.startsWith('must '))
      return [
        { path, message: `${named(path)} ${issue.message}, got ${got.length > 80 ? `${got.slice(0, 77)}...` : got}` },
      ];
    return [{ path, message: `${named(path)}: ${issue.message}` }];
  });
}
