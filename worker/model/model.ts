/**
 * The Llama-style model on `Ops`: parameters, gradients and AdamW moments, the activations of one
 * [B, T] packed batch, and the three phases of a training step: `score` (forward, one readback of
 * log-probs and entropy, at the sampler's temperature), `backward(dlogp)` (accumulates gradients
 * through the same temperature), `step` (global-norm clipping
 * and AdamW, adamw.ts, with one scalar readback: the gradient norm). Weights and AdamW state can be
 * read and restored, for checkpoints and exact continuation. Not a trainer: schedules and losses
 * live with the caller.
 */
import type { WeightStorage } from '../contract/options';
import type { Ops, Tensor } from '../../kernels/ops';
import type { AdamWScratch, AdamWSlot, StepOptions } from './adamw';
import { adamwStep } from './adamw';
import type { Gradients } from './backward';
import { backward } from './backward';
import type { ModelConfig } from './config';
import { validateModelConfig } from './config';
import { forward, headLogits } from './forward';
import type { PackedInput } from './packing';
import { alignToIds, seedToPositions, sumPiSquaredOf, targetsFor } from './packing';
import { EMBED_TOKENS, initialWeights, numel, paramSpecs } from './params';
import type { Acts, ParamSet } from './tensors';
import { allocActs, allocParamSet, freeActs } from './tensors';
import { packBf16 } from '../../kernels/bf16/bf16.ref';
import type { AdapterSet, LoraConfig, Projection } from './lora';
import {
  allocAdapterSet,
  initialAdapters,
  loraActs,
  loraScale,
  loraSpecs,
  loraTargets,
  mergeAdapters,
  validateLoraConfig,
} from './lora';

/** The value head's tensor name (dew ValueHead; TRL's value-head models call it `v_head`). */
export const VALUE_HEAD = 'value_head.weight';

export interface ModelOptions {
  /** Add the PPO value head (`value_head.weight`, (1, C), zero-initialised). Default false. */
  valueHead?: boolean;
  /**
   * Weights only (a reference policy, a sampler): no gradients and no AdamW moments are
   * allocated, a quarter of a trained model's memory, and a forward holds one layer's activations
   * at a time; `backward` and `step` refuse. Default false.
   */
  frozen?: boolean;
  /**
   * Per-layer activation recomputation (gradient checkpointing at layer boundaries): a forward
   * keeps each layer's input alone and one layer's other activations, and `backward` runs each
   * layer's forward again just before that layer's backward (one more forward of the layers, about
   * a third more training work, for activations of about one layer instead of all). Numbers are the
   * same as without, bit for bit. Default false.
   */
  recomputeLayers?: boolean;
  /**
   * How the layers' matrices are held: `bf16` in half the memory (each value rounded to the nearest
   * bf16 when set, as `.to(torch.bfloat16)`), widened to f32 layer by layer for each use (tensors.ts
   * allocParamSet); the embedding, LM head and norms stay f32. Only for weights no step
   * changes: a frozen model, or the base under LoRA. Default `f32`.
   */
  storage?: WeightStorage;
  /**
   * Ids (rows × width) one forward or backward pass holds activations for (micro-batches, verl's
   * `ppo_max_token_len_per_gpu`): a batch of more is scored in passes of ⌊idsPerPass / width⌋ rows
   * (one row at least), and `backward` runs each pass's forward again before its backward,
   * accumulating the gradients. The activations then scale with this, not with the batch.
   * Absent: the whole batch in one pass (no forward is repeated).
   */
  idsPerPass?: number;
  /**
   * LoRA (lora.ts): the base weights frozen, adapters on the targeted projections trained (AdamW
   * state for them alone, and the value head's). Adapters start as PEFT's (`initAdapters`, seed 0).
   */
  lora?: LoraConfig;
  /**
   * Positions the LM head runs at once in a forward (its (headRows, V) logits); default: as many as
   * fit 64 MiB (tensors.ts headRowsOf). The log-probs are the same bit for bit whatever the chunk.
   */
  headRows?: number;
}

