/**
 * What a preset's task or environment is, in the words an export's unmapped list uses: neither
 * verl's nor TRL's config names a dataset or a reward, so the task itself (the `preset`) is
 * always listed, with what to supply instead. Not the presets themselves (worker/runs/presets.ts).
 */
import type { RunOptions } from '../protocol';

export type RlPreset = 'grpo-arith' | 'grpo-calc' | 'grpo-guess' | 'grpo-code' | 'ppo-arith' | 'ppo-calc';

export const TASKS: Record<RlPreset, string> = {
  'grpo-arith':
    '2-digit addition prompts (47+35=) from public/checkpoints/arith-base, reward 1 for the exact \\boxed{} answer (MathReward)',
  'ppo-arith':
    '2-digit addition prompts (47+35=) from public/checkpoints/arith-base, reward 1 for the exact \\boxed{} answer (MathReward)',
  'grpo-calc':
    'a+b+c problems with a calculator tool: the model writes calc(47+35), the environment appends =82, up to maxTurns actions, reward 1 for the right \\boxed{} answer',
  'ppo-calc':
    'a+b+c problems with a calculator tool: the model writes calc(47+35), the environment appends =82, up to maxTurns actions, reward 1 for the right \\boxed{} answer',
  'grpo-guess': 'guess a secret in 1..63 from higher/lower answers, up to maxTurns guesses, reward 1 when found',
  'grpo-code':
    'write a Python program for tasks like "add 3, mul 5:", graded in the companion sandbox on three stdin/stdout cases (reward: the fraction passed)',
};

/** Flow-GRPO and SFT have no RL-on-a-language-model equivalent in either target; DPO none in verl. */
export function unsupported(preset: RunOptions['preset'], target: 'verl' | 'trl'): string | null {
  if (preset === 'flowgrpo-2d')
    return `flowgrpo-2d trains a 2-D rectified-flow policy (an MLP velocity field over points, Flow-GRPO on SDE samples): ${target === 'verl' ? "verl's main_ppo" : "TRL's trainers"} train language models, so there is no equivalent run to export`;
  if (preset === 'sft-arith')
    return `sft-arith is supervised fine-tuning, not RL: ${target === 'verl' ? 'verl.trainer.main_ppo has no SFT mode (verl ships a separate SFT trainer, which this export does not target)' : 'use TRL SFTTrainer/SFTConfig on the addition pairs; this export targets the RL configs (GRPOConfig, DPOConfig, PPOConfig) only'}`;
  if (preset === 'dpo-arith' && target === 'verl')
    return 'dpo-arith is DPO: verl.trainer.main_ppo trains PPO-family objectives only; export it to TRL (DPOConfig) instead';
  return null;
}

/** The run's task in words: a person's dataset when it has one (with its reward), else the preset's own. */
export function taskOf(o: RunOptions & { preset: RlPreset | 'dpo-arith' }): string {
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
  const task = o.preset === 'dpo-arith' ? TASKS['grpo-arith'] : TASKS[o.preset];
  const base = 'base' in o ? o.base : undefined;
  return base
    ? `${task.replace('public/checkpoints/arith-base', `the model ${base.name}`)} (a Hugging Face folder: set MODEL_PATH to it)`
    : task;
}
