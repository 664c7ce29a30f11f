/**
 * Batched generation: prompts (one row each; the caller repeats a prompt G times for a group) are
 * sampled up to `maxNew` ids or EOS, with a KV cache (default) or by re-scoring the whole prefix
 * each step (`useCache: false`, for comparison). Each row has its own seeded sampler, derived from
 * (seed, row), so a completion does not depend on which other rows share its batch. Records per
 * sampled id the behavior log-prob (after temperature/top-k/top-p), the raw log-prob (the
 * unfiltered distribution at the sampling temperature, log_softmax(l / T); log_softmax(l) when
 * greedy) and optionally the support. The draw is the backend's `Ops.sample` on logits that stay
 * on the backend (kernels/sample/), so a step reads back B ids and log-probs, not B·V logits.
 */
import type { Model } from '../model/model';
import { rowPerSequence } from '../model/packing';
import { Decoder } from '../model/kv-cache';
import type { Ops, SampleOutput, Tensor } from '../../kernels/ops';
import type { SamplingOptions } from '../../kernels/sample/distribution.ref';
import { samplingDistribution } from '../../kernels/sample/distribution.ref';
import { createSampler } from './sample';

export interface GenerateOptions extends SamplingOptions {
  /** Largest number of sampled ids per row (EOS included). */
  maxNew: number;
  /** The stop id (and the id a finished row is fed). */
  eos: number;
  /** More ids that end a row as EOS does (a Hugging Face tokenizer's `eos_token_id` list: checkpoint.ts `stopsOf`). */
  stop?: readonly number[];
  /** Seed of the per-row samplers. */
  seed: number;
  /** Each row's own sampler seed instead of one derived from (seed, row) (multi-turn episodes seed each turn). */
  rowSeeds?: readonly number[];
  /** Keep the top-k/top-p support of every sampled id. Default false. */
  recordSupport?: boolean;
  /** Use the KV cache. Default true. */
  useCache?: boolean;
  /** Under LoRA, sample from the adapted model (default) or from the base alone (DPO's frozen sampler). */
  adapters?: boolean;
  /** Called after each sampled position with the rows finished so far (EOS or budget) and the row count. */
  onProgress?: (finished: number, rows: number) => void;
}

export interface Generated {
  promptIds: Int32Array;
  /** Sampled ids, EOS included when the stop was natural. */
  sampledIds: Int32Array;
  behaviorLogProbs: Float64Array;
  /** Per sampled id, log_softmax(l / T) before top-k/top-p (what Model.score at T gives); log_softmax(l) at T = 0. */
  rawLogProbs: Float64Array;
  finishReason: 'stop' | 'length';
  support?: Int32Array[];
}

