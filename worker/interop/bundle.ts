/**
 * A run as one folder a verl or SkyRL user starts from (`dewpoint export RUN --to verl|skyrl`):
 *
 * - `model/`: the weights the run ended with as a Hugging Face folder (worker/model/checkpoint.ts
 *   `exportCheckpoint`: config.json, model.safetensors, the tokenizer; under LoRA the merged model
 *   and PEFT's adapter_config.json + adapter_model.safetensors), for `actor_rollout_ref.model.path`.
 * - `train.parquet`, `val.parquet`: the prompts with verl's keys and SkyRL's (files.ts
 *   `verlPromptsParquet`), `agent_name` for a multi-turn preset; `rollouts.parquet`: every rollout.
 * - `reward.py`: the run's reward as standard-library Python (reward-twin.ts), verl's
 *   `custom_reward_function` (`path`, and `name` whose default is `compute_score`: volcengine/verl @
 *   b178a3c verl/trainer/config/ppo_trainer.yaml, loaded by verl/trainer/ppo/reward.py
 *   `get_custom_reward_fn`); `parity.jsonl`: each rollout's text, truth, Dewpoint's score and
 *   finish reason, which `python3 reward.py check parity.jsonl` compares.
 * - `pairs.parquet` (a DPO run): the preference pairs, TRL's columns (files.ts `pairsParquet`).
 * - `launch.sh` (verl): main_ppo with the run's options (verl.ts), the model, data and reward set.
 * - `launch.sh` (SkyRL): the bundle's `skyrl_main.py` (SkyRL's main_base with the environment
 *   registered in its Ray task) with the run's options as SkyRL's overrides (skyrl.ts), and
 *   `skyrl_env.py`, the `dewpoint_reward` environment whose step scores with reward.py.
 * - `preflight.json` and `README.md`: the checks (preflight.ts), every option mapped or not, and
 *   what does not carry over.
 *
 * Pure: the run's options, stored steps and model files in, files out. Not the writing of them
 * (cli/commands/export.ts) nor the parity run (which needs Python).
 */
import type { RunOptions } from '../contract/options';
import type { ExportFile } from '../contract/records';
import type { CheckpointFiles } from '../model/checkpoint';
import { presetOf } from '../presets/table';
import {
  configText,
  exportPrompts,
  pairsParquet,
  rolloutsParquet,
  verlDataSource,
  verlPromptsParquet,
  type StepExport,
} from './files';
import { exportRun, formatUnmapped } from './index';
import { preflight, type ModelJson, type PreflightResult } from './preflight';
import { rewardPy, twinRewardOf } from './reward-twin';
import { preferencePairs } from './rollouts';
import { skyrlCommand, SKYRL_COMMIT, type SkyrlExport } from './skyrl';
import skyrlEnvSource from './skyrl_env.py?raw';
import skyrlMainSource from './skyrl_main.py?raw';

export const BUNDLE_TARGETS = ['verl', 'skyrl'] as const;
export type BundleTarget = (typeof BUNDLE_TARGETS)[number];

/** verl's agent loop for tool calls (volcengine/verl @ b178a3c verl/experimental/agent_loop/tool_agent_loop.py, `@register("tool_agent")`). */
export const VERL_TOOL_AGENT = 'tool_agent';

export interface Bundle {
  files: ExportFile[];
  preflight: PreflightResult[];
  /** The rules that refused: the bundle is written, but what they name fails on arrival. */
  refused: PreflightResult[];
  /** Rows of parity.jsonl (rollouts with a score). */
  parityRows: number;
}

const decoder = new TextDecoder();
const jsonOf = (bytes: Uint8Array | undefined) =>
  bytes ? (JSON.parse(decoder.decode(bytes)) as Record<string, unknown>) : undefined;
const text = (name: string, body: string, mime = 'text/plain'): ExportFile => ({
  name,
  mime,
  bytes: new TextEncoder().encode(body),
});
const PARQUET = 'application/vnd.apache.parquet';

