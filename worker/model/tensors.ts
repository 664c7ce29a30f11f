/**
 * The model's tensors, named the llm.c way: parameters (and, with the same structure, their
 * gradients and AdamW moments), the activations of one packed batch [B, T] that the backward
 * pass reads, and the KV cache of decoding (kv-cache.ts fills it, decode-forward.ts appends to
 * it). Specs are data; allocation goes through `Ops`, one buffer per tensor (WebGPU forbids
 * binding one buffer read-only and writable in the same dispatch, so activations cannot share one).
 */
import type { WeightStorage } from '../contract/options';
import type { Ops, Tensor } from '../../kernels/ops';
import type { ModelConfig } from './config';
import { kvDim } from './config';
import { isLayerMatrix, paramSpecs, numel } from './params';
import { bf16Words } from '../../kernels/bf16/bf16.ref';
import type { LayerAdapters, Projection } from './lora';

export interface LayerParams {
  ln1: Tensor; // (C)   input_layernorm
  wq: Tensor; // (C, C) q_proj, (out, in)
  wk: Tensor; // (KV, C) k_proj, KV = kvHeads · hs
  wv: Tensor; // (KV, C) v_proj
  wo: Tensor; // (C, C) o_proj
  ln2: Tensor; // (C)   post_attention_layernorm
  wg: Tensor; // (F, C) gate_proj
  wu: Tensor; // (F, C) up_proj
  wd: Tensor; // (C, F) down_proj
  /** LoRA adapters of this layer's targeted projections (lora.ts), when the forward applies them. */
  adapters?: LayerAdapters;
}

export interface ParamSet {
  wte: Tensor; // (V, C) embed_tokens
  layers: LayerParams[];
  lnf: Tensor; // (C) norm
  lmHead: Tensor; // (V, C) lm_head, or wte itself when tied
  /** Every tensor by its Hugging Face name, in spec order (lm_head absent when tied). */
  byName: Map<string, Tensor>;
  /**
   * Layer matrices stored as bf16 (allocParamSet `bf16`): each layer's seven, two values to an i32
   * word; `layers[l]` then share one f32 set that `layerParams` widens layer l into before use.
   */
  stored?: { layers: Record<LayerMatrix, Tensor>[]; widened: number };
}

/** The projection matrices of a layer (the norms are vectors). */
type LayerMatrix = 'wq' | 'wk' | 'wv' | 'wo' | 'wg' | 'wu' | 'wd';
const LAYER_MATRICES: readonly LayerMatrix[] = ['wq', 'wk', 'wv', 'wo', 'wg', 'wu', 'wd'];

const LAYER_KEYS: [keyof LayerParams, string][] = [
  ['ln1', 'input_layernorm.weight'],
  ['wq', 'self_attn.q_proj.weight'],
  ['wk', 'self_attn.k_proj.weight'],
  ['wv', 'self_attn.v_proj.weight'],
  ['wo', 'self_attn.o_proj.weight'],
  ['ln2', 'post_attention_layernorm.weight'],
  ['wg', 'mlp.gate_proj.weight'],
  ['wu', 'mlp.up_proj.weight'],
  ['wd', 'mlp.down_proj.weight'],
];

/**
 * Allocates one tensor per parameter spec (zeros), e.g. the parameters, gradients or moments.
 * `bf16` (model.ts `storage`): the layer matrices as bf16 (kernels/bf16), two values to an i32 word
 * (`byName` holds the words), and one f32 layer of matrices that `layerParams` widens each layer
 * into before its kernels run; the embedding, LM head and norms stay f32. For weights no step
 * changes (nothing writes the widened copy back).
 */
