/**
 * Held-out exact-match accuracy on arithmetic tasks with greedy decoding (KV cache), and mean
 * completion length (in ids, EOS included); `evaluateTasks` the same for any single-turn tasks
 * under their own reward (a person's dataset: a sample is correct when its reward is 1);
 * `evaluateEpisodes` the same for an environment kind, over whole episodes. Each may also draw k
 * samples per task at the training sampler's settings for pass@1 and pass@k (`SampledEval`).
 */
import { stopsOf } from '../model/checkpoint';
import type { ArithTask } from '../data/arith';
import { encodeExample } from '../data/arith';
import { exactMatch } from '../data/answer';
import type { CharTokenizer, TextTokenizer } from '../data/tokenizer';
import { TURN_SEPARATOR, type EnvTask, type EnvironmentKind } from '../episodes/environment';
import { collectEpisodes, type CollectedEpisode } from '../episodes/rollout';
import type { Model } from '../model/model';
import type { SamplingOptions } from '../../kernels/sample/distribution.ref';
import { generate } from '../rollout/generate';

export interface EvalResult {
  n: number;
  accuracy: number;
  meanLength: number;
  /** A few decoded examples, for the UI and logs. */
  samples: { prompt: string; completion: string; answer: string; correct: boolean }[];
  /** With `SampledEval`: pass@1 and pass@k over k samples per task at the training sampler's settings. */
  sampled?: PassRates;
  /**
   * Environment evaluations: episodes (greedy and sampled) that ended in an infrastructure error
   * (the environment failed, not the model): counted as not correct, and reported here so an
   * accuracy that fell for that reason says so.
   */
  errors?: number;
}

/**
 * Besides the greedy pass, k samples per held-out task drawn as training draws them (temperature,
 * top-k, top-p), from a fixed seed so every evaluation of a run draws alike. A small model's
 * greedy answer can stay put while the distribution it samples from learns: pass@1 shows that.
 */
/**
 * Called as an evaluation's completions finish: `done` of `total` (the greedy pass's, then the
 * sampled pass's k per task). An evaluation of a hundred problems may take a minute: without it the
 * dashboard showed no count until it ended (issue 40, item 2).
 */
export type EvalProgress = (done: number, total: number) => void;

/** Counts completions across an evaluation's batches and passes for an `EvalProgress`. */
function counter(progress: EvalProgress | undefined, total: number) {
  let done = 0;
  progress?.(0, total);
  return {
    /** Options for `generate`: each finished row of this batch counts. */
    rows: (): { onProgress?: (finished: number) => void } =>
      progress ? { onProgress: (finished: number) => progress(done + finished, total) } : {},
    /** A batch of `n` is done. */
    add: (n: number) => {
      done += n;
      progress?.(done, total);
    },
  };
}

export interface SampledEval {
  k: number;
  sampling: SamplingOptions;
}

/**
 * pass@1 = the mean over tasks of c / k (c of the task's k samples correct: verl's
 * `mean@k` of the validation metrics), pass@k = the fraction of tasks with c ≥ 1 (the unbiased
 * estimator 1 − C(n − c, k) / C(n, k) of Chen et al. 2021 at n = k; verl's `best@k` bootstraps it).
 */
interface PassRates {
  k: number;
  passAt1: number;
  passAtK: number;
}

/**
 * A sampled evaluation's pass rates as step metrics (`eval/pass@1`, `eval/pass@k` with k its
 * number): charted, compared and exported as any metric, at the steps that evaluate.
 */
/** An evaluation's step metrics beside its accuracy: `eval/pass@1`, `eval/pass@k` with sampling, `eval/errors` for an environment's. */
export function passMetrics(ev: EvalResult): Record<string, number> {
  const s = ev.sampled;
  return {
    ...(s ? { 'eval/pass@1': s.passAt1, [`eval/pass@${s.k}`]: s.passAtK } : {}),
    ...(ev.errors !== undefined ? { 'eval/errors': ev.errors } : {}),
  };
}

/** Seed of every sampled evaluation: never the run's, so runs of different seeds evaluate on the same draws' seeds. */
const EVAL_SEED = 0x5a3e_e7a1;

/** pass@1 and pass@k from each task's k correctness flags. */
export function passRates(correct: readonly (readonly boolean[])[], k: number): PassRates {
  const n = correct.length || 1;
  return {
    k,
    passAt1: correct.reduce((a, c) => a + c.filter(Boolean).length / k, 0) / n,
    passAtK: correct.filter((c) => c.some(Boolean)).length / n,
  };
}

/** k completions of each prompt (rows task-major: task i's j-th sample is row i · k + j), `batch` rows at a time. */
async function sampleK(
  model: Model,
  prompts: readonly Int32Array[],
  s: SampledEval,
  maxNew: number,
  stops: { eos: number; stop?: readonly number[] },
  batch: number,
  count: ReturnType<typeof counter>,
) {
  const rows = prompts.flatMap((p) => Array.from({ length: s.k }, () => p));
  const out = [];
  for (let i = 0; i < rows.length; i += batch) {
    const seeds = Array.from({ length: Math.min(batch, rows.length - i) }, (_, j) => (EVAL_SEED + i + j) >>> 0);
    out.push(
      ...(await generate(model, rows.slice(i, i + batch), {
        ...s.sampling,
        maxNew,
        ...stops,
        seed: EVAL_SEED,
        rowSeeds: seeds,
        ...count.rows(),
      })),
    );
    count.add(seeds.length);
  }
  return out;
}