export function bundleFiles(
  options: RunOptions,
  steps: readonly StepExport[],
  model: CheckpointFiles | null,
  to: BundleTarget,
  /** Checks the caller adds (the app's `model-step`, when model/ is an older checkpoint than the last step). */
  notes: readonly PreflightResult[] = [],
): Bundle {
  const modelJson: ModelJson | null = model
    ? {
        config: jsonOf(model['config.json'])!,
        tokenizer: jsonOf(model['tokenizer.json'])!,
        tokenizerConfig: jsonOf(model['tokenizer_config.json']),
      }
    : null;
  const { prompts, heldOut } = exportPrompts(options, steps);
  const checks = [...preflight(options, modelJson, to, prompts.length), ...notes];
  const refused = checks.filter((c) => c.status === 'refused');
  const files: ExportFile[] = [];
  if (model)
    for (const [name, bytes] of Object.entries(model))
      if (bytes) files.push({ name: `model/${name}`, mime: 'application/octet-stream', bytes });

  const source = verlDataSource(options);
  const agent = presetOf(options).episodes ? VERL_TOOL_AGENT : undefined;
  const rows = steps.flatMap((s) => s.rows);
  files.push({ name: 'rollouts.parquet', mime: PARQUET, bytes: rolloutsParquet(rows) });
  files.push({
    name: 'train.parquet',
    mime: PARQUET,
    bytes: verlPromptsParquet(prompts, source.dataSource, source.ability, 'train', agent),
  });
  if (heldOut.length)
    files.push({
      name: 'val.parquet',
      mime: PARQUET,
      bytes: verlPromptsParquet(heldOut, source.dataSource, source.ability, 'test', agent),
    });

  // A DPO run's preference data: verl's PPO launcher has no DPO trainer, so the pairs travel as data.
  const pairs = presetOf(options).family === 'dpo' ? preferencePairs(steps) : null;
  if (pairs) files.push({ name: 'pairs.parquet', mime: PARQUET, bytes: pairsParquet(pairs) });

  const twin = twinRewardOf(options);
  const scored = rows.filter((r) => r.score !== null);
  if (twin.ok) {
    files.push(text('reward.py', rewardPy(twin.reward), 'text/x-python'));
    // finish_reason: how the last action ended, which calc's twin reads (an episode's box ended by EOS was the environment's to score).
    const parity = scored.map((r) =>
      JSON.stringify({ solution_str: r.output, ground_truth: r.gts, score: r.score, finish_reason: r.finish_reason }),
    );
    files.push(text('parity.jsonl', parity.map((l) => `${l}\n`).join(''), 'application/jsonl'));
  }

  const modelRefused = refused.some((c) => ['model-saved', 'head-dim-multiple-of-32', 'hf-tokenizer'].includes(c.rule));
  const guard = modelRefused
    ? [
        '# preflight refused model/ (preflight.json): it does not load there. Set MODEL_PATH to a model that does.',
        'if [ -z "${MODEL_PATH:-}" ]; then',
        `  echo "launch.sh: preflight refused model/: ${refused.map((c) => c.rule).join(', ')} (preflight.json); set MODEL_PATH" >&2`,
        '  exit 1',
        'fi',
      ]
    : [];
  const header = [
    'HERE="$(cd "$(dirname "$0")" && pwd)"',
    ...guard,
    'MODEL_PATH="${MODEL_PATH:-$HERE/model}"',
    'TRAIN_FILES="${TRAIN_FILES:-$HERE/train.parquet}"',
    `VAL_FILES="\${VAL_FILES:-$HERE/${heldOut.length ? 'val' : 'train'}.parquet}"`,
    '',
  ];
  const launch = to === 'verl' ? exportRun(options, 'verl') : null;
  if (launch?.ok) {
    const command = twin.ok
      ? `${launch.command} \\\n    custom_reward_function.path=$HERE/reward.py \\\n    custom_reward_function.name=compute_score`
      : launch.command;
    files.push(
      text(
        'launch.sh',
        configText(options, { ...launch, command }).replace('\n\npython3', `\n\n${header.join('\n')}\npython3`),
        'text/x-shellscript',
      ),
    );
  }
  const skyrl = to === 'skyrl' ? skyrlCommand(options) : null;
  // The environment scores with reward.py: without it there is nothing for SkyRL to run (preflight skyrl-env).
  if (skyrl?.ok && twin.ok) {
    files.push(text('skyrl_env.py', skyrlEnvSource, 'text/x-python'));
    files.push(text('skyrl_main.py', skyrlMainSource, 'text/x-python'));
    files.push(text('launch.sh', skyrlLaunch(options, skyrl, header), 'text/x-shellscript'));
  }
  files.push(text('preflight.json', `${JSON.stringify(checks, null, 2)}\n`, 'application/json'));
  files.push(
    text(
      'README.md',
      readme(options, to, checks, {
        prompts: prompts.length,
        heldOut: heldOut.length,
        rollouts: rows.length,
        parity: twin.ok ? scored.length : null,
        agent,
        pairs: pairs?.length ?? null,
        skyrlLaunch: skyrl?.ok === true && twin.ok,
      }),
      'text/markdown',
    ),
  );
  return { files, preflight: checks, refused, parityRows: twin.ok ? scored.length : 0 };
}