export function allocParamSet(ops: Ops, c: ModelConfig, prefix: string, storage: WeightStorage = 'f32'): ParamSet {
  const bf16 = storage === 'bf16';
  const byName = new Map<string, Tensor>();
  const sizes = new Map(paramSpecs(c).map((s) => [s.name, numel(s.shape)]));
  for (const s of paramSpecs(c)) {
    const n = sizes.get(s.name)!;
    byName.set(
      s.name,
      bf16 && isLayerMatrix(s.name)
        ? ops.alloc(`${prefix}:${s.name} (bf16)`, bf16Words(n), 'i32')
        : ops.alloc(`${prefix}:${s.name}`, n),
    );
  }
  // bf16: one f32 layer of matrices, shaped as layer 0's, that every layer is widened into.
  const widened = bf16
    ? (Object.fromEntries(
        LAYER_KEYS.filter(([key]) => LAYER_MATRICES.includes(key as LayerMatrix)).map(([key, suffix]) => [
          key,
          ops.alloc(`${prefix}:layer.${suffix} (widened)`, sizes.get(`model.layers.0.${suffix}`)!),
        ]),
      ) as Record<LayerMatrix, Tensor>)
    : null;
  const layers: LayerParams[] = [];
  const stored: Record<LayerMatrix, Tensor>[] = [];
  for (let l = 0; l < c.layers; l++) {
    const lp = {} as LayerParams;
    for (const [key, suffix] of LAYER_KEYS) lp[key] = byName.get(`model.layers.${l}.${suffix}`)!;
    if (widened) {
      stored.push(Object.fromEntries(LAYER_MATRICES.map((k) => [k, lp[k]])) as Record<LayerMatrix, Tensor>);
      Object.assign(lp, widened);
    }
    layers.push(lp);
  }
  const wte = byName.get('model.embed_tokens.weight')!;
  return {
    wte,
    layers,
    lnf: byName.get('model.norm.weight')!,
    lmHead: c.tiedEmbeddings ? wte : byName.get('lm_head.weight')!,
    byName,
    ...(widened ? { stored: { layers: stored, widened: -1 } } : {}),
  };
}

/** Layer l's parameters for its kernels: with bf16 storage, its matrices widened into the shared f32 set first. */
export function layerParams(ops: Ops, p: ParamSet, l: number): LayerParams {
  const s = p.stored;
  if (s && s.widened !== l) {
    for (const k of LAYER_MATRICES) ops.widenBf16(p.layers[l][k], s.layers[l][k], p.layers[l][k].length);
    s.widened = l;
  }
  return p.layers[l];
}

export interface LayerActs {
  x: Tensor; // (N, C) residual stream entering the layer
  ln1: Tensor; // (N, C)
  rstd1: Tensor; // (N)
  q: Tensor; // (N, C) after RoPE
  k: Tensor; // (N, KV) after RoPE, KV = kvHeads · hs
  v: Tensor; // (N, KV)
  att: Tensor; // (N, C) attention output before o_proj
  lse: Tensor; // (B, NH, T)
  x1: Tensor; // (N, C) residual after the attention block
  ln2: Tensor; // (N, C)
  rstd2: Tensor; // (N)
  gate: Tensor; // (N, F)
  up: Tensor; // (N, F)
  h: Tensor; // (N, F) silu(gate) · up
  /** Per LoRA-targeted projection, u = s·x·Aᵀ (N, r) (lora.ts); absent without adapters. */
  u?: Partial<Record<Projection, Tensor>>;
}

/**
 * The LM head's buffers when it runs in chunks of `headRows` positions: the chunk's normed hidden
 * states, targets, outputs and gradients, copied from and to the whole batch's.
 */
interface HeadChunk {
  lnf: Tensor; // (headRows, C)
  targets: Tensor; // (headRows) i32
  logp: Tensor; // (headRows)
  entropy: Tensor; // (headRows)
  lse: Tensor; // (headRows)
  dlogp: Tensor; // (headRows)
  dentropy: Tensor; // (headRows)
  dln: Tensor; // (headRows, C)
}

/** The logits (and their gradient) a training pass holds at once: a batch of more positions runs the LM head in chunks. */
const HEAD_CHUNK_BYTES = 64 * 2 ** 20;

/** Positions of a chunk of the LM head: all N when their (N, V) logits fit HEAD_CHUNK_BYTES. */
function headRowsOf(N: number, V: number): number {
  return Math.max(1, Math.min(N, Math.floor(HEAD_CHUNK_BYTES / (4 * V))));
}