interface ScoreOptions {
  /**
   * Score log_softmax(logits / temperature) and its entropy, the distribution the sampler draws
   * from at this temperature (kernels/sample/distribution.ref.ts; verl's actor `logits.div_(temperature)`). Finite
   * and > 0; default 1 (untempered). A greedy sampler (temperature 0) is scored at 1.
   */
  temperature?: number;
  /**
   * Apply the LoRA adapters (default true). False scores the base alone: under LoRA the reference
   * policy is the frozen base, so no second model is held (PEFT's `disable_adapter`). Such a score
   * cannot be differentiated.
   */
  adapters?: boolean;
  /**
   * Score in training mode: LoRA's adapter dropout (LoraConfig `dropout` > 0) with masks drawn
   * from this seed (an unsigned 32-bit integer; lora.ts dropoutSeedOf), which `backward` draws
   * again. Absent: no dropout (scoring, old log-probs). No effect without adapter dropout.
   */
  dropoutSeed?: number;
  /**
   * Also return Σ_v π_v² per position (`Scored.sumPiSquared`), π = softmax of the scored logits
   * (tempered and biased as the log-probs): exp(logsumexp(2s·l) − 2·logsumexp(s·l)), both from the
   * log-prob kernel (at 2s and s), combined in float64 on the host (verl
   * `calculate_sum_pi_squared_from_logits`; OTB's path variance, rl/advantages/otb.ts). One more pass
   * of the kernel over the logits. Default false.
   */
  sumPiSquared?: boolean;
}

export interface Scored {
  /** log p(id_t | chain prefix), aligned with inputIds; 0 at chain starts and padding. */
  logp: Float32Array;
  /** Entropy of the distribution that predicted id_t, aligned like logp. */
  entropy: Float32Array;
  /** Value-head estimate at the state before id_t, aligned like logp (value head only). */
  values: Float32Array | null;
  /** Σ_v π_v² of the distribution that predicted id_t, aligned like logp (0 where logp is); only when asked (ScoreOptions `sumPiSquared`). */
  sumPiSquared?: Float64Array;
}

/**
 * AdamW's state between steps: the step count `t` of the last update (bias correction uses it) and
 * the first and second moments of every parameter, by Hugging Face name (`value_head.weight` too
 * when the model has one). With the weights, it makes a continuation exact.
 */
export interface OptimizerState {
  t: number;
  m: Map<string, Float32Array>;
  v: Map<string, Float32Array>;
}

/** Gradients, AdamW moments and the clipping scratch of a trained model, and the slots `step` updates (adamw.ts). */
interface Trained {
  /** The base's gradients (full fine-tuning) or the adapters' (LoRA). */
  grads: Gradients;
  /** AdamW's m and v of every trained tensor by name (the value head's too). */
  moments: Map<string, { m: Tensor; v: Tensor }>;
  scratch: AdamWScratch;
  /** Every trained tensor in spec order (the base's, or the adapters'), then the value head. */
  slots: AdamWSlot[];
  /** The value head's gradient and moments, when the model has one. */
  valueHead: { g: Tensor; m: Tensor; v: Tensor } | null;
}

/** What training holds: for the base's every parameter, or under LoRA for the adapters' alone (AdamW decays them, as HF's Trainer does). */
function allocTrained(
  ops: Ops,
  config: ModelConfig,
  params: ParamSet,
  adapters: { set: AdapterSet; config: LoraConfig } | null,
  vh: { w: Tensor } | null,
): Trained {
  const sets = (['grad', 'adam_m', 'adam_v'] as const).map((prefix) =>
    adapters ? allocAdapterSet(ops, config, adapters.config, prefix, 0) : allocParamSet(ops, config, prefix),
  );
  const [g, m, v] = sets.map((x) => x.byName);
  const grads: Gradients = adapters
    ? { base: null, adapters: sets[0] as AdapterSet }
    : {
        base: sets[0] as ParamSet,
        adapters: null,
        ...(config.tiedEmbeddings ? { lookup: ops.alloc('grad:embed_lookup', config.vocab * config.dModel) } : {}),
      };
  const specs = adapters
    ? loraSpecs(config, adapters.config).map((s) => ({ name: s.name, decay: true }))
    : paramSpecs(config);
  const trainedParams = adapters ? adapters.set.byName : params.byName;
  const slots: AdamWSlot[] = specs.map((s) => ({
    param: trainedParams.get(s.name)!,
    grad: g.get(s.name)!,
    m: m.get(s.name)!,
    v: v.get(s.name)!,
    decay: s.decay,
  }));
  const moments = new Map(specs.map((s) => [s.name, { m: m.get(s.name)!, v: v.get(s.name)! }]));
  const C = config.dModel;
  const valueHead = vh
    ? {
        g: ops.alloc(`grad:${VALUE_HEAD}`, C),
        m: ops.alloc(`adam_m:${VALUE_HEAD}`, C),
        v: ops.alloc(`adam_v:${VALUE_HEAD}`, C),
      }
    : null;
  if (vh && valueHead) {
    slots.push({ param: vh.w, grad: valueHead.g, m: valueHead.m, v: valueHead.v, decay: false });
    moments.set(VALUE_HEAD, { m: valueHead.m, v: valueHead.v });
  }
  const scratch = { normSq: ops.alloc('grad_norm_sq', 1), clip: ops.alloc('clip_scale', 1) };
  return { grads, moments, scratch, slots, valueHead };
}

