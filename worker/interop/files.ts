/**
 * The files an export hands to verl or TRL, built from a run's options and rollout rows
 * (rollouts.ts). Parquet through hyparquet-writer, with explicit schemas (three-level LISTs and
 * structs, as pyarrow writes them), so that `pandas.read_parquet` / `datasets.load_dataset`
 * read the same column types verl's own files have:
 *
 * verl (`--to verl`):
 * - `rollouts.parquet`: every session of every stored step (RolloutRow's columns), for analysis
 *   next to verl's own `rollout_data_dir` dumps (Dewpoint's import reads it back).
 * - `train.parquet` and `val.parquet`: the run's distinct prompts — a dataset run's whole training
 *   split — and the held-out tasks — a dataset's held-out split, else the `evalN` held-out tasks
 *   the run evaluates on (tasks.ts `heldOutPrompts`) — in verl's RLHFDataset layout (`data_source`,
 *   `prompt` as a chat list, `ability`, `reward_model: {style: rule, ground_truth}`,
 *   `extra_info: {split, index}`), for `data.train_files` and `data.val_files` (which the launch
 *   always sets, and evaluates on every `test_freq` steps).
 * - `launch.sh`: the Hydra overrides (verl.ts) with the unmapped options as comments.
 *
 * TRL (`--to trl`):
 * - `grpo.jsonl` and `grpo-eval.jsonl` (the held-out tasks, as val.parquet): `{"prompt", "solution"}`
 *   per distinct prompt (GRPOTrainer's train_dataset and eval_dataset, which config.py's
 *   `eval_strategy="steps"` needs; TRL's `accuracy_reward` reads `solution`).
 * - `dpo.jsonl`: `{"prompt", "chosen", "rejected"}`: a DPO run's pairs, or a GRPO run's groups'
 *   best and worst completions where their rewards differ.
 * - `config.py`: the GRPOConfig/DPOConfig/PPOConfig keyword arguments (trl.ts), unmapped options
 *   as comments.
 */
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { RunOptions } from '../contract/options';
import type { ExportFile, GroupRecord } from '../contract/records';
import { exportRun, formatUnmapped, type ExportTarget } from './index';
import type { ExportFailure } from './types';
import type { TrlExport } from './trl';
import type { VerlExport } from './verl';
import { splitDataset } from '../data/dataset';
import { heldOutPrompts } from './tasks';
import { presetOf } from '../presets/table';
import { importedOptions } from './verl-import';
import type { RunStore } from '../store/run-store';
import {
  distinctPrompts,
  preferencePairs,
  storedSteps,
  type PairRow,
  type PromptRow,
  type RolloutRow,
} from './rollouts';

type SchemaElement = Record<string, unknown>;
const str = (name: string, optional = false): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  repetition_type: optional ? 'OPTIONAL' : 'REQUIRED',
});
const scalar = (name: string, type: 'INT32' | 'DOUBLE', optional = false): SchemaElement => ({
  name,
  type,
  repetition_type: optional ? 'OPTIONAL' : 'REQUIRED',
});
/** A three-level LIST of `element` (pyarrow's layout: `name.list.element`). */
const list = (name: string, element: SchemaElement[]): SchemaElement[] => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element,
];
const struct = (name: string, fields: SchemaElement[], repetition = 'OPTIONAL'): SchemaElement[] => [
  { name, repetition_type: repetition, num_children: fields.length },
  ...fields,
];

function parquet(columns: { name: string; data: unknown[]; schema: SchemaElement[] }[]): Uint8Array {
  const schema = [{ name: 'root', num_children: columns.length }, ...columns.flatMap((c) => c.schema)];
  const buffer = parquetWriteBuffer({
    columnData: columns.map((c) => ({ name: c.name, data: c.data })),
    schema: schema as never,
  });
  return new Uint8Array(buffer);
}

const ROLLOUT_SCALARS: [keyof RolloutRow, SchemaElement][] = [
  ['step', scalar('step', 'INT32')],
  ['uid', str('uid')],
  ['sample', scalar('sample', 'INT32')],
  ['data_source', str('data_source')],
  ['input', str('input')],
  ['output', str('output')],
  ['gts', str('gts')],
  ['score', scalar('score', 'DOUBLE', true)],
  ['status', str('status')],
  ['finish_reason', str('finish_reason')],
  ['param_version_start', scalar('param_version_start', 'INT32')],
  ['param_version_end', scalar('param_version_end', 'INT32')],
];
const ROLLOUT_LISTS: [keyof RolloutRow, 'INT32' | 'DOUBLE'][] = [
  ['prompt_ids', 'INT32'],
  ['response_ids', 'INT32'],
  ['response_mask', 'INT32'],
  ['rollout_log_probs', 'DOUBLE'],
  ['old_log_probs', 'DOUBLE'],
  ['advantages', 'DOUBLE'],
];