/** Activations and backward scratch for a [B, T] batch (N = B·T). */
export interface Acts {
  B: number;
  T: number;
  /** Positions the LM head runs at once: `logits` and `dlogits` hold (headRows, V); `head` is null when it is all N. */
  headRows: number;
  head: HeadChunk | null;
  /**
   * Per-layer recomputation (allocActs `recompute`): every layer keeps its input `x` alone and
   * shares the rest, so the backward runs each layer's forward again before its own backward.
   */
  recompute: boolean;
  ids: Tensor; // (N) i32 input ids
  positions: Tensor; // (N) i32
  segments: Tensor; // (N) i32, 0 = padding
  targets: Tensor; // (N) i32: the id each position predicts, −1 where none
  layers: LayerActs[];
  xL: Tensor; // (N, C) residual after the last layer
  lnf: Tensor; // (N, C)
  rstdf: Tensor; // (N)
  logits: Tensor; // (headRows, V)
  logp: Tensor; // (N) log p(target | prefix) per position
  values: Tensor; // (N) value head output per position (PPO critic; unused without a value head)
  entropy: Tensor; // (N)
  lseOut: Tensor; // (N)
  // forward scratch
  qPre: Tensor; // (N, C) before RoPE
  kPre: Tensor; // (N, KV)
  // backward scratch
  dlogp: Tensor; // (N) seed per position
  dentropy: Tensor; // (N) entropy seed per position (∂loss/∂H: an entropy bonus)
  dvalues: Tensor; // (N) value-head seed per position
  dlogits: Tensor; // (headRows, V)
  dres: Tensor; // (N, C) gradient of the residual stream
  dln: Tensor; // (N, C)
  datt: Tensor; // (N, C)
  dq: Tensor; // (N, C) after RoPE
  dk: Tensor; // (N, KV)
  dv: Tensor; // (N, KV)
  dqPre: Tensor; // (N, C)
  dkPre: Tensor; // (N, KV)
  dgate: Tensor; // (N, F)
  dup: Tensor; // (N, F)
  dh: Tensor; // (N, F)
  /** LoRA scratch, (N, r) each: the forward's x·Aᵀ and the backward's s·dy·B; null without adapters. */
  lora: {
    t: Tensor;
    du: Tensor;
    /** (N, max(C, F)): an adapter's dropped-out input (forward, backward) and its input gradient; null without dropout. */
    xd: Tensor | null;
    /**
     * The dropout the last forward drew (lora.ts LoraConfig `dropout`): probability, the forward's
     * seed, and its first position's index in the batch (a pass's masks continue the whole batch's);
     * the backward draws the same masks. Null: none (every forward but an update's).
     */
    dropout: { p: number; seed: number; offset: number } | null;
  } | null;
  /** Where a frozen base's norm-weight gradients go (C, never read): the backward computes them with the input's. */
  normSink: Tensor;
}

/**
 * The activations of a (B, T) batch. `layersOnly`: for a forward through the layers alone
 * (`forwardLayers`, a sampler's prefill): the head's outputs (logits, log-probs) and every
 * backward buffer are one-element placeholders, so no (B·T, V) buffer is allocated. `wholeHead`:
 * the logits of every position at once (a decoding step reads them all), whatever their size.
 */
