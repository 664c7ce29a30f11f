/**
 * The KV cache of one batch of B sequences, and the `Decoder` that fills it: `prefill` runs the
 * ordinary forward over the prompts (one per row) and copies each row's k/v into the cache;
 * `step` appends one id per row through decode-forward.ts. Both return the next-token logits of
 * every row (B, V); `load` and `advance` do the same work and leave the logits on the backend,
 * where `sample` draws from them (Ops.sample) and `logProbs` scores ids on them, so a sampling
 * step reads back B entries instead of B·V. Rows are independent; a row's cache never exceeds `L`
 * positions.
 */
import type { Ops, SampleOutput, SamplingOptions, Tensor } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { kvDim } from './config';
import { decodeForward } from './decode-forward';
import { forwardLayers, lmHead } from './forward';
import { rowPerSequence } from './packing';
import type { Model } from './model';
import type { Acts, KvCache } from './tensors';
import { allocActs, freeActs } from './tensors';

function allocCache(ops: Ops, c: ModelConfig, B: number, L: number): KvCache {
  const k: Tensor[] = [];
  const v: Tensor[] = [];
  for (let l = 0; l < c.layers; l++) {
    k.push(ops.alloc(`kv:k${l}`, B * L * kvDim(c)));
    v.push(ops.alloc(`kv:v${l}`, B * L * kvDim(c)));
  }
  return { B, L, k, v, lengths: new Int32Array(B), attendLengths: ops.alloc('kv:attend', B, 'i32') };
}

export class Decoder {
  readonly cache: KvCache;
  private readonly acts: Acts;
  private readonly ops: Ops;

  constructor(
    private readonly model: Model,
    readonly B: number,
    readonly L: number,
    /** Under LoRA, decode with the adapters (default) or the base alone (Model.score's `adapters`). */
    private readonly adapters = true,
  ) {
    if (L > model.config.maxSeq)
      throw new Error(`Decoder: cache length ${L} exceeds the model's maxSeq ${model.config.maxSeq}`);
    this.ops = model.ops;
    this.cache = allocCache(this.ops, model.config, B, L);
    this.acts = allocActs(this.ops, model.config, B, 1, { wholeHead: true, lora: model.actsLora }); // a step samples from every row's logits
  }

  /**
   * Runs the prompts (one per row, each ≥ 1 id) through the layers, keeps their k/v, and returns
   * the logits after each row's last id: the LM head runs on those B positions only.
   */
  async prefill(prompts: readonly ArrayLike<number>[]): Promise<Float32Array> {
    await this.load(prompts);
    return this.logits();
  }

  /** `prefill` without reading the logits back: they stay on the backend for `sample` and `logProbs`. */
  async load(prompts: readonly ArrayLike<number>[]): Promise<void> {
    const { B, L } = this;
    if (prompts.length !== B) throw new Error(`prefill: ${prompts.length} prompts for ${B} rows`);
    const T = Math.max(...prompts.map((p) => p.length));
    if (T > L) throw new Error(`prefill: a prompt of ${T} ids does not fit the cache length ${L}`);
    prompts.forEach((p, b) => {
      if (p.length === 0) throw new Error(`prefill: prompt ${b} is empty`);
    });
    const c = this.model.config;
    const batch = rowPerSequence(prompts, T);
    // One layer's activations serve all: each layer's k and v go to the cache as soon as they exist.
    const acts = allocActs(this.ops, c, B, T, { layersOnly: true, sharedLayers: true, lora: this.model.actsLora });
    try {
      this.ops.upload(acts.ids, Int32Array.from(batch.inputIds));
      this.ops.upload(acts.segments, Int32Array.from(batch.segmentIds));
      this.ops.upload(acts.positions, Int32Array.from(batch.positions));
      const KV = kvDim(c);
      forwardLayers(this.ops, c, this.model.forwardParams(this.adapters), acts, (l, x) =>
        prompts.forEach((p, b) => {
          const span = { dstOffset: b * L * KV, srcOffset: b * T * KV, count: p.length * KV };
          this.ops.copy(this.cache.k[l], x.k, span);
          this.ops.copy(this.cache.v[l], x.v, span);
        }),
      );
      prompts.forEach((p, b) => {
        this.cache.lengths[b] = p.length;
        const last = { dstOffset: b * c.dModel, srcOffset: (b * T + p.length - 1) * c.dModel, count: c.dModel };
        this.ops.copy(this.acts.xL, acts.xL, last);
      });
      lmHead(this.ops, c, this.model.forwardParams(this.adapters), this.acts, B);
      await this.ops.sync();
    } finally {
      freeActs(this.ops, acts); // after the sync: a GPU's recorded copies still use its buffers until then
    }
  }

  /** Appends ids (B) at each row's current length and returns the next-token logits (B, V). */
  async step(ids: ArrayLike<number>): Promise<Float32Array> {
    this.advance(ids);
    return this.logits();
  }

  /** The last logits (B, V), those `load`/`prefill` or `advance`/`step` left. */
  logits(): Promise<Float32Array> {
    return this.ops.read(this.acts.logits);
  }

  /**
   * One id per row from the last logits under `options`, with uniforms[b] in [0, 1) (NaN: row b is
   * finished and draws nothing): Ops.sample, the logits left where they are.
   */
  sample(uniforms: ArrayLike<number>, options: SamplingOptions): Promise<SampleOutput> {
    return this.ops.sample(this.acts.logits, uniforms, this.B, this.model.config.vocab, options);
  }

  /** `step` without reading the logits back (records the decoding step; `sample`/`logProbs`/`logits` see its logits). */
  advance(ids: ArrayLike<number>): void {
    const { B, L } = this;
    if (ids.length !== B) throw new Error(`step: ${ids.length} ids for ${B} rows`);
    for (let b = 0; b < B; b++) {
      if (this.cache.lengths[b] >= L)
        throw new Error(`step: row ${b} is full (${L} ids); stop that row before the cache length`);
    }
    this.ops.upload(this.acts.ids, Int32Array.from(ids));
    this.ops.upload(this.acts.positions, this.cache.lengths);
    this.ops.upload(
      this.cache.attendLengths,
      this.cache.lengths.map((x) => x + 1),
    );
    decodeForward(this.ops, this.model.config, this.model.forwardParams(this.adapters), this.acts, this.cache);
    for (let b = 0; b < B; b++) this.cache.lengths[b]++;
  }

  /**
   * log_softmax(scale · logits)[ids[b]] of each row's last logits (those `load`/`prefill` or
   * `advance`/`step` left) by the backend's `logprobForward`, the kernel `Model.score` runs on the same logits
   * row: the sampler's log-prob of a drawn id is then the trainer's, bit for bit, where the logits
   * are (docs/rl-formulas.md "Mismatch"). `scale` = 1 / temperature, as score computes it.
   */
  async logProbs(ids: ArrayLike<number>, scale: number): Promise<Float32Array> {
    const { B } = this;
    if (ids.length !== B) throw new Error(`logProbs: ${ids.length} ids for ${B} rows`);
    const a = this.acts;
    this.ops.upload(a.targets, Int32Array.from(ids));
    this.ops.logprobForward(a.logp, a.entropy, a.lseOut, a.logits, a.targets, B, this.model.config.vocab, scale);
    return (await this.ops.read(a.logp)).subarray(0, B);
  }

  free(): void {
    freeActs(this.ops, this.acts);
    for (const t of [...this.cache.k, ...this.cache.v, this.cache.attendLengths]) this.ops.free(t);
  }
}
