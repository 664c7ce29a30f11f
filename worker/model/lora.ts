/**
 * LoRA (Hu et al. 2021, as PEFT defines it): a targeted linear map y = x·Wᵀ becomes
 * y = x·Wᵀ + s · (x·Aᵀ)·Bᵀ with A (r, in), B (out, r) and s = alpha / r; the base W is frozen and
 * only A and B are trained. Targets are named as PEFT's `target_modules` names them (q_proj … down_proj).
 * Initialisation as PEFT's default: A ~ kaiming_uniform(a = √5) = U(−1/√in, 1/√in), B = 0, so the
 * adapted model starts equal to the base. Adapters are stored under the targeted weight's name with
 * `lora_A`/`lora_B` in place of the last part (`model.layers.0.self_attn.q_proj.lora_A.weight`):
 * PEFT's `adapter_model.safetensors` names, less its `base_model.model.` prefix.
 *
 * The scaling is applied as a matmul by the (r, r) matrix s·I (N·r² work beside the N·r·(in + out)
 * of the adapter's two matmuls), so no new kernel is needed.
 */
import type { Ops, Tensor } from '../../kernels/ops';
import { mulberry32 } from '../../kernels/common/random';
import { mix32 } from '../../kernels/dropout/dropout.ref';
import type { ModelConfig } from './config';
import { paramSpecs } from './params';
import type { GrpoRunOptions } from '../contract/options';

/** The projections LoRA can target: the model's key for each and PEFT's module name. */
const LORA_TARGETS = {
  q_proj: 'wq',
  k_proj: 'wk',
  v_proj: 'wv',
  o_proj: 'wo',
  gate_proj: 'wg',
  up_proj: 'wu',
  down_proj: 'wd',
} as const;
type LoraTarget = keyof typeof LORA_TARGETS;
export type Projection = (typeof LORA_TARGETS)[LoraTarget];

export interface LoraConfig {
  /** r: the adapters' rank, an integer ≥ 1 (PEFT `r`). */
  rank: number;
  /** The scaling's numerator: s = alpha / rank (PEFT `lora_alpha`). */
  alpha: number;
  /**
   * Dropout on an adapter's input during training (PEFT `lora_dropout`), 0 ≤ p < 1: in a forward
   * scored with a `dropoutSeed` (an update's own), each adapted projection's branch reads
   * dropout(x) = x ⊙ m / (1 − p), a mask of its own per layer and projection (kernels/dropout);
   * the base's path and every other forward (scoring, sampling) see x itself.
   */
  dropout: number;
  /** PEFT `target_modules`: names from LORA_TARGETS, or 'all-linear' for every one of them. */
  targetModules: readonly string[];
}

/** The problems of a LoRA config, each naming its field and the allowed values; empty when valid. */
export function validateLoraConfig(o: LoraConfig): string[] {
  const out: string[] = [];
  if (!Number.isInteger(o.rank) || o.rank < 1) out.push(`lora.rank = ${o.rank}; expected an integer ≥ 1`);
  if (typeof o.alpha !== 'number' || !Number.isFinite(o.alpha) || o.alpha <= 0)
    out.push(`lora.alpha = ${o.alpha}; expected a finite number > 0 (the scaling is alpha / rank)`);
  if (typeof o.dropout !== 'number' || !(o.dropout >= 0 && o.dropout < 1))
    out.push(`lora.dropout = ${o.dropout}; expected a number in [0, 1) (PEFT lora_dropout)`);
  const names = Object.keys(LORA_TARGETS);
  if (!Array.isArray(o.targetModules) || o.targetModules.length === 0)
    out.push(`lora.targetModules is empty; expected some of ${names.join(', ')} or 'all-linear'`);
  else
    for (const t of o.targetModules)
      if (t !== 'all-linear' && !names.includes(t))
        out.push(`lora.targetModules has '${t}'; expected some of ${names.join(', ')} or 'all-linear'`);
  return out;
}

/** Run options' LoRA fields (GrpoRunOptions `loraRank`, …) as a config: absent rank, none; alpha defaults to the rank, targets to all-linear. */
export function loraFromOptions(
  o: Pick<GrpoRunOptions, 'loraRank' | 'loraAlpha' | 'loraTargets' | 'loraDropout'>,
): LoraConfig | undefined {
  if (o.loraRank === undefined) return undefined;
  const targets = o.loraTargets ?? 'all-linear';
  return {
    rank: o.loraRank,
    alpha: o.loraAlpha ?? o.loraRank,
    dropout: o.loraDropout ?? 0,
    targetModules: targets.split(','),
  };
}