/** The gradient tensors by name: the base's, or under LoRA the adapters'. */
const trainedGradients = (g: Gradients): Map<string, Tensor> => (g.base ?? g.adapters!).byName;

/**
 * A pass of a batch (model.ts passes): its first row and row count, its input (padded with empty
 * rows to the pass size), and `take`, the pass's rows of a per-position table (`stride` values a position).
 */
interface Pass {
  first: number;
  rows: number;
  input: PackedInput;
  take(x: ArrayLike<number> | undefined, stride?: number): Float32Array | undefined;
}

export class Model {
  /** The base weights (frozen under LoRA). */
  readonly params: ParamSet;
  /** Under LoRA: the adapters, their config, and the base's layers with the adapters attached (what the forward runs). */
  private readonly lora: { config: LoraConfig; set: AdapterSet; adapted: ParamSet } | null;
  /** What training adds to the weights: null for a frozen model. */
  private readonly trained: Trained | null;
  private acts: Acts | null = null;
  /**
   * The last batch scored, its inverse temperature 1/T and logit bias: `backward` differentiates
   * that forward (in place, or each pass's again when the batch took several).
   */
  private forwarded: {
    batch: PackedInput;
    scale: number;
    bias?: Float32Array;
    passes: number;
    adapters: boolean;
    /** The dropout masks' seed (ScoreOptions `dropoutSeed`), null for none. */
    dropoutSeed: number | null;
  } | null = null;
  private readonly idsPerPass: number | null;
  private readonly recomputeLayers: boolean;
  private readonly headRows: number | undefined;
  /** The value head's weights (1, C), when enabled. */
  private readonly vh: { w: Tensor } | null;
  /** The logit bias tensor of the last batch that had one (score's `logitBias`). */
  private bias: { t: Tensor; length: number } | null = null;
  /** The bias the last forward added (a chunked LM head adds it again in the backward), or null. */
  private forwardBias: Tensor | null = null;
  /** AdamW step count of the last update (0: none yet). */
  private t = 0;

  constructor(
    readonly ops: Ops,
    readonly config: ModelConfig,
    options: ModelOptions = {},
  ) {
    const problems = validateModelConfig(config);
    if (problems.length) throw new Error(`invalid model config: ${problems.join('; ')}`);
    const { idsPerPass } = options;
    if (idsPerPass !== undefined && (!Number.isInteger(idsPerPass) || idsPerPass < 1))
      throw new Error(`Model: idsPerPass = ${idsPerPass}; expected an integer ≥ 1 (absent: the whole batch)`);
    this.idsPerPass = idsPerPass ?? null;
    this.recomputeLayers = options.recomputeLayers ?? false;
    if (options.headRows !== undefined && !(Number.isInteger(options.headRows) && options.headRows >= 1))
      throw new Error(`Model: headRows = ${options.headRows}; expected an integer ≥ 1 (absent: by memory)`);
    this.headRows = options.headRows;
    if (options.storage === 'bf16' && !options.frozen && !options.lora)
      throw new Error("Model: storage 'bf16' holds weights no step changes: a frozen model's, or a LoRA base's");
    this.params = allocParamSet(ops, config, 'param', options.storage);
    if (options.lora) {
      const problems = validateLoraConfig(options.lora);
      if (problems.length) throw new Error(`Model: ${problems.join('; ')}`);
      const set = allocAdapterSet(ops, config, options.lora, 'param', loraScale(options.lora));
      const layers = this.params.layers.map((w, l) => ({ ...w, adapters: set.layers[l] }));
      this.lora = { config: options.lora, set, adapted: { ...this.params, layers } };
      this.initAdapters(0);
    } else this.lora = null;
    const C = config.dModel;
    this.vh = options.valueHead ? { w: ops.alloc('param:value_head.weight', C) } : null;
    this.trained = options.frozen ? null : allocTrained(ops, config, this.params, this.lora, this.vh);
  }

  /** The LoRA config, or null for a model without adapters. */
  get loraConfig(): LoraConfig | null {
    return this.lora?.config ?? null;
  }