/** Groups row flags `ok` (task-major, k per task) into each task's k flags. */
const byTask = (ok: readonly boolean[], k: number) =>
  Array.from({ length: ok.length / k }, (_, i) => ok.slice(i * k, (i + 1) * k));

export async function evaluateArith(
  model: Model,
  tok: TextTokenizer,
  tasks: readonly ArithTask[],
  maxNew = 16,
  batch = 64,
  sampled?: SampledEval,
  progress?: EvalProgress,
): Promise<EvalResult> {
  const prompts = tasks.map((t) => encodeExample(tok, t).promptIds);
  const count = counter(progress, prompts.length * (1 + (sampled?.k ?? 0)));
  const completions: Int32Array[] = [];
  for (let i = 0; i < prompts.length; i += batch) {
    // Temperature 0 is greedy: the support is the arg-max, whatever the seed.
    const gens = await generate(model, prompts.slice(i, i + batch), {
      maxNew,
      ...stopsOf(tok),
      seed: 0,
      temperature: 0,
      ...count.rows(),
    });
    completions.push(...gens.map((g) => g.sampledIds));
    count.add(gens.length);
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
  let rates: PassRates | undefined;
  if (sampled) {
    const gens = await sampleK(model, prompts, sampled, maxNew, stopsOf(tok), batch, count);
    rates = passRates(
      byTask(
        gens.map((g, r) => exactMatch(tok.decode(g.sampledIds), tasks[Math.floor(r / sampled.k)])),
        sampled.k,
      ),
      sampled.k,
    );
  }
  return {
    n: tasks.length,
    accuracy: tasks.length ? correct / tasks.length : 0,
    meanLength: tasks.length ? length / tasks.length : 0,
    samples,
    ...(rates ? { sampled: rates } : {}),
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
  sampled?: SampledEval,
  progress?: EvalProgress,
): Promise<EvalResult> {
  const count = counter(progress, tasks.length * (1 + (sampled?.k ?? 0)));
  let correct = 0;
  let length = 0;
  const samples: EvalResult['samples'] = [];
  for (let i = 0; i < tasks.length; i += batch) {
    const part = tasks.slice(i, i + batch);
    const gens = await generate(model, part.map(promptIds), {
      maxNew,
      ...stopsOf(tok),
      seed: 0,
      temperature: 0,
      ...count.rows(),
    });
    count.add(gens.length);
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
  let rates: PassRates | undefined;
  if (sampled) {
    const gens = await sampleK(model, tasks.map(promptIds), sampled, maxNew, stopsOf(tok), batch, count);
    const scores = await Promise.all(
      gens.map((g, r) => {
        const ids = g.finishReason === 'stop' ? g.sampledIds.subarray(0, g.sampledIds.length - 1) : g.sampledIds;
        return reward(tok.decode(ids), tasks[Math.floor(r / sampled.k)]);
      }),
    );
    rates = passRates(
      byTask(
        scores.map((r) => !r.failure && r.score === 1),
        sampled.k,
      ),
      sampled.k,
    );
  }
  return {
    n: tasks.length,
    accuracy: tasks.length ? correct / tasks.length : 0,
    meanLength: tasks.length ? length / tasks.length : 0,
    samples,
    ...(rates ? { sampled: rates } : {}),
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
  sampled?: SampledEval,
  progress?: EvalProgress,
  /** Called with each collection's episodes as they come (a run's infrastructure check: it throws to stop). */
  check?: (episodes: readonly CollectedEpisode[]) => void,
): Promise<EvalResult> {
  const count = counter(progress, tasks.length * (1 + (sampled?.k ?? 0)));
  // The rollout counts episodes ended (of this collection) after each round of turns.
  const ended = () => {
    const rows = count.rows().onProgress;
    return rows ? { onProgress: (_round: number, finished: number) => rows(finished) } : {};
  };
  let correct = 0;
  let length = 0;
  let errors = 0;
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
      ...ended(),
    });
    check?.(episodes);
    count.add(episodes.length);
    for (const e of episodes) {
      const ok = e.episode.reward === 1;
      if (ok) correct++;
      if (e.episode.status === 'error') errors++;
      length += e.episode.transitions.reduce((n, t) => n + t.action.tokens.length, 0);
      if (samples.length < 8)
        samples.push({
          prompt: e.task.prompt,
          completion: e.transcript.replace(/\n/g, TURN_SEPARATOR),
          answer: e.task.answer,
          correct: ok,
        });
    }
  }
  let rates: PassRates | undefined;
  if (sampled) {
    const ok: boolean[] = [];
    // Whole tasks per collection (k episodes each), about `batch` episodes at a time.
    const per = Math.max(1, Math.floor(batch / sampled.k));
    for (let i = 0; i < tasks.length; i += per) {
      const episodes = await collectEpisodes(model, tasks.slice(i, i + per), sampled.k, {
        kind,
        tok,
        maxContext: model.config.maxSeq,
        sampling: sampled.sampling,
        seed: (EVAL_SEED + i) >>> 0,
        policyVersion: 0,
        ...ended(),
      });
      check?.(episodes);
      count.add(episodes.length);
      ok.push(...episodes.map((e) => e.episode.reward === 1));
      errors += episodes.filter((e) => e.episode.status === 'error').length;
    }
    rates = passRates(byTask(ok, sampled.k), sampled.k);
  }
  const n = tasks.length;
  return {
    n,
    accuracy: n ? correct / n : 0,
    meanLength: n ? length / n : 0,
    samples,
    ...(rates ? { sampled: rates } : {}),
    errors,
  };
}
