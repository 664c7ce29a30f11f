/**
 * Where a single-turn trainer (GRPO, PPO, DPO on the arithmetic base) gets its prompts and how it
 * scores them: the arithmetic generator with MathReward (worker/data/arith.ts, the default, as
 * before), or a person's dataset (worker/data/dataset.ts) with its reward
 * (worker/rewards/dataset-reward.ts). Either way: a seeded training stream (its `position`
 * resumes a run), the held-out tasks in a fixed order, each task's prompt ids (BOS + prompt), the
 * reward a PromptSource calls, and the held-out evaluation under that reward.
 *
 * Not the trainers (grpo.ts, ppo.ts, dpo.ts) nor the data itself.
 */
import type { ArithOptions, ArithTask } from '../data/arith';
import { encodeExample, heldOut, trainStream } from '../data/arith';
import type { DatasetTask } from '../data/dataset';
import { datasetStream, datasetTask, splitDataset } from '../data/dataset';
import type { TextTokenizer } from '../data/tokenizer';
import { encodePromptCompletion } from '../data/tokenizer';
import type { Model } from '../model/model';
import type { DatasetRecord, DatasetRunOptions } from '../contract/options';
import type { Template } from '@huggingface/jinja';
import { applyChatTemplate, parseChatTemplate, selectChatTemplate } from '../hf/chat-template';
import { isHfTokenizer } from '../model/checkpoint';
import type { CodeGrader } from '../rewards/code-grader';
import { datasetPromptReward } from '../rewards/dataset-reward';
import { taskMathReward } from '../rewards/task-math-reward';
import type { PromptReward } from '../rollout/prompt-source';
import type { EvalProgress, EvalResult, SampledEval } from './evaluate';
import { evaluateArith, evaluateTasks } from './evaluate';

/** A single-turn task: an arithmetic problem or a dataset record. Both have an id, a prompt and an answer (the ground truth). */
export type RunTask = ArithTask | DatasetTask;

export interface TaskSource<T extends RunTask = RunTask> {
  /** The seeded training stream; `position` tasks drawn so far. */
  stream: { next(): T; take(n: number): T[]; readonly position: number };
  /** The held-out tasks, in their fixed order (evaluation takes a prefix). */
  heldOut: T[];
  /** BOS + the prompt's ids. */
  promptIds(task: T): Int32Array;
  reward: PromptReward<T>;
  /** Greedy accuracy on `tasks` under the reward (and pass@1 / pass@k with `sampled`). */
  evaluate(model: Model, tasks: readonly T[], sampled?: SampledEval, progress?: EvalProgress): Promise<EvalResult>;
}

/** The arithmetic generator's options of the single-turn presets (unused with a dataset): 2-digit addition, bare prompts. */
export const ARITH_TASK: ArithOptions = { difficulty: 1, format: 'bare' };

/** What of a run's options picks the source: its dataset, else the arithmetic generator (its training set of `trainProblems`). */
interface TaskSourceConfig {
  seed: number;
  evalN: number;
  maxNew: number;
  trainProblems?: number;
  dataset?: DatasetRunOptions;
}

/** The arithmetic generator and MathReward, exactly as the trainers had them. */
function arithTaskSource(c: TaskSourceConfig, task: ArithOptions, tok: TextTokenizer): TaskSource<ArithTask> {
  const options = c.trainProblems === undefined ? task : { ...task, trainProblems: c.trainProblems };
  return {
    stream: trainStream(c.seed, options),
    heldOut: heldOut(c.evalN, options),
    promptIds: (task) => encodeExample(tok, task).promptIds,
    reward: taskMathReward,
    evaluate: (model, tasks, sampled, progress) => evaluateArith(model, tok, tasks, 16, 64, sampled, progress),
  };
}

/**
 * The chat template of a Hugging Face tokenizer (tokenizer_config.json `chat_template`, or the
 * folder's chat_template.jinja, which the loader puts there), parsed; null for a character
 * tokenizer or a tokenizer without one.
 */
function chatTemplateOf(tok: TextTokenizer): Template | null {
  if (!isHfTokenizer(tok)) return null;
  const selected = selectChatTemplate(tok.sources.tokenizerConfig?.chat_template);
  if (!selected.ok) throw new Error(`the base's tokenizer_config.json chat_template: ${selected.reason}`);
  return selected.template === undefined ? null : parseChatTemplate(selected.template);
}

/**
 * What a record's prompt samples from: a chat-list prompt rendered with the base's chat template
 * (with the generation prompt, as verl's and TRL's trainers render a conversational prompt; BOS
 * left to encodePromptCompletion, which adds it), else the prompt text.
 */
function promptText(r: DatasetRecord, tok: TextTokenizer, template: Template | null): string {
  if (!r.messages || !template || !isHfTokenizer(tok)) return r.prompt;
  return applyChatTemplate(template, r.messages, {
    addGenerationPrompt: true,
    bosToken: '',
    eosToken: tok.specialTokens.eos,
  });
}

/**
 * A dataset's tasks: every prompt encoded up front (a prompt the tokenizer refuses, or one that
 * leaves no room for `maxNew` ids in `maxSeq` positions, throws naming its record), the split and
 * the stream of dataset.ts, the held-out evaluation on the first `evalN` held-out records with
 * `maxNew` ids (the training budget) and the same reward. `code` grades with `grader`.
 */
export function datasetTaskSource(
  d: DatasetRunOptions,
  c: Pick<TaskSourceConfig, 'seed' | 'evalN' | 'maxNew'>,
  tok: TextTokenizer,
  maxSeq: number,
  grader: CodeGrader | null,
): TaskSource<DatasetTask> {
  const template = chatTemplateOf(tok);
  const ids = d.records.map((r, i) => {
    let p: Int32Array;
    try {
      p = encodePromptCompletion(tok, promptText(r, tok, template), '').promptIds;
    } catch (e) {
      throw new Error(
        `dataset ${d.name}, record ${i + 1}: the prompt cannot be encoded with the base checkpoint's tokenizer: ${(e as Error).message}`,
      );
    }
    if (p.length + c.maxNew > maxSeq)
      throw new Error(
        `dataset ${d.name}, record ${i + 1}: BOS + prompt (${p.length} ids) + maxNew (${c.maxNew}) = ` +
          `${p.length + c.maxNew} positions; the model has ${maxSeq}: shorten the prompt or lower maxNew`,
      );
    return p;
  });
  const split = splitDataset(d.records, d.heldOut);
  const reward = datasetPromptReward(d.reward, grader);
  const promptIds = (task: DatasetTask) => ids[task.record];
  return {
    stream: datasetStream(d.records, split.train, c.seed),
    heldOut: split.heldOut.slice(0, c.evalN).map((i) => datasetTask(d.records, i)),
    promptIds,
    reward,
    evaluate: (model, tasks, sampled, progress) =>
      evaluateTasks(model, tok, tasks, promptIds, reward, c.maxNew, 64, sampled, progress),
  };
}

/** The config's source: its dataset when it has one, else arithmetic. */
export function taskSourceOf(
  c: TaskSourceConfig,
  /** The arithmetic generator's options (the preset's), used without a dataset. */
  task: ArithOptions,
  tok: TextTokenizer,
  maxSeq: number,
  grader: CodeGrader | null = null,
): TaskSource {
  // Each source only ever sees its own tasks: the union type is the trainers' view of either.
  return (c.dataset
    ? datasetTaskSource(c.dataset, c, tok, maxSeq, grader)
    : arithTaskSource(c, task, tok)) as unknown as TaskSource;
}