/** The targeted projections in the model's order (q, k, v, o, gate, up, down), duplicates dropped. */
export function loraTargets(o: Pick<LoraConfig, 'targetModules'>): LoraTarget[] {
  const all = Object.keys(LORA_TARGETS) as LoraTarget[];
  return o.targetModules.includes('all-linear') ? all : all.filter((t) => o.targetModules.includes(t));
}

/**
 * What a training forward's activations hold for a model with these adapters (tensors.ts allocActs
 * `lora`): u (N, r) per targeted projection, and room for the dropped-out inputs under dropout.
 */
export function loraActs(o: Pick<LoraConfig, 'rank' | 'targetModules'> & { dropout?: number }): {
  rank: number;
  targets: Projection[];
  dropout: boolean;
} {
  return { rank: o.rank, targets: loraTargets(o).map((t) => LORA_TARGETS[t]), dropout: (o.dropout ?? 0) > 0 };
}

/**
 * The dropout mask seed of an update's forward: a hash of the run's seed, the step and the update's
 * index within it, so that the same config and seed draw the same masks.
 */
export function dropoutSeedOf(runSeed: number, step: number, update: number): number {
  return mix32((mix32(runSeed >>> 0) ^ mix32((step * 4096 + update) >>> 0)) >>> 0);
}

/** The mask seed of one adapter (its `salt`: layer and projection) in a forward drawn from `seed`. */
export const adapterMaskSeed = (seed: number, salt: number): number => mix32((seed ^ mix32(salt)) >>> 0);

/** s = alpha / rank, the factor of the adapters' product. */
export const loraScale = (o: Pick<LoraConfig, 'rank' | 'alpha'>): number => o.alpha / o.rank;

interface LoraSpec {
  name: string;
  /** (r, in) for A, (out, r) for B. */
  shape: [number, number];
  layer: number;
  target: LoraTarget;
  part: 'a' | 'b';
  /** The targeted base weight's name (`model.layers.3.mlp.up_proj.weight`), (out, in). */
  weight: string;
}

/**
 * Every adapter tensor, layer by layer, target by target, A before B: named and shaped after the
 * targeted weight's spec (params.ts paramSpecs).
 */
export function loraSpecs(c: ModelConfig, o: Pick<LoraConfig, 'rank' | 'targetModules'>): LoraSpec[] {
  const weights = paramSpecs(c);
  const out: LoraSpec[] = [];
  for (let l = 0; l < c.layers; l++)
    for (const t of loraTargets(o)) {
      const w = weights.find((s) => s.name.startsWith(`model.layers.${l}.`) && s.name.endsWith(`.${t}.weight`))!;
      const [outDim, inDim] = w.shape;
      const stem = w.name.replace(/\.weight$/, '');
      const spec = { layer: l, target: t, weight: w.name };
      out.push({ ...spec, name: `${stem}.lora_A.weight`, shape: [o.rank, inDim], part: 'a' });
      out.push({ ...spec, name: `${stem}.lora_B.weight`, shape: [outDim, o.rank], part: 'b' });
    }
  return out;
}

/** PEFT's initialisation, seeded: A ~ U(−1/√in, 1/√in) (kaiming_uniform with a = √5), B = 0. */
export function initialAdapters(c: ModelConfig, o: LoraConfig, seed: number): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const out = new Map<string, Float32Array>();
  for (const s of loraSpecs(c, o)) {
    const data = new Float32Array(s.shape[0] * s.shape[1]);
    if (s.part === 'a') {
      const bound = 1 / Math.sqrt(s.shape[1]);
      for (let i = 0; i < data.length; i++) data[i] = (2 * rand() - 1) * bound;
    }
    out.set(s.name, data);
  }
  return out;
}

/** One adapter's tensors: A (r, in), B (out, r), and the shared (r, r) matrix s·I. */
export interface Adapter {
  a: Tensor;
  b: Tensor;
  scale: Tensor;
  rank: number;
  /** Distinct per layer and projection: keys its dropout mask (adapterMaskSeed). */
  salt: number;
}
export type LayerAdapters = Partial<Record<Projection, Adapter>>;

export interface AdapterSet {
  rank: number;
  layers: LayerAdapters[];
  /** Every A and B by name (loraSpecs order); the scale matrix is not among them. */
  byName: Map<string, Tensor>;
  scale: Tensor;
}