function readme(
  options: RunOptions,
  to: BundleTarget,
  checks: readonly PreflightResult[],
  n: {
    prompts: number;
    heldOut: number;
    rollouts: number;
    parity: number | null;
    agent: string | undefined;
    pairs: number | null;
    skyrlLaunch: boolean;
  },
): string {
  const launch = exportRun(options, 'verl');
  const skyrl = skyrlCommand(options);
  const modelKey = to === 'verl' ? "verl's `actor_rollout_ref.model.path`" : "SkyRL's `trainer.policy.model.path`";
  const lines = [
    `# ${options.preset}: a Dewpoint run bundled for ${to === 'verl' ? 'verl' : 'SkyRL'}`,
    '',
    '## Preflight',
    '',
    ...checks.map((c) => `- **${c.rule}**: ${c.status}. ${c.detail}`),
    '',
    '## Files',
    '',
    `- \`model/\`: the weights the run ended with, a Hugging Face folder (${modelKey}); under LoRA also`,
    "  PEFT's `adapter_config.json` (`r`, `lora_alpha`, `target_modules`) and `adapter_model.safetensors` beside the merged model.",
    `- \`train.parquet\` (${n.prompts} prompts) and ${n.heldOut ? `\`val.parquet\` (${n.heldOut} held-out tasks)` : 'no val.parquet (nothing is held out)'}:`,
    "  verl's keys (`data_source`, `prompt`, `ability`, `reward_model{style, ground_truth}`, `extra_info`; volcengine/verl",
    "  @ b178a3c examples/data_preprocess/gsm8k.py) and SkyRL's (`env_class`, `reward_spec{method, ground_truth}`;",
    `  NovaSky-AI/SkyRL @ a956457 docs/content/docs/datasets/dataset-preparation.mdx)${n.agent ? ',' : '.'}`,
    ...(n.agent ? [`  and \`agent_name\` = \`${n.agent}\` (verl's agent loop for tool calls).`] : []),
    `- \`rollouts.parquet\`: the run's ${n.rollouts} rollouts with ids, log-probs and advantages.`,
    ...(n.pairs === null
      ? []
      : [
          `- \`pairs.parquet\`: the run's ${n.pairs} preference pairs, TRL's \`prompt\`, \`chosen\`, \`rejected\` (plain text) with`,
          '  `ground_truth`, `chosen_score`, `rejected_score`, `step`; reward.py scores both sides as the run did (parity.jsonl).',
        ]),
    n.parity === null
      ? "- No `reward.py`: the run's reward has no standard-library twin (see preflight, reward-twin)."
      : "- `reward.py`: the run's reward in standard-library Python. verl: `custom_reward_function.path=reward.py`, `name=compute_score`\n" +
        `  (its signature: \`compute_score(data_source, solution_str, ground_truth, extra_info)\`). \`parity.jsonl\` holds ${n.parity}\n` +
        "  rollouts with Dewpoint's score: `python3 reward.py check parity.jsonl` compares them (`dewpoint export` runs it:\n" +
        "  parity.json; the app's download has no Python to run it with).",
    to === 'verl'
      ? launch.ok
        ? '- `launch.sh`: verl main_ppo with the options below; MODEL_PATH, TRAIN_FILES and VAL_FILES default to this folder.'
        : `- No \`launch.sh\`: ${launch.reason}`
      : n.skyrlLaunch
        ? "- `skyrl_env.py`: the `dewpoint_reward` environment (skyrl_gym BaseTextEnv): one step, scored by reward.py's\n" +
          "  `compute_score` against the row's `reward_spec.ground_truth`, then done; `register_env()` registers it.\n" +
          "- `skyrl_main.py`: SkyRL's main_base with `register_env()` called in its Ray task (SkyRL's pattern for a custom env).\n" +
          '- `launch.sh`: `skyrl_main` with the options below; MODEL_PATH, TRAIN_FILES and VAL_FILES default to this folder,\n' +
          "  which it puts on PYTHONPATH (Ray's workers must see it: a shared filesystem). Run it with SkyRL's Python, e.g.\n" +
          '  `SKYRL_PYTHON="uv run --isolated --extra fsdp python"` from a SkyRL checkout (NovaSky-AI/SkyRL @ a956457), and set\n' +
          '  the GPU counts (`trainer.placement.*`, `generator.inference_engine.num_engines`) for the cluster (default 1).'
        : `- No \`launch.sh\`: ${skyrl.ok ? 'the environment needs reward.py (preflight: skyrl-env)' : skyrl.reason}`,
    '',
    '## What does not carry over',
    '',
    "- Optimizer state: AdamW's moments stay here; the cluster's optimizer starts fresh from `model/`.",
    "- Prompt format: Dewpoint trained on the raw prompt text; verl and SkyRL render `prompt` with the tokenizer's chat template.",
  ];
  const lora = 'loraRank' in options && options.loraRank !== undefined;
  if (lora && to === 'skyrl')
    lines.push(
      "- LoRA adapters as such: launch.sh starts SkyRL's LoRA (`trainer.policy.model.lora.rank`, `alpha`, `target_modules`,",
      "  `dropout`) on `model/`, the merged weights, with fresh adapters; Dewpoint's adapter files are not loaded by it.",
    );
  if (lora && to === 'verl')
    lines.push(
      "- LoRA adapters as such: launch.sh starts verl's LoRA (`lora_rank`, `lora_alpha`, `target_modules`) on `model/`, the",
      '  merged weights, with fresh adapters (B = 0: the same model at the start). To continue these adapters instead, set',
      "  MODEL_PATH to the run's base and `actor_rollout_ref.model.lora_adapter_path=$HERE/model` (verl reads adapter_config.json",
      '  and adapter_model.safetensors there; volcengine/verl docs/advance/ppo_lora.rst).',
    );
  if (n.pairs !== null && to === 'skyrl')
    lines.push(
      '- The DPO objective: SkyRL has no DPO trainer (preflight: launch), so there is no launch.sh. What SkyRL takes of this',
      '  run: `model/` as the policy a GRPO or PPO run starts from, the prompts and reward.py. The pairs serve a DPO trainer',
      "  elsewhere: TRL's DPOTrainer reads `pairs.parquet` as it is, and `dewpoint export RUN --to trl` writes its DPOConfig.",
    );
  if (n.pairs !== null && to === 'verl')
    lines.push(
      "- The DPO objective: verl's PPO launcher (`verl.trainer.main_ppo`) has no DPO trainer (preflight: launch), so there is",
      '  no launch.sh. What verl takes of this run: `model/` as the actor a GRPO or PPO run starts from',
      "  (`actor_rollout_ref.model.path`), the prompts and reward.py. The pairs serve a DPO trainer elsewhere: TRL's DPOTrainer",
      '  reads `pairs.parquet` as it is, and `dewpoint export RUN --to trl` writes its DPOConfig.',
    );
  if (presetOf(options).episodes)
    lines.push(
      "- Tool format: the episodes' actions are `calc(X+Y)`-style calls answered by `=R` observations, ended by `\\boxed{N}`;",
      "  verl's tool agent loop needs a tool (`actor_rollout_ref.rollout.multi_turn.tool_config_path`) speaking that format, which",
      '  this export does not write.',
      '- reward.py reads an episode as Dewpoint records it: turns (an action and its observation) joined by ` ⏎ `. A last action',
      '  ended by EOS that is exactly `\\boxed{N}` was scored by the environment (N is the answer: 1); any other episode by the last',
      '  box of its text. A response cut at its length limit is the second kind: compute_score reads `extra_info["finish_reason"]`',
      '  ("length"; "stop" when absent: verl\'s naive reward manager passes the row\'s extra_info and num_turns, no finish reason).',
      ...(to === 'skyrl'
        ? [
            "- SkyRL's episodes: skyrl_env.py's step scores the whole response and ends the episode (no `=R` observation, one turn),",
            '  taking it as ended by the model ("stop"): SkyRL hands a step the text, not how it ended.',
          ]
        : []),
    );
  const options_ = to === 'verl' ? launch : skyrl;
  if (options_.ok) {
    const name = to === 'verl' ? 'verl' : 'SkyRL';
    lines.push('', '## Options', '', `Mapped to ${name} (${options_.mapped.length}):`, '');
    for (const m of options_.mapped)
      lines.push(
        `- \`${m.path}\` = ${JSON.stringify(m.value)} → \`${m.key}=${JSON.stringify(m.to)}\`${m.note ? ` (${m.note})` : ''}`,
      );
    lines.push(
      '',
      `Not mapped (${options_.unmapped.length}):`,
      '',
      ...formatUnmapped(options_.unmapped).map((l) => `- ${l}`),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The SkyRL launch.sh: the bundle's paths, the folder on PYTHONPATH (skyrl_env.py for the Ray task), the command, the options left out. */
function skyrlLaunch(options: RunOptions, e: SkyrlExport, header: readonly string[]): string {
  return [
    '#!/usr/bin/env bash',
    `# Dewpoint ${options.preset} as a SkyRL launch (keys of NovaSky-AI/SkyRL @ ${SKYRL_COMMIT.slice(0, 7)}). SKYRL_PYTHON: the`,
    '# Python with SkyRL installed (default python3). Extra overrides (GPU counts, trainer.ckpt_path) go after it: "$@".',
    'set -euo pipefail',
    '',
    ...header,
    'export PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"',
    `${e.command} \\\n    "$@"`,
    '',
    `# Not mapped (${e.unmapped.length}):`,
    ...formatUnmapped(e.unmapped).map((l) => `#   ${l}`),
    '',
  ].join('\n');
}