  /** The LoRA buffers of activations that sample (allocActs `lora`; no dropout there), for a model with adapters. */
  get actsLora(): { rank: number; targets: Projection[]; dropout: boolean } | undefined {
    return this.lora ? { ...loraActs(this.lora.config), dropout: false } : undefined;
  }

  /** The weights a forward runs: the base with its adapters attached under LoRA (unless `adapters` is false). */
  forwardParams(adapters = true): ParamSet {
    return adapters && this.lora ? this.lora.adapted : this.params;
  }

  /** PEFT's initialisation of the adapters (lora.ts initialAdapters), seeded. */
  initAdapters(seed: number): void {
    if (!this.lora) throw new Error('initAdapters: this model has no LoRA adapters (construct it with { lora })');
    for (const [name, data] of initialAdapters(this.config, this.lora.config, seed))
      this.ops.upload(this.lora.set.byName.get(name)!, data);
  }

  /** Whether the model holds weights only (`frozen`): no gradients, no optimizer state. */
  get frozen(): boolean {
    return this.trained === null;
  }

  /** The gradients and optimizer state, or an error naming `what` needed them of a frozen model. */
  private trainedParts(what: string): Trained {
    if (!this.trained)
      throw new Error(`${what}: this model is frozen (weights only: no gradients, no optimizer state)`);
    return this.trained;
  }

  /** The value head's weights (1, C), or null without a value head. */
  async getValueHead(): Promise<Float32Array | null> {
    return this.vh ? this.ops.read(this.vh.w) : null;
  }

  setValueHead(w: ArrayLike<number>): void {
    if (!this.vh) throw new Error('setValueHead: this model has no value head (construct it with { valueHead: true })');
    if (w.length !== this.config.dModel)
      throw new Error(
        `setValueHead: ${VALUE_HEAD} has ${w.length} values, expected ${this.config.dModel} (shape [1, ${this.config.dModel}])`,
      );
    this.ops.upload(this.vh.w, w);
  }

  /** The value head's gradient, or null without a value head. */
  async getValueHeadGradient(): Promise<Float32Array | null> {
    if (!this.vh) return null;
    return this.ops.read(this.trainedParts('getValueHeadGradient').valueHead!.g);
  }

  /** Seeded init (params.ts `initialWeights`): N(0, 0.02) for matrices, 0.02/√(2L) for o_proj and down_proj, ones for norms. */
  initWeights(seed: number): void {
    for (const [name, data] of initialWeights(this.config, seed)) this.uploadParam(name, data);
  }

  /** One base tensor's values: as bf16 words where the model stores that tensor so (the widened layer is then stale). */
  private uploadParam(name: string, data: Float32Array): void {
    const t = this.params.byName.get(name)!;
    this.ops.upload(t, t.dtype === 'i32' ? packBf16(data) : data);
    if (this.params.stored) this.params.stored.widened = -1;
  }

  /** One base tensor's values, widened from bf16 words where the model stores it so (exactly). */
  private async readParam(t: Tensor, n: number): Promise<Float32Array> {
    if (t.dtype !== 'i32') return this.ops.read(t);
    const wide = this.ops.alloc('param:read (widened)', n);
    try {
      this.ops.widenBf16(wide, t, n);
      return await this.ops.read(wide);
    } finally {
      this.ops.free(wide);
    }
  }

