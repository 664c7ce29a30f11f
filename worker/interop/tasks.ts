/**
 * What a preset's task or environment is, in the words an export's unmapped list uses: neither
 * verl's nor TRL's config names a dataset or a reward, so the task itself (the `preset`) is
 * always listed, with what to supply instead. The words and the refusals are the preset table's
 * (worker/presets/table.ts, each entry's `export`). And the held-out tasks a built-in task's run
 * evaluates on, for the export's val.parquet / grpo-eval.jsonl.
 */
import type { RunOptions } from '../contract/options';
import { heldOut } from '../data/arith';
import { episodeRunConfigOf, isFamily, presetOf } from '../presets/table';
import { ARITH_TASK } from '../train/task-source';
import { configuredKind } from '../train/grpo-episodes';
import type { PromptRow } from './rollouts';
import { optionLeaves, type MappingLog } from './types';

/**
 * A grpo-env run's program, tasks and wall, listed as unmapped: `target` has no option for an
 * environment that is a program run in companion sessions (its text and task list shown by size).
 */
export function environmentUnmapped(o: RunOptions, log: MappingLog, target: 'verl' | 'trl' | 'skyrl'): void {
  if (!('environment' in o) || !o.environment) return;
  const program = 'the environment is a program Dewpoint runs in companion sessions over JSON lines: ';
  const why = {
    verl:
      program +
      'in verl it would be wrapped as an agent loop or interaction (actor_rollout_ref.rollout.multi_turn), its tasks as data.train_files rows',
    trl: program + 'in TRL it would be wrapped as tools passed to GRPOTrainer, its tasks as train_dataset rows',
    skyrl:
      program +
      'in SkyRL it would be a skyrl_gym BaseTextEnv whose step answers each action (registered by env_class), its tasks as data.train_data rows',
  }[target];
  for (const { path, value } of optionLeaves(o.environment, 'environment')) {
    const shown =
      typeof value === 'string' && value.length > 80
        ? `${value.length} characters`
        : Array.isArray(value)
          ? value.every((v) => typeof v === 'string')
            ? value.join(' ')
            : `${value.length} entries`
          : value;
    log.none(path, shown, why);
  }
  log.none(
    'stepSeconds',
    o.stepSeconds,
    `the companion's wall per reset or step of the program; ${target} sets its tools' timeouts elsewhere`,
  );
}

/** Why `target` cannot take a run of this preset (SFT, Flow-GRPO; DPO on verl and SkyRL), or null when it can. */
export function unsupported(o: RunOptions, target: 'verl' | 'trl' | 'skyrl'): string | null {
  return presetOf(o).export[target];
}

/** The run's task in words: a person's dataset when it has one (with its reward), else the preset's own. */
export function taskOf(o: RunOptions): string {
  const environment = 'environment' in o ? o.environment : undefined;
  if (environment) {
    const { program, tasks } = environment;
    return (
      `the environment program ${program.name} (${program.argv.join(' ')}, sha256 ${program.sha256}) on the tasks of ` +
      `${tasks.name} (${tasks.records.length} tasks, ${tasks.heldOut} held out), reward: the program's, else the last \\boxed{} against the answer`
    );
  }
  const dataset = 'dataset' in o ? o.dataset : undefined;
  if (dataset) {
    const reward =
      dataset.reward.kind === 'regex'
        ? `regex /${dataset.reward.pattern}/ against the ground truth`
        : dataset.reward.kind === 'math'
          ? 'MathReward on the last \\boxed{}'
          : dataset.reward.kind === 'exact'
            ? 'exact match with the ground truth'
            : "the companion's test cases";
    const base =
      'base' in o && o.base ? `, from the model ${o.base.name} (a Hugging Face folder: set MODEL_PATH to it)` : '';
    return `the prompts of ${dataset.name} (${dataset.records.length} records, ${dataset.heldOut} held out), reward: ${reward}${base}`;
  }
  const task = presetOf(o).export.task ?? o.preset;
  const base = 'base' in o ? o.base : undefined;
  return base
    ? `${task.replace('public/checkpoints/arith-base', `the model ${base.name}`)} (a Hugging Face folder: set MODEL_PATH to it)`
    : task;
}

/**
 * The held-out tasks a run of a built-in task evaluates on, as its trainer picks them: the first
 * `evalN` of its environment kind's `heldOut(n)` (worker/train/grpo-episodes.ts; fewer where the
 * kind has fewer, grpo-code's 62), else of the arithmetic generator's held-out problems for the
 * trainer's task options (worker/train/task-source.ts, worker/data/arith.ts `heldOut`), in their
 * fixed order. None for a dataset run (its file's held-out split is the export's) or a preset with
 * no such tasks (Flow-GRPO).
 */
export function heldOutPrompts(o: RunOptions): PromptRow[] {
  if ('dataset' in o && o.dataset) return [];
  const rows = (tasks: readonly PromptRow[]) => tasks.map((t) => ({ prompt: t.prompt, answer: t.answer }));
  const episodes = episodeRunConfigOf(o);
  if (episodes) return rows(configuredKind(episodes).heldOut(episodes.options.evalN));
  // The single-turn presets (SFT, GRPO, PPO, DPO) train on the arithmetic generator; Flow-GRPO on no prompts.
  return isFamily(o, 'flow') ? [] : rows(heldOut(o.evalN, ARITH_TASK));
}
