/**
 * Held-out exact-match accuracy on arithmetic tasks with greedy decoding (KV cache), and mean
 * completion length (in ids, EOS included); `evaluateTasks` the same for any single-turn tasks
 * under their own reward (a person's dataset: a sample is correct when its reward is 1);
 * `evaluateEpisodes` the same for an environment kind, over whole episodes.
 */
import type { ArithTask } from '../data/arith';
import { encodeExample } from '../data/arith';
import { exactMatch } from '../data/answer';
import type { CharTokenizer, TextTokenizer } from '../data/tokenizer';
import type { EnvTask, EnvironmentKind } from '../episodes/environment';
import { collectEpisodes } from '../episodes/rollout';
import type { Model } from '../model/model';
import { generate } from '../rollout/generate';

export interface EvalResult {
  n: number;
  accuracy: number;
  meanLength: number;
  /** A few decoded examples, for the UI and logs. */
  samples: { prompt: string; completion: string; answer: string; correct: boolean }[];
}

export async function evaluateArith(
  model: Model,
  tok: TextTokenizer,
  tasks: readonly ArithTask[],
  maxNew = 16,
  batch = 64,
): Promise<EvalResult> {
  const prompts = tasks.map((t) => encodeExample(tok, t).promptIds);
  const completions: Int32Array[] = [];
  for (let i = 0; i < prompts.length; i += batch) {
    // Temperature 0 is greedy: the support is the arg-max, whatever the seed.
    const gens = await generate(model, prompts.slice(i, i + batch), { maxNew, eos: tok.eos, seed: 0, temperature: 0 });
    completions.push(...gens.map((g) => g.sampledIds));
  }
  let correct = 0;
  let length = 0;
  const samples: EvalResult['samples'] = [];
  completions.forEach((ids, i) => {
    const text = tok.decode(ids);
    const ok = exactMatch(text, tasks[i]);
    if (ok) correct++;
    length += ids.length;
    if (samples.length < 8)
      samples.push({ prompt: tasks[i].prompt, completion: text, answer: tasks[i].answer, correct: ok });
  });
  return {
    n: tasks.length,
    accuracy: tasks.length ? correct / tasks.length : 0,
    meanLength: tasks.length ? length / tasks.length : 0,
    samples,
  };
}

/**
 * Greedy completions of `tasks` (prompt ids from `promptIds`) scored by `reward` (EOS excluded from
 * its text, as in training): the accuracy is the fraction with reward 1. A reward may be async (a
 * code grader); one that reports a failure counts as not correct.
 */
export async function evaluateTasks<T extends { prompt: string; answer: string }>(
  model: Model,
  tok: TextTokenizer,
  tasks: readonly T[],
  promptIds: (task: T) => Int32Array,
  reward: (
    completion: string,
    task: T,
  ) => { score: number; failure?: string } | Promise<{ score: number; failure?: string }>,
  maxNew: number,
  batch = 64,
): Promise<EvalResult> {
  let correct = 0;
  let length = 0;
  const samples: EvalResult['samples'] = [];
  for (let i = 0; i < tasks.length; i += batch) {
    const part = tasks.slice(i, i + batch);
    const gens = await generate(model, part.map(promptIds), { maxNew, eos: tok.eos, seed: 0, temperature: 0 });
    const texts = gens.map((g) =>
      tok.decode(g.finishReason === 'stop' ? g.sampledIds.subarray(0, g.sampledIds.length - 1) : g.sampledIds),
    );
    const scores = await Promise.all(texts.map((text, k) => reward(text, part[k])));
    scores.forEach((r, k) => {
      const ok = !r.failure && r.score === 1;
      if (ok) correct++;
      length += gens[k].sampledIds.length;
      if (samples.length < 8)
        samples.push({ prompt: part[k].prompt, completion: texts[k], answer: part[k].answer, correct: ok });
    });
  }
  return {
    n: tasks.length,
    accuracy: tasks.length ? correct / tasks.length : 0,
    meanLength: tasks.length ? length / tasks.length : 0,
    samples,
  };
}

/**
 * Held-out accuracy of an environment kind: one greedy episode per task (temperature 0, no
 * journal), accuracy = the fraction of episodes with reward 1, mean length = sampled ids per
 * episode. The same rollout as training (worker/episodes/rollout.ts), so budgets and terminations agree.
 */
export async function evaluateEpisodes(
  model: Model,
  tok: CharTokenizer,
  kind: EnvironmentKind,
  tasks: readonly EnvTask[],
  batch = 64,
): Promise<EvalResult> {
  let correct = 0;
  let length = 0;
  const samples: EvalResult['samples'] = [];
  for (let i = 0; i < tasks.length; i += batch) {
    const chunk = tasks.slice(i, i + batch);
    const episodes = await collectEpisodes(model, chunk, 1, {
      kind,
      tok,
      maxContext: model.config.maxSeq,
      sampling: { temperature: 0 },
      seed: 0,
      policyVersion: 0,
    });
    for (const e of episodes) {
      const ok = e.episode.reward === 1;
      if (ok) correct++;
      length += e.episode.transitions.reduce((n, t) => n + t.action.tokens.length, 0);
      if (samples.length < 8)
        samples.push({
          prompt: e.task.prompt,
          completion: e.transcript.replace(/\n/g, ' ⏎ '),
          answer: e.task.answer,
          correct: ok,
        });
    }
  }
  const n = tasks.length;
  return { n, accuracy: n ? correct / n : 0, meanLength: n ? length / n : 0, samples };
}