/** One tensor per adapter spec (zeros); `scale` (r, r) = s·I for parameters, unused zeros for gradients and moments. */
export function allocAdapterSet(ops: Ops, c: ModelConfig, o: LoraConfig, prefix: string, s: number): AdapterSet {
  const scale = ops.alloc(`${prefix}:lora_scale`, o.rank * o.rank);
  const diag = new Float32Array(o.rank * o.rank);
  for (let i = 0; i < o.rank; i++) diag[i * o.rank + i] = s;
  ops.upload(scale, diag);
  const byName = new Map<string, Tensor>();
  const layers: LayerAdapters[] = Array.from({ length: c.layers }, () => ({}));
  const specs = loraSpecs(c, o);
  for (const sp of specs) byName.set(sp.name, ops.alloc(`${prefix}:${sp.name}`, sp.shape[0] * sp.shape[1]));
  for (const sp of specs)
    if (sp.part === 'a')
      layers[sp.layer][LORA_TARGETS[sp.target]] = {
        a: byName.get(sp.name)!,
        b: byName.get(sp.name.replace('lora_A', 'lora_B'))!,
        scale,
        rank: o.rank,
        salt: sp.layer * 8 + Object.keys(LORA_TARGETS).indexOf(sp.target),
      };
  return { rank: o.rank, layers, byName, scale };
}

/** y (N, out) += s · (x·Aᵀ)·Bᵀ, keeping u = s·x·Aᵀ (N, r) for the backward; `t` is (N, r) scratch. */
export function adapterForward(
  ops: Ops,
  ad: Adapter,
  x: Tensor,
  y: Tensor,
  u: Tensor,
  t: Tensor,
  N: number,
  inDim: number,
  outDim: number,
): void {
  const r = ad.rank;
  ops.matmul(t, x, ad.a, N, inDim, r, 'nt'); // (N, in) · (r, in)ᵀ
  ops.matmul(u, t, ad.scale, N, r, r, 'nn'); // · s·I
  ops.matmul(y, u, ad.b, N, r, outDim, 'nt', { accumulate: true }); // (N, r) · (out, r)ᵀ
}

/**
 * The adapter's backward from dy (N, out): dB += dyᵀ·u, du = s·(dy·B), dA += duᵀ·x, and dx += du·A
 * when dx is given. `t` and `du` are (N, r) scratch.
 */
export function adapterBackward(
  ops: Ops,
  ad: Adapter,
  g: Pick<Adapter, 'a' | 'b'>,
  x: Tensor,
  u: Tensor,
  dy: Tensor,
  dx: Tensor | null,
  t: Tensor,
  du: Tensor,
  N: number,
  inDim: number,
  outDim: number,
): void {
  const r = ad.rank;
  ops.matmul(g.b, dy, u, outDim, N, r, 'tn', { accumulate: true }); // (N, out)ᵀ · (N, r)
  ops.matmul(t, dy, ad.b, N, outDim, r, 'nn'); // (N, out) · (out, r)
  ops.matmul(du, t, ad.scale, N, r, r, 'nn'); // · s·I (symmetric)
  ops.matmul(g.a, du, x, r, N, inDim, 'tn', { accumulate: true }); // (N, r)ᵀ · (N, in)
  if (dx) ops.matmul(dx, du, ad.a, N, r, inDim, 'nn', { accumulate: true }); // (N, r) · (r, in)
}

/**
 * The base weights with the adapters merged in, W' = W + s·B·A (PEFT's `merge_and_unload`), in
 * float64 sums; every other tensor as it is. Names the first missing or misshapen adapter.
 */
export function mergeAdapters(
  c: ModelConfig,
  o: LoraConfig,
  base: ReadonlyMap<string, Float32Array>,
  adapters: ReadonlyMap<string, Float32Array>,
): Map<string, Float32Array> {
  const out = new Map(base);
  const s = loraScale(o);
  const specs = loraSpecs(c, o);
  for (let p = 0; p < specs.length; p += 2) {
    const [sa, sb] = [specs[p], specs[p + 1]]; // A (r, in), then B (out, r)
    const [r, inDim] = sa.shape;
    const outDim = sb.shape[0];
    const [A, B] = [sa, sb].map((sp) => {
      const t = adapters.get(sp.name);
      if (!t || t.length !== sp.shape[0] * sp.shape[1])
        throw new Error(`mergeAdapters: '${sp.name}' missing or not [${sp.shape}]`);
      return t;
    });
    const W = base.get(sa.weight);
    if (!W) throw new Error(`mergeAdapters: base weight '${sa.weight}' missing`);
    const merged = new Float32Array(W.length);
    for (let i = 0; i < outDim; i++)
      for (let j = 0; j < inDim; j++) {
        let acc = 0;
        for (let k = 0; k < r; k++) acc += B[i * r + k] * A[k * inDim + j];
        merged[i * inDim + j] = W[i * inDim + j] + s * acc;
      }
    out.set(sa.weight, merged);
  }
  return out;
}