export function rolloutsParquet(rows: readonly RolloutRow[]): Uint8Array {
  return parquet([
    ...ROLLOUT_SCALARS.map(([key, schema]) => ({ name: key, data: rows.map((r) => r[key]), schema: [schema] })),
    ...ROLLOUT_LISTS.map(([key, type]) => ({
      name: key,
      data: rows.map((r) => r[key]),
      schema: list(key, [scalar('element', type)]),
    })),
  ]);
}

/** The environment SkyRL scores a bundle's rows with: the bundle's skyrl_env.py registers it over reward.py (skyrl.ts). */
export const SKYRL_ENV_CLASS = 'dewpoint_reward';

/**
 * verl's RLHFDataset layout (volcengine/verl @ b178a3c examples/data_preprocess/gsm8k.py
 * `process_fn`'s rows: `data_source`, `prompt` as a chat list, `ability`, `reward_model: {style:
 * rule, ground_truth}`, `extra_info: {split, index}`) and SkyRL's beside it (NovaSky-AI/SkyRL @
 * a956457 docs/content/docs/datasets/dataset-preparation.mdx, "Format Requirements": the same
 * `data_source`, `prompt`, `extra_info`, plus `env_class` and `reward_spec: {method: rule,
 * ground_truth}`), so one file serves both; `agentName` adds verl's `agent_name` column, which
 * picks the agent loop of a multi-turn (tool) rollout (verl/experimental/agent_loop/agent_loop.py
 * reads it from the batch, `@register("tool_agent")` in tool_agent_loop.py names the tool loop).
 */
export function verlPromptsParquet(
  prompts: readonly PromptRow[],
  dataSource: string,
  ability: string,
  split: 'train' | 'test' = 'train',
  agentName?: string,
): Uint8Array {
  return parquet([
    { name: 'data_source', data: prompts.map(() => dataSource), schema: [str('data_source')] },
    {
      name: 'prompt',
      data: prompts.map((p) => [{ role: 'user', content: p.prompt }]),
      schema: list('prompt', struct('element', [str('role'), str('content')], 'REQUIRED')),
    },
    { name: 'ability', data: prompts.map(() => ability), schema: [str('ability')] },
    {
      name: 'reward_model',
      data: prompts.map((p) => ({ style: 'rule', ground_truth: p.answer })),
      schema: struct('reward_model', [str('style'), str('ground_truth')]),
    },
    {
      name: 'extra_info',
      data: prompts.map((_, i) => ({ split, index: i })),
      schema: struct('extra_info', [str('split'), scalar('index', 'INT32')]),
    },
    { name: 'env_class', data: prompts.map(() => SKYRL_ENV_CLASS), schema: [str('env_class')] },
    {
      name: 'reward_spec',
      data: prompts.map((p) => ({ method: 'rule', ground_truth: p.answer })),
      schema: struct('reward_spec', [str('method'), str('ground_truth')]),
    },
    ...(agentName === undefined
      ? []
      : [{ name: 'agent_name', data: prompts.map(() => agentName), schema: [str('agent_name')] }]),
  ]);
}

/**
 * Preference pairs as parquet: TRL's standard preference columns (`prompt`, `chosen`, `rejected`,
 * plain text, explicit prompt: huggingface/trl @ 0087e4f docs/source/dataset_formats.md, "Preference"), then the ground truth,
 * each side's reward, the step and where the pair came from (a DPO step's pair, or a GRPO group's
 * best and worst).
 */