  /**
   * Loads weights by Hugging Face name; every parameter must be present with its exact size. A
   * model with a value head loads `value_head.weight` when the map has it (a PPO run's checkpoint)
   * and keeps its zero init otherwise (a base checkpoint). Under LoRA the map may hold the base
   * alone (the adapters keep theirs), the base and every adapter, or every adapter alone (the base
   * stays); a model without LoRA refuses adapters.
   */
  setWeights(weights: ReadonlyMap<string, Float32Array>): void {
    const adapterNames = [...weights.keys()].filter((n) => /\.lora_[AB]\.weight$/.test(n));
    // Adapters this model cannot take are refused before anything is loaded.
    if (adapterNames.length && !this.lora)
      throw new Error(
        `setWeights: the weights hold LoRA adapters ('${adapterNames[0]}', …) but this model has none: ` +
          'construct it with { lora } or merge them first (lora.ts mergeAdapters)',
      );
    const unknown = adapterNames.find((n) => !this.lora!.set.byName.has(n));
    if (unknown)
      throw new Error(
        `setWeights: unknown LoRA adapter '${unknown}' (this model's targets: ${loraTargets(this.lora!.config).join(', ')})`,
      );
    const adaptersOnly = adapterNames.length > 0 && ![...this.params.byName.keys()].some((n) => weights.has(n));
    for (const s of adaptersOnly ? [] : paramSpecs(this.config)) {
      const w = weights.get(s.name);
      if (!w) throw new Error(`setWeights: missing tensor '${s.name}' (shape [${s.shape}])`);
      if (w.length !== numel(s.shape))
        throw new Error(
          `setWeights: '${s.name}' has ${w.length} values, expected ${numel(s.shape)} (shape [${s.shape}])`,
        );
      this.uploadParam(s.name, w);
    }
    const head = weights.get(VALUE_HEAD);
    if (head && this.vh) this.setValueHead(head);
    if (!this.lora || !adapterNames.length) return;
    for (const sp of loraSpecs(this.config, this.lora.config)) {
      const w = weights.get(sp.name);
      const n = sp.shape[0] * sp.shape[1];
      if (!w || w.length !== n)
        throw new Error(
          `setWeights: LoRA adapter '${sp.name}' ${w ? `has ${w.length} values` : 'missing'}, expected shape [${sp.shape}]`,
        );
      this.ops.upload(this.lora.set.byName.get(sp.name)!, w);
    }
  }

  /**
   * Every parameter by Hugging Face name, `value_head.weight` when the model has a value head, and
   * under LoRA every adapter (lora.ts names) beside the base: what a checkpoint holds.
   */
  async getWeights(): Promise<Map<string, Float32Array>> {
    return new Map([...(await this.readBase()), ...(await this.getAdapters())]);
  }

