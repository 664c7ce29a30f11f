/**
 * Run options: what a person sets for each preset (the form, the config JSON, the CLI's
 * `--config`), the presets as the Experiments view lists them, and the form's field specs. The
 * options themselves are declared once, as zod schemas per family in run-options/ (each field's
 * range, label and help), and their types are the schemas' (`z.output`); worker/presets/table.ts
 * holds each preset. Part of the contract protocol.ts re-exports.
 */
import type { FieldSection } from './run-options/fields';
import type { DatasetRewardOptions } from './run-options/fields';
import type { DpoRunOptions } from './run-options/dpo';
import type { FlowRunOptions } from './run-options/flow';
import type {
  EnvRunOptions,
  EpisodeGrpoRunOptions,
  GrpoRunOptions,
  PpoEnvRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
} from './run-options/grpo';
import type { SftRunOptions } from './run-options/sft';

export { FIELD_SECTIONS, LORA_TARGET_CHOICES, WEIGHT_STORAGES } from './run-options/fields';
export type * from './run-options/fields';
export type * from './run-options/grpo';
export type * from './run-options/dpo';
export type * from './run-options/flow';
export type * from './run-options/sft';

export type RunOptions =
  | SftRunOptions
  | GrpoRunOptions
  | EpisodeGrpoRunOptions
  | EnvRunOptions
  | PpoRunOptions
  | PpoEpisodeRunOptions
  | PpoEnvRunOptions
  | DpoRunOptions
  | FlowRunOptions;

/** A preset's name (worker/presets/table.ts holds each preset's entry and lists the names). */
export type PresetName = string;

/** The objective a preset trains with: the views and exports read this, never the preset's name. */
export type PresetFamily = 'sft' | 'grpo' | 'ppo' | 'dpo' | 'flow';

/** The views that show a preset's steps, besides the dashboard. */
export type PresetView = 'Groups' | 'Batch' | 'Episodes' | 'Flow';

/** What the Experiments view needs of a preset (worker/presets/table.ts `PresetSpec`, less its functions and schema). */
export interface PresetTraits {
  title: string;
  description: string;
  fields: FieldSpec[];
  family: PresetFamily;
  /** The shipped base checkpoint it starts from (public/checkpoints/NAME); null: none. */
  base: string | null;
  views: PresetView[];
  /** The dataset rewards it takes with a person's prompt file (and a person's model as its base); null: neither. */
  dataset: DatasetRewardOptions['kind'][] | null;
  /** Its rewards are graded by the companion. */
  companion: boolean;
  /** It runs a person's environment program (the options' `environment`, set by `loadEnvironment`). */
  environment?: boolean;
  /** How long its default run takes on the README's machine; absent: the README gives no figure. */
  speed?: PresetSpeed;
  /** The first-visit guide suggests it (lower `rank` first) with what it shows; absent: not suggested. */
  firstStep?: { rank: number; why: string };
}

/**
 * A measured speed, quoted from README.md (a 2-core machine without a GPU, the wasm backend that
 * `auto` picks there): seconds per training step (one figure or a range, evaluations left out), or
 * one whole run; `source` says where in the README.
 */
export type PresetSpeed =
  | { perStep: [number, number]; source: string }
  | { run: { steps: number; seconds: number; what: string }; source: string };

/** A preset as the app sees it: its traits, name and default options (the shape its family's schema gives). */
export type PresetInfo = PresetTraits & { name: PresetName; defaults: RunOptions };

/** A problem with run options: the dotted path of the field and a message naming it and its allowed range or values. */
export interface OptionProblem {
  path: string;
  message: string;
}

/**
 * A config JSON (a partial set of run options) read onto its preset's defaults
 * (worker/presets/config-import.ts): the completed options and their problems (empty: valid), or,
 * when it names no preset (or is not an object), the problems that say so.
 */
export type ConfigCompletion =
  { ok: true; options: RunOptions; problems: OptionProblem[] } | { ok: false; problems: OptionProblem[] };

/**
 * One input of the options form, derived from the worker's schema (worker/presets/schema.ts) so the
 * app renders it without the validator.
 */
export interface FieldSpec {
  /** Dotted path into the options, e.g. `policyLoss.clipHigh`. */
  path: string;
  label: string;
  section: FieldSection;
  /** What the field means and its default when left empty. */
  help: string;
  kind: 'number' | 'integer' | 'select' | 'boolean';
  /** Bounds (number, integer); `*Exclusive` when the bound itself is not allowed. */
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxExclusive?: boolean;
  /** Allowed values (select). */
  values?: string[];
  /** May be left out (empty): the RL core's default applies. */
  optional: boolean;
  /** Shown only while each named field holds one of the listed values (a variant's option). */
  when?: { path: string; values: string[] }[];
  /** The value the form fills in when the field appears (a required option of a variant). */
  initial?: number | string | boolean;
  /** One of the options changed on most runs: the form shows it first, in an always-open section, whatever its `section`. */
  common?: boolean;
  /** The allowed range or values in words, as problems state them: `a number in [0, 10]`. */
  allowed: string;
}
