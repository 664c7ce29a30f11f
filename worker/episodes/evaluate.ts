/**
 * Held-out accuracy of an environment kind: one greedy episode per task (temperature 0, no
 * journal), accuracy = the fraction of episodes with reward 1, mean length = sampled ids per
 * episode. The same rollout as training (rollout.ts), so budgets and terminations agree.
 */
import type { CharTokenizer } from '../data/tokenizer';
import type { Model } from '../model/model';
import type { EvalResult } from '../train/evaluate';
import type { EnvTask, EnvironmentKind } from './environment';
import { collectEpisodes } from './rollout';

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
