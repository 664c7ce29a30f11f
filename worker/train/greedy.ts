/**
 * Greedy decoding without a KV cache: every step re-scores each row's whole prefix and appends the
 * arg-max id, until EOS or `maxNew` ids. Good enough for held-out evaluation of small models; the
 * sampler with a KV cache is worker/rollout's job.
 */
import type { Model, PackedInput } from '../model/model';

export interface GreedyOptions {
  /** Largest number of new ids per prompt. */
  maxNew: number;
  /** Stop id (included in the output when produced). */
  eos: number;
  /** Prompts decoded together in one batch (rows). Default 64. */
  batch?: number;
}

/** Completion ids for each prompt (EOS included when it was produced). */
export async function greedyComplete(model: Model, prompts: readonly ArrayLike<number>[], o: GreedyOptions): Promise<Int32Array[]> {
  const out: Int32Array[] = [];
  const chunk = o.batch ?? 64;
  for (let i = 0; i < prompts.length; i += chunk) out.push(...(await decodeChunk(model, prompts.slice(i, i + chunk), o)));
  return out;
}

async function decodeChunk(model: Model, prompts: readonly ArrayLike<number>[], o: GreedyOptions): Promise<Int32Array[]> {
  const maxLen = model.config.maxSeq;
  const seqs = prompts.map((p) => Array.from(p));
  for (const s of seqs) if (s.length >= maxLen) throw new Error(`greedyComplete: a prompt of ${s.length} ids leaves no room within maxSeq ${maxLen}`);
  const done = prompts.map(() => false);
  const generated: number[][] = prompts.map(() => []);
  for (let step = 0; step < o.maxNew; step++) {
    // Only unfinished rows, only as wide as the longest of them: no cache, so keep each pass small.
    const live = seqs.map((_, r) => r).filter((r) => !done[r] && seqs[r].length < maxLen);
    if (live.length === 0) break;
    const rows = live.length;
    const width = Math.max(...live.map((r) => seqs[r].length));
    const batch: PackedInput = { rows, width, inputIds: new Int32Array(rows * width), segmentIds: new Int32Array(rows * width), positions: new Int32Array(rows * width) };
    live.forEach((r, row) => {
      seqs[r].forEach((id, t) => {
        (batch.inputIds as Int32Array)[row * width + t] = id;
        (batch.segmentIds as Int32Array)[row * width + t] = 1;
        (batch.positions as Int32Array)[row * width + t] = t;
      });
    });
    const logits = await model.logitsAt(batch, live.map((r, row) => row * width + seqs[r].length - 1));
    live.forEach((r, j) => {
      const id = argmax(logits[j]);
      seqs[r].push(id);
      generated[r].push(id);
      if (id === o.eos) done[r] = true;
    });
  }
  return generated.map((g) => Int32Array.from(g));
}

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}
