/**
 * What a preset's task or environment is, in the words an export's unmapped list uses: neither
 * verl's nor TRL's config names a dataset or a reward, so the task itself (the `preset`) is
 * always listed, with what to supply instead. The words and the refusals are the preset table's
 * (worker/presets/table.ts, each entry's `export`).
 */
import type { RunOptions } from '../contract/options';
import { presetOf } from '../presets/table';

/** Why `target` cannot take a run of this preset (SFT, Flow-GRPO; DPO on verl), or null when it can. */
export function unsupported(o: RunOptions, target: 'verl' | 'trl'): string | null {
  return presetOf(o).export[target];
}

/** The run's task in words: a person's dataset when it has one (with its reward), else the preset's own. */
export function taskOf(o: RunOptions): string {
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