export function pairsParquet(pairs: readonly PairRow[]): Uint8Array {
  return parquet([
    { name: 'prompt', data: pairs.map((p) => p.prompt), schema: [str('prompt')] },
    { name: 'chosen', data: pairs.map((p) => p.chosen), schema: [str('chosen')] },
    { name: 'rejected', data: pairs.map((p) => p.rejected), schema: [str('rejected')] },
    { name: 'ground_truth', data: pairs.map((p) => p.answer), schema: [str('ground_truth')] },
    { name: 'chosen_score', data: pairs.map((p) => p.chosenReward), schema: [scalar('chosen_score', 'DOUBLE')] },
    { name: 'rejected_score', data: pairs.map((p) => p.rejectedReward), schema: [scalar('rejected_score', 'DOUBLE')] },
    { name: 'step', data: pairs.map((p) => p.step), schema: [scalar('step', 'INT32')] },
    { name: 'source', data: pairs.map((p) => p.source), schema: [str('source')] },
  ]);
}

const jsonl = (lines: readonly unknown[]) =>
  new TextEncoder().encode(lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : ''));

const trlGrpoJsonl = (prompts: readonly PromptRow[]) =>
  jsonl(prompts.map((p) => ({ prompt: p.prompt, solution: p.answer })));
const trlDpoJsonl = (pairs: readonly PairRow[]) =>
  jsonl(pairs.map((p) => ({ prompt: p.prompt, chosen: p.chosen, rejected: p.rejected })));

/**
 * The verl data_source whose built-in scorer is closest to the preset's reward, and the ability
 * label: the arithmetic presets' MathReward reads the last \boxed{} as verl's `lighteval/MATH`
 * scorer does (verl/utils/reward_score/__init__.py), though verl compares normalised strings and
 * MathReward numbers. Others need a custom reward function (the launch's unmapped list says so).
 */
export function verlDataSource(options: RunOptions): { dataSource: string; ability: string; note: string } {
  const preset = options.preset;
  const dataset = 'dataset' in options ? options.dataset : undefined;
  if (dataset && dataset.reward.kind !== 'math') {
    return {
      dataSource: `dewpoint/${dataset.reward.kind}`,
      ability: dataset.reward.kind === 'code' ? 'code' : 'text',
      note: `data_source dewpoint/${dataset.reward.kind}: verl has no built-in ${dataset.reward.kind} scorer; point custom_reward_function.path at one`,
    };
  }
  const reward = presetOf(options).export.reward;
  if (reward === 'math') {
    return {
      dataSource: 'lighteval/MATH',
      ability: 'math',
      note:
        "data_source lighteval/MATH: verl's built-in scorer takes the last \\boxed{} and compares normalised " +
        'strings (MathReward compares numbers: \\boxed{82.0} scores 1 here, 0 there)',
    };
  }
  return {
    dataSource: `dewpoint/${preset}`,
    ability: reward === 'code' ? 'code' : 'tool-use',
    note: `data_source dewpoint/${preset}: verl has no scorer for it; point custom_reward_function.path at one`,
  };
}

/** The launch command or the TRL constructor as a file, the unmapped options as comments. */
export function configText(options: RunOptions, e: VerlExport | TrlExport): string {
  const notMapped = [`# Not mapped (${e.unmapped.length}):`, ...formatUnmapped(e.unmapped).map((l) => `#   ${l}`)];
  if ('command' in e) {
    return [
      '#!/usr/bin/env bash',
      `# Dewpoint ${options.preset} as a verl launch (keys of verl-project/verl @ 1dda039). Set MODEL_PATH (the exported`,
      '# checkpoint folder), TRAIN_FILES and VAL_FILES (parquet prompts) first.',
      '',
      e.command,
      '',
      ...notMapped,
      '',
    ].join('\n');
  }
  return [
    `# Dewpoint ${options.preset} as TRL ${e.className} keyword arguments (huggingface/trl @ f2cd577).`,
    e.python,
    ...notMapped,
    '',
  ].join('\n');
}

/** One stored step as an export reads it: its groups and its rollout rows (rollouts.ts `rolloutRows`). */
export interface StepExport {
  step: number;
  groups: readonly GroupRecord[];
  rows: readonly RolloutRow[];
}

/**
 * The prompts an export's train and val files hold. A dataset run: its file's training split and
 * held-out split. Otherwise the prompts the run sampled, and the held-out tasks it evaluates on
 * (verl's launch always names val files).
 */
export function exportPrompts(
  options: RunOptions,
  steps: readonly Pick<StepExport, 'groups'>[],
): { prompts: PromptRow[]; heldOut: PromptRow[] } {
  const dataset = 'dataset' in options ? options.dataset : undefined;
  const split = dataset ? splitDataset(dataset.records, dataset.heldOut) : null;
  const asPrompts = (ids: readonly number[]) =>
    ids.map((i) => ({ prompt: dataset!.records[i].prompt, answer: dataset!.records[i].answer }));
  const prompts = split
    ? asPrompts(split.train)
    : distinctPrompts(steps.flatMap((s) => s.groups.map((g) => ({ input: g.prompt, gts: g.answer }))));
  return { prompts, heldOut: split ? asPrompts(split.heldOut) : heldOutPrompts(options) };
}