/** Seed of row `row`'s sampler: a 32-bit mix of (seed, row). */
export function rowSeed(seed: number, row: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(row + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

export async function generate(
  model: Model,
  prompts: readonly ArrayLike<number>[],
  o: GenerateOptions,
): Promise<Generated[]> {
  const B = prompts.length;
  if (B === 0) return [];
  if (!Number.isInteger(o.maxNew) || o.maxNew < 1)
    throw new Error(`generate: maxNew must be a positive integer, got ${o.maxNew}`);
  const longest = Math.max(...prompts.map((p) => p.length));
  const L = longest + o.maxNew;
  if (L > model.config.maxSeq)
    throw new Error(
      `generate: prompt (${longest}) + maxNew (${o.maxNew}) exceeds the model's maxSeq ${model.config.maxSeq}`,
    );
  const V = model.config.vocab;
  if (o.rowSeeds && o.rowSeeds.length !== B)
    throw new Error(`generate: ${o.rowSeeds.length} rowSeeds for ${B} prompts; expected one per prompt`);
  const samplers = prompts.map((_, r) => createSampler(o.rowSeeds ? o.rowSeeds[r] : rowSeed(o.seed, r)));
  const out = prompts.map(() => ({
    ids: [] as number[],
    behavior: [] as number[],
    raw: [] as number[],
    support: [] as Int32Array[],
    done: false,
    stop: false,
  }));
  const seqs = prompts.map((p) => Array.from(p));
  const stops = new Set([o.eos, ...(o.stop ?? [])]);
  const sampling: SamplingOptions = { temperature: o.temperature, topK: o.topK, topP: o.topP };
  // Model.score's inverse temperature, computed as it computes it (a greedy sampler is scored at 1).
  const scale = 1 / (o.temperature !== undefined && o.temperature > 0 ? o.temperature : 1);
  const decoder = o.useCache === false ? null : new Decoder(model, B, L, o.adapters ?? true);
  const rescored = decoder ? null : new RescoredLogits(model.ops, B, V);
  try {
    if (decoder) await decoder.load(prompts);
    else rescored!.set(await fullLogits(model, seqs, o.adapters ?? true));
    for (let step = 0; step < o.maxNew; step++) {
      const next = new Int32Array(B).fill(o.eos);
      // One uniform per unfinished row, from its own stream; NaN: the row draws nothing.
      const uniforms = new Float64Array(B).fill(NaN);
      out.forEach((row, r) => {
        if (!row.done) uniforms[r] = samplers[r].next();
      });
      const drawn: SampleOutput = decoder
        ? await decoder.sample(uniforms, sampling)
        : await rescored!.sample(uniforms, sampling);
      // The support of each draw, from the logits read back (only where it is recorded).
      const logits = o.recordSupport ? (decoder ? await decoder.logits() : rescored!.host) : null;
      const rows: number[] = [];
      for (let r = 0; r < B; r++) {
        const row = out[r];
        if (row.done) continue;
        const id = drawn.ids[r];
        row.ids.push(id);
        row.behavior.push(drawn.logProbs[r]);
        rows.push(r);
        if (logits) row.support.push(samplingDistribution(logits.subarray(r * V, (r + 1) * V), sampling).support);
        seqs[r].push(id);
        next[r] = id;
        if (stops.has(id)) row.done = row.stop = true;
        else if (row.ids.length >= o.maxNew) row.done = true;
      }
      // The drawn ids' raw log-probs by the kernel the trainer scores with (Model.score), on the
      // same logits; unfiltered, the behaviour log-prob is the raw one, so it is that value too.
      const raw = decoder ? await decoder.logProbs(next, scale) : await rescored!.logProbs(next, scale);
      for (const r of rows) {
        out[r].raw.push(raw[r]);
        if (!drawn.filtered[r]) out[r].behavior[out[r].behavior.length - 1] = raw[r];
      }
      o.onProgress?.(
        out.reduce((n, row) => n + (row.done ? 1 : 0), 0),
        B,
      );
      if (out.every((row) => row.done)) break;
      if (decoder) decoder.advance(next);
      else rescored!.set(await fullLogits(model, seqs, o.adapters ?? true));
    }
  } finally {
    decoder?.free();
    rescored?.free();
  }
  return out.map((row, r) => ({
    promptIds: Int32Array.from(prompts[r]),
    sampledIds: Int32Array.from(row.ids),
    behaviorLogProbs: Float64Array.from(row.behavior),
    rawLogProbs: Float64Array.from(row.raw),
    finishReason: row.stop ? 'stop' : 'length',
    ...(o.recordSupport ? { support: row.support } : {}),
  }));
}

/**
 * Without a cache: each step's logits (B, V), computed on the host by re-scoring every sequence,
 * uploaded once to the backend, where the draw (Ops.sample) and the raw log-probs
 * (logprobForward, as Decoder.logProbs) read them.
 */
class RescoredLogits {
  private readonly t: Record<'logits' | 'targets' | 'logp' | 'entropy' | 'lse', Tensor>;
  host: Float32Array = new Float32Array(0);

  constructor(
    private readonly ops: Ops,
    private readonly B: number,
    private readonly V: number,
  ) {
    this.t = {
      logits: ops.alloc('sample:logits', B * V),
      targets: ops.alloc('sample:targets', B, 'i32'),
      logp: ops.alloc('sample:logp', B),
      entropy: ops.alloc('sample:entropy', B),
      lse: ops.alloc('sample:lse', B),
    };
  }

  set(logits: Float32Array): void {
    this.host = logits;
    this.ops.upload(this.t.logits, logits);
  }

  sample(uniforms: Float64Array, options: SamplingOptions): Promise<SampleOutput> {
    return this.ops.sample(this.t.logits, uniforms, this.B, this.V, options);
  }

  /** log_softmax(scale · logits)[ids[b]] of each row by the backend's kernel. */
  async logProbs(ids: Int32Array, scale: number): Promise<Float32Array> {
    const { t } = this;
    this.ops.upload(t.targets, ids);
    this.ops.logprobForward(t.logp, t.entropy, t.lse, t.logits, t.targets, this.B, this.V, scale);
    return this.ops.read(t.logp);
  }

  free(): void {
    for (const x of Object.values(this.t)) this.ops.free(x);
  }
}

/** Next-token logits (B, V) of every row by re-scoring its whole sequence (no cache). */
async function fullLogits(model: Model, seqs: number[][], adapters: boolean): Promise<Float32Array> {
  const batch = rowPerSequence(seqs);
  const { rows, width } = batch;
  const rowsLogits = await model.logitsAt(
    batch,
    seqs.map((s, r) => r * width + s.length - 1),
    adapters,
  );
  const V = model.config.vocab;
  const out = new Float32Array(rows * V);
  rowsLogits.forEach((l, r) => out.set(l, r * V));
  return out;
}