export function allocActs(
  ops: Ops,
  c: ModelConfig,
  B: number,
  T: number,
  o: {
    layersOnly?: boolean;
    wholeHead?: boolean;
    /** Positions a chunk of the LM head holds (default `headRowsOf(N, V)`, by HEAD_CHUNK_BYTES); clamped to 1 … N. */
    headRows?: number;
    /** One layer's activations serve every layer (a prefill keeps only each layer's k and v, in the cache; a frozen model's scoring). */
    sharedLayers?: boolean;
    /** Each layer keeps its input alone, one layer's other activations serve all: the backward recomputes them (Acts `recompute`). */
    recompute?: boolean;
    /** Adapters' buffers; `dropout`: room for their dropped-out inputs too. */
    lora?: { rank: number; targets: readonly Projection[]; dropout?: boolean };
  } = {},
): Acts {
  const layersOnly = o.layersOnly ?? false;
  const N = B * T,
    C = c.dModel,
    F = c.ffn,
    V = c.vocab,
    KV = kvDim(c);
  const HEAD_AND_BACKWARD = /^(logits|logp|values|entropy|lseOut|d.*)$/;
  const f = (name: string, n: number) =>
    layersOnly && HEAD_AND_BACKWARD.test(name) ? ops.alloc(`act:${name} (unused)`, 1) : ops.alloc(`act:${name}`, n);
  const i = (name: string) => ops.alloc(`act:${name}`, N, 'i32');
  if (o.sharedLayers && o.recompute) throw new Error('allocActs: sharedLayers and recompute exclude each other');
  const layers: LayerActs[] = [];
  for (let l = 0; l < (o.sharedLayers || o.recompute ? 1 : c.layers); l++) {
    const p = o.sharedLayers || o.recompute ? 'layer.' : `l${l}.`;
    layers.push({
      x: f(`${p}x`, N * C),
      ln1: f(`${p}ln1`, N * C),
      rstd1: f(`${p}rstd1`, N),
      q: f(`${p}q`, N * C),
      k: f(`${p}k`, N * KV),
      v: f(`${p}v`, N * KV),
      att: f(`${p}att`, N * C),
      lse: f(`${p}lse`, N * c.heads),
      x1: f(`${p}x1`, N * C),
      ln2: f(`${p}ln2`, N * C),
      rstd2: f(`${p}rstd2`, N),
      gate: f(`${p}gate`, N * F),
      up: f(`${p}up`, N * F),
      h: f(`${p}h`, N * F),
      ...(o.lora ? { u: Object.fromEntries(o.lora.targets.map((t) => [t, f(`${p}u.${t}`, N * o.lora!.rank)])) } : {}),
    });
  }
  if (o.recompute) for (let l = 1; l < c.layers; l++) layers.push({ ...layers[0], x: f(`l${l}.x`, N * C) });
  while (layers.length < c.layers) layers.push(layers[0]);
  const headRows = o.wholeHead || layersOnly ? N : Math.max(1, Math.min(N, o.headRows ?? headRowsOf(N, V)));
  const H = headRows;
  const head: HeadChunk | null =
    headRows === N
      ? null
      : {
          lnf: f('head.lnf', H * C),
          targets: ops.alloc('act:head.targets', H, 'i32'),
          logp: f('head.logp', H),
          entropy: f('head.entropy', H),
          lse: f('head.lse', H),
          dlogp: f('head.dlogp', H),
          dentropy: f('head.dentropy', H),
          dln: f('head.dln', H * C),
        };
  return {
    B,
    T,
    headRows,
    head,
    recompute: o.recompute ?? false,
    ids: i('ids'),
    positions: i('positions'),
    segments: i('segments'),
    targets: i('targets'),
    layers,
    xL: f('xL', N * C),
    lnf: f('lnf', N * C),
    rstdf: f('rstdf', N),
    logits: f('logits', headRows * V),
    logp: f('logp', N),
    values: f('values', N),
    entropy: f('entropy', N),
    lseOut: f('lseOut', N),
    qPre: f('qPre', N * C),
    kPre: f('kPre', N * KV),
    dlogp: f('dlogp', N),
    dentropy: f('dentropy', N),
    dvalues: f('dvalues', N),
    dlogits: f('dlogits', headRows * V),
    dres: f('dres', N * C),
    dln: f('dln', N * C),
    datt: f('datt', N * C),
    dq: f('dq', N * C),
    dk: f('dk', N * KV),
    dv: f('dv', N * KV),
    dqPre: f('dqPre', N * C),
    dkPre: f('dkPre', N * KV),
    dgate: f('dgate', N * F),
    dup: f('dup', N * F),
    dh: f('dh', N * F),
    lora: o.lora
      ? {
          t: f('lora.t', N * o.lora.rank),
          du: f('dlora', N * o.lora.rank),
          xd: o.lora.dropout ? f('lora.xd', N * Math.max(C, F)) : null,
          dropout: null,
        }
      : null,
    normSink: f('dnormSink', C),
  };
}

export function freeActs(ops: Ops, a: Acts): void {
  for (const [key, t] of Object.entries(a)) {
    if (key === 'layers') {
      // Layers may share tensors (sharedLayers, recompute): each is freed once.
      const tensors = new Set<Tensor>();
      for (const { u, ...la } of t as LayerActs[])
        for (const x of [...Object.values(la), ...Object.values(u ?? {})]) tensors.add(x);
      for (const x of tensors) ops.free(x);
    } else if (key === 'recompute') {
      continue;
    } else if (key === 'head') {
      for (const x of Object.values((t as object | null) ?? {})) ops.free(x as Tensor);
    } else if (key === 'lora') {
      for (const x of a.lora ? [a.lora.t, a.lora.du, a.lora.xd] : []) if (x) ops.free(x);
    } else if (typeof t === 'object') ops.free(t as Tensor);
  }
}

/** The KV cache of B sequences of at most L ids (kv-cache.ts allocates and fills it). */
export interface KvCache {
  B: number;
  L: number;
  /** Per layer, (B, L, KV) after RoPE, KV = kvHeads · hs (dModel without grouped-query attention). */
  k: Tensor[];
  v: Tensor[];
  /** Ids cached per row (host mirror). */
  lengths: Int32Array;
  /** lengths + 1 during a step: what the new token attends to (B) i32. */
  attendLengths: Tensor;
}