  /** Every base parameter and the value head's weights, by name. */
  private async readBase(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const s of paramSpecs(this.config))
      out.set(s.name, await this.readParam(this.params.byName.get(s.name)!, numel(s.shape)));
    if (this.vh) out.set(VALUE_HEAD, await this.ops.read(this.vh.w));
    return out;
  }

  /** The adapters alone by name (PEFT's adapter_model.safetensors, less its prefix); empty without LoRA. */
  async getAdapters(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [name, t] of this.lora?.set.byName ?? []) out.set(name, await this.ops.read(t));
    return out;
  }

  /**
   * The weights of a plain model computing what this one does: under LoRA the adapters merged into
   * the base (W + s·B·A, PEFT's merge_and_unload); otherwise `getWeights()`. What a sampler model
   * without adapters and the merged export take.
   */
  async getMergedWeights(): Promise<Map<string, Float32Array>> {
    const base = await this.readBase();
    return this.lora ? mergeAdapters(this.config, this.lora.config, base, await this.getAdapters()) : base;
  }

  /** The trained tensors' gradients by name: every parameter's, or under LoRA the adapters'. */
  async getGradients(): Promise<Map<string, Float32Array>> {
    const { grads } = this.trainedParts('getGradients');
    const out = new Map<string, Float32Array>();
    for (const [name, t] of trainedGradients(grads)) out.set(name, await this.ops.read(t));
    if (grads.lookup) {
      const wte = out.get(EMBED_TOKENS)!;
      const lookup = await this.ops.read(grads.lookup);
      for (let i = 0; i < wte.length; i++) wte[i] += lookup[i];
    }
    return out;
  }

  /**
   * Forward on a packed batch; returns log-probs and entropies aligned with the ids. `logitBias`
   * (rows · width · V) is added to the logits first (packing.ts `supportBias` renormalises over a
   * support); the sum is then divided by `options.temperature` (default 1), and `backward` uses it
   * too. A batch of more ids than `idsPerPass` is scored pass by pass.
   */
  async score(batch: PackedInput, logitBias?: Float32Array, options: ScoreOptions = {}): Promise<Scored> {
    const { temperature = 1, adapters = true } = options;
    const p = adapters ? (this.lora?.config.dropout ?? 0) : 0;
    const dropoutSeed = p > 0 && options.dropoutSeed !== undefined ? options.dropoutSeed : null;
    if (dropoutSeed !== null && !(Number.isInteger(dropoutSeed) && dropoutSeed >= 0 && dropoutSeed <= 0xffffffff))
      throw new Error(`score: dropoutSeed = ${dropoutSeed}; expected an unsigned 32-bit integer`);
    if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature <= 0)
      throw new Error(
        `score: temperature = ${temperature}; expected a finite number > 0 (1 = untempered; score a greedy sampler at 1)`,
      );
    const scale = 1 / temperature;
    const { rows, width } = batch;
    const passes = this.passesOf(batch);
    const out: Scored = {
      logp: new Float32Array(rows * width),
      entropy: new Float32Array(rows * width),
      values: this.vh ? new Float32Array(rows * width) : null,
      ...(options.sumPiSquared ? { sumPiSquared: new Float64Array(rows * width) } : {}),
    };
    for (const pass of passes) {
      const acts = this.runForward(
        pass.input,
        pass.take(logitBias, this.config.vocab),
        scale,
        adapters,
        this.dropoutAt(dropoutSeed, pass.first * width),
        options.sumPiSquared === true,
      );
      const n = pass.rows * width;
      const seg = pass.input.segmentIds;
      const at = pass.first * width;
      const aligned = async (t: Tensor) =>
        alignToIds(await this.ops.read(t), seg, pass.input.rows, width).subarray(0, n);
      out.logp.set(await aligned(acts.logp), at);
      out.entropy.set(await aligned(acts.entropy), at);
      if (out.values) out.values.set(await aligned(acts.values), at);
      // The forward left logsumexp(2s·l) in acts.dlogp (runForward's `lse2`).
      if (out.sumPiSquared)
        out.sumPiSquared.set(sumPiSquaredOf(await aligned(acts.lseOut), await aligned(acts.dlogp), seg, width), at);
    }
    this.forwarded = {
      batch,
      scale,
      ...(logitBias ? { bias: logitBias } : {}),
      passes: passes.length,
      adapters,
      dropoutSeed,
    };
    return out;
  }

  /** A forward's dropout from `seed` (null: none) for a pass whose first position is `offset` in the batch. */
  private dropoutAt(seed: number | null, offset: number): NonNullable<Acts['lora']>['dropout'] {
    return seed === null ? null : { p: this.lora!.config.dropout, seed, offset };
  }

  /**
   * The passes a batch is run in: the whole batch, or ⌊idsPerPass / width⌋ rows at a time, the
   * last pass padded with empty rows to the same size (one activation allocation serves every pass).
   */
  private passesOf(batch: PackedInput): Pass[] {
    const { rows, width } = batch;
    if (this.idsPerPass === null || rows * width <= this.idsPerPass)
      return [
        {
          first: 0,
          rows,
          input: batch,
          take: (x) => (x === undefined || x instanceof Float32Array ? x : Float32Array.from(x)),
        },
      ];
    const per = Math.max(1, Math.floor(this.idsPerPass / width));
    const out: Pass[] = [];
    for (let first = 0; first < rows; first += per) {
      const n = Math.min(per, rows - first);
      // Rows first … first + n − 1 of a per-position table (`stride` values a position) into `t`, zeros after them.
      const rowsInto = <T extends Int32Array | Float32Array>(t: T, x: ArrayLike<number>, stride: number): T => {
        for (let i = 0; i < n * width * stride; i++) t[i] = x[first * width * stride + i];
        return t;
      };
      const take = (x: ArrayLike<number> | undefined, stride = 1) =>
        x && rowsInto(new Float32Array(per * width * stride), x, stride);
      const ids = (x: ArrayLike<number>) => rowsInto(new Int32Array(per * width), x, 1);
      const input = {
        rows: per,
        width,
        inputIds: ids(batch.inputIds),
        segmentIds: ids(batch.segmentIds),
        positions: ids(batch.positions),
      };
      out.push({ first, rows: n, input, take });
    }
    return out;
  }

  /** Forward on a packed batch; returns the logits (V) at each flat index in `at` (row · width + t). */
  async logitsAt(batch: PackedInput, at: readonly number[], adapters = true): Promise<Float32Array[]> {
    const acts = this.runForward(batch, undefined, 1, adapters);
    const V = this.config.vocab;
    const N = batch.rows * batch.width;
    for (const i of at)
      if (!Number.isInteger(i) || i < 0 || i >= N) throw new Error(`logitsAt: index ${i} outside 0..${N - 1}`);
    const whole = acts.head ? null : await this.ops.read(acts.logits);
    const out: Float32Array[] = [];
    for (const i of at) {
      if (whole) {
        out.push(whole.slice(i * V, (i + 1) * V));
        continue;
      }
      // A chunked head leaves the last chunk's logits: the chunk of position i runs again.
      const n0 = Math.floor(i / acts.headRows) * acts.headRows;
      headLogits(this.ops, this.config, this.forwardParams(adapters), acts, null, n0, Math.min(acts.headRows, N - n0));
      out.push((await this.ops.read(acts.logits)).slice((i - n0) * V, (i - n0 + 1) * V));
    }
    return out;
  }

  /**
   * Forward on a packed batch (one pass), leaving every activation in place; the log-probs at
   * inverse temperature `scale` (1/T, default 1; the logits stay untempered).
   */
  private runForward(
    batch: PackedInput,
    logitBias?: Float32Array,
    scale = 1,
    adapters = true,
    dropout: NonNullable<Acts['lora']>['dropout'] = null,
    lse2 = false,
  ): Acts {
    const { rows, width } = batch;
    for (const [name, a] of [
      ['inputIds', batch.inputIds],
      ['segmentIds', batch.segmentIds],
      ['positions', batch.positions],
    ] as const) {
      if (a.length !== rows * width)
        throw new Error(`score: ${name} has ${a.length} entries, expected rows × width = ${rows * width}`);
    }
    // A packed row may be wider than maxSeq; each chain's positions may not reach it.
    for (let i = 0; i < batch.positions.length; i++) {
      if (batch.segmentIds[i] !== 0 && batch.positions[i] >= this.config.maxSeq) {
        throw new Error(
          `score: position ${batch.positions[i]} at [${Math.floor(i / width)}, ${i % width}] reaches the ` +
            `model's maxSeq ${this.config.maxSeq}; a chain may hold at most ${this.config.maxSeq} ids`,
        );
      }
    }
    const acts = this.actsFor(rows, width);
    this.ops.upload(acts.ids, Int32Array.from(batch.inputIds));
    this.ops.upload(acts.segments, Int32Array.from(batch.segmentIds));
    this.ops.upload(acts.positions, Int32Array.from(batch.positions));
    this.ops.upload(acts.targets, targetsFor(batch.inputIds, batch.segmentIds, rows, width));
    let bias: Tensor | null = null;
    if (logitBias) {
      const n = rows * width * this.config.vocab;
      if (logitBias.length !== n)
        throw new Error(`score: logitBias has ${logitBias.length} entries, expected rows × width × vocab = ${n}`);
      if (this.bias?.length !== n) {
        if (this.bias) this.ops.free(this.bias.t);
        this.bias = { t: this.ops.alloc('act:logit_bias', n), length: n };
      }
      this.ops.upload(this.bias.t, logitBias);
      bias = this.bias.t;
    }
    if (acts.lora) acts.lora.dropout = dropout;
    // logsumexp(2s·l) goes to the backward's seed buffer, free until `backward` uploads its seed.
    forward(this.ops, this.config, this.forwardParams(adapters), acts, this.vh, bias, scale, lse2 ? acts.dlogp : null);
    this.forwardBias = bias;
    this.forwarded = null; // score() records what it scored; a bare forward leaves nothing to differentiate
    return acts;
  }

  /**
   * Accumulates ∂loss/∂θ for the last scored batch, at the temperature it was scored at, given
   * ∂loss/∂logp (and, with a value head, ∂loss/∂value; with an entropy bonus, ∂loss/∂entropy)
   * aligned with its ids. A batch scored in
   * several passes runs each pass's forward again, then its backward; the work a pass recorded is
   * submitted before the next pass uploads its inputs (a GPU's uploads do not wait for recorded work).
   * Awaited before `step`.
   */
  async backward(
    dlogp: ArrayLike<number>,
    dvalues: ArrayLike<number> | null = null,
    dentropy: ArrayLike<number> | null = null,
  ): Promise<void> {
    const { grads, valueHead } = this.trainedParts('backward');
    if (!this.forwarded || !this.acts) throw new Error('backward() before score(): score a batch first');
    const { batch, scale, bias, dropoutSeed } = this.forwarded;
    if (!this.forwarded.adapters)
      throw new Error(
        'backward: the last batch was scored without the adapters (score { adapters: false }); score it with them',
      );
    if (dlogp.length !== batch.rows * batch.width)
      throw new Error(`backward: dlogp has ${dlogp.length} entries, expected ${batch.rows * batch.width}`);
    if (dvalues && !this.vh) throw new Error('backward: dvalues given but the model has no value head');
    if (this.vh && dvalues && dvalues.length !== dlogp.length)
      throw new Error(`backward: dvalues has ${dvalues.length} entries, expected ${dlogp.length}`);
    if (dentropy && dentropy.length !== dlogp.length)
      throw new Error(`backward: dentropy has ${dentropy.length} entries, expected ${dlogp.length}`);
    const vh = this.vh && valueHead ? { w: this.vh.w, gw: valueHead.g } : null;
    const passes = this.forwarded.passes > 1 ? this.passesOf(batch) : null;
    for (const [k, pass] of (passes ?? [null]).entries()) {
      if (k > 0) await this.ops.flush();
      const input = pass ? pass.input : batch;
      const acts = pass
        ? this.runForward(
            input,
            pass.take(bias, this.config.vocab),
            scale,
            true,
            this.dropoutAt(dropoutSeed, pass.first * input.width),
          )
        : this.acts;
      const seed = (x: ArrayLike<number>) =>
        seedToPositions(pass ? pass.take(x)! : x, input.segmentIds, input.rows, input.width);
      this.ops.upload(acts.dlogp, seed(dlogp));
      if (vh) this.ops.upload(acts.dvalues, dvalues ? seed(dvalues) : new Float32Array(input.rows * input.width));
      if (dentropy) this.ops.upload(acts.dentropy, seed(dentropy));
      backward(
        this.ops,
        this.config,
        this.forwardParams(),
        grads,
        acts,
        vh,
        scale,
        this.forwardBias,
        dentropy !== null,
      );
    }
  }

  zeroGrad(): void {
    const { grads, valueHead } = this.trainedParts('zeroGrad');
    for (const t of trainedGradients(grads).values()) this.ops.zero(t);
    if (grads.lookup) this.ops.zero(grads.lookup);
    if (valueHead) this.ops.zero(valueHead.g);
  }

  /** Clips to `maxGradNorm` and applies AdamW to every parameter (adamw.ts); returns the pre-clip norm. */
  async step(o: StepOptions): Promise<number> {
    const { slots, scratch, grads } = this.trainedParts('step');
    if (grads.lookup) {
      // Tied embeddings: the lookup's gradient joins the LM head's once every pass has summed both.
      this.ops.accumulate(grads.base!.wte, grads.lookup, grads.lookup.length);
      this.ops.zero(grads.lookup);
    }
    const norm = adamwStep(this.ops, slots, scratch, o);
    this.t = o.step;
    return norm;
  }

  /** AdamW's moments and step count, read back through `Ops` (one read per tensor; between steps only). */
  async getOptimizerState(): Promise<OptimizerState> {
    const m = new Map<string, Float32Array>();
    const v = new Map<string, Float32Array>();
    for (const [name, t] of this.moments()) {
      m.set(name, await this.ops.read(t.m));
      v.set(name, await this.ops.read(t.v));
    }
    return { t: this.t, m, v };
  }

  /** Restores AdamW's state; every tensor must be present with its exact size (the next step passes `step: t + 1`). */
  setOptimizerState(s: OptimizerState): void {
    if (!Number.isInteger(s.t) || s.t < 0)
      throw new Error(`setOptimizerState: t = ${s.t}; expected a non-negative integer`);
    const moments = this.moments();
    for (const [name, t] of moments) {
      for (const [which, data] of [
        ['m', s.m.get(name)],
        ['v', s.v.get(name)],
      ] as const) {
        if (!data) throw new Error(`setOptimizerState: missing ${which} of '${name}' (${t.m.length} values)`);
        if (data.length !== t.m.length)
          throw new Error(`setOptimizerState: ${which} of '${name}' has ${data.length} values, expected ${t.m.length}`);
      }
    }
    for (const name of s.m.keys())
      if (!moments.has(name))
        throw new Error(`setOptimizerState: unknown tensor '${name}' (a value head state for a model without one?)`);
    for (const [name, t] of moments) {
      this.ops.upload(t.m, s.m.get(name)!);
      this.ops.upload(t.v, s.v.get(name)!);
    }
    this.t = s.t;
  }

  private moments(): Map<string, { m: Tensor; v: Tensor }> {
    return this.trainedParts('the optimizer state').moments;
  }

  private actsFor(B: number, T: number): Acts {
    if (this.acts && this.acts.B === B && this.acts.T === T) return this.acts;
    if (this.acts) freeActs(this.ops, this.acts);
    this.acts = allocActs(this.ops, this.config, B, T, {
      ...(this.lora ? { lora: loraActs(this.lora.config) } : {}),
      ...(this.headRows !== undefined ? { headRows: this.headRows } : {}),
      // A frozen model never differentiates: one layer's activations serve all (as a prefill's).
      ...(this.trained ? { recompute: this.recomputeLayers } : { sharedLayers: true }),
    });
    return this.acts;
  }
}