/** Every file of an export of the run's options and stored steps; the config half fails as exportRun does (SFT, Flow-GRPO; DPO on verl). */
export function exportFiles(
  options: RunOptions,
  steps: readonly StepExport[],
  to: ExportTarget,
): { ok: true; files: ExportFile[] } | ExportFailure {
  const config = exportRun(options, to);
  if (!config.ok) return config;
  const rows = steps.flatMap((s) => s.rows);
  const { prompts, heldOut } = exportPrompts(options, steps);
  const text = (name: string, body: string, mime = 'text/plain'): ExportFile => ({
    name,
    mime,
    bytes: new TextEncoder().encode(body),
  });
  if (to === 'verl') {
    const source = verlDataSource(options);
    const data = heldOut.length
      ? `# Beside this script: TRAIN_FILES=train.parquet (${prompts.length} prompts), VAL_FILES=val.parquet (${heldOut.length} held-out tasks)`
      : `# Beside this script: TRAIN_FILES=train.parquet (${prompts.length} prompts); the dataset holds nothing out: point VAL_FILES at prompts of your own`;
    const launch = configText(options, config).replace('\n# Not mapped', `\n${data}\n# ${source.note}\n# Not mapped`);
    return {
      ok: true,
      files: [
        { name: 'rollouts.parquet', mime: 'application/vnd.apache.parquet', bytes: rolloutsParquet(rows) },
        {
          name: 'train.parquet',
          mime: 'application/vnd.apache.parquet',
          bytes: verlPromptsParquet(prompts, source.dataSource, source.ability),
        },
        ...(heldOut.length
          ? [
              {
                name: 'val.parquet',
                mime: 'application/vnd.apache.parquet',
                bytes: verlPromptsParquet(heldOut, source.dataSource, source.ability, 'test'),
              },
            ]
          : []),
        text('launch.sh', launch, 'text/x-shellscript'),
      ],
    };
  }
  const pairs = preferencePairs(steps);
  const data = heldOut.length
    ? `# Beside this file: grpo.jsonl (${prompts.length} prompts) and grpo-eval.jsonl (${heldOut.length} ` +
      `held-out tasks), {prompt, solution} lines: GRPOTrainer's train_dataset and eval_dataset; dpo.jsonl ` +
      `(${pairs.length} preference pairs): DPOTrainer's`
    : `# Beside this file: grpo.jsonl (${prompts.length} prompts), {prompt, solution} lines: GRPOTrainer's ` +
      `train_dataset; dpo.jsonl (${pairs.length} preference pairs): DPOTrainer's`;
  return {
    ok: true,
    files: [
      { name: 'grpo.jsonl', mime: 'application/jsonl', bytes: trlGrpoJsonl(prompts) },
      ...(heldOut.length ? [{ name: 'grpo-eval.jsonl', mime: 'application/jsonl', bytes: trlGrpoJsonl(heldOut) }] : []),
      { name: 'dpo.jsonl', mime: 'application/jsonl', bytes: trlDpoJsonl(pairs) },
      text(
        'config.py',
        configText(options, config).replace('\n# Not mapped', `\n${data}\n# Not mapped`),
        'text/x-python',
      ),
    ],
  };
}

/** A stored run's export: its options from the store, every step that kept its groups. */
export async function exportStoredRun(
  store: RunStore,
  runId: string,
  to: ExportTarget,
): Promise<{ ok: true; files: ExportFile[] } | ExportFailure> {
  const run = (await store.listRuns()).find((r) => r.runId === runId);
  if (!run) return { ok: false, reason: `no stored run '${runId}'` };
  // The store types options as RunOptions; an imported verl run keeps its import record there.
  if (importedOptions(run) !== null)
    return {
      ok: false,
      reason:
        "this run was imported from verl rollout dumps: its files are verl's own, and it has no Dewpoint options to export",
    };
  return exportFiles(
    run.options,
    await storedSteps(store, runId, verlDataSource(run.options as RunOptions).dataSource),
    to,
  );
}
