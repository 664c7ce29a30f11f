/**
 * Held-out exact-match accuracy on arithmetic tasks with greedy decoding (KV cache), and mean
 * completion length (in ids, EOS included).
 */
import type { ArithTask } from '../data/arith';
import { encodeExample } from '../data/arith';
import { exactMatch } from '../data/answer';
import type { CharTokenizer } from '../data/tokenizer';
import type { Model } from '../model/model';
import { generate } from '../rollout/generate';

export interface EvalResult {
  n: number;
  accuracy: number;
  meanLength: number;
  /** A few decoded examples, for the UI and logs. */
  samples: { prompt: string; completion: string; answer: string; correct: boolean }[];
}

export async function evaluateArith(model: Model, tok: CharTokenizer, tasks: readonly ArithTask[], maxNew = 16, batch = 64): Promise<EvalResult> {
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
    if (samples.length < 8) samples.push({ prompt: tasks[i].prompt, completion: text, answer: tasks[i].answer, correct: ok });
  });
  return { n: tasks.length, accuracy: tasks.length ? correct / tasks.length : 0, meanLength: tasks.length ? length / tasks.length : 0, samples };
}
