/**
 * How much memory training a model in f32 takes, before it is loaded: what worker/model/model.ts
 * allocates for a training step on `rows × seq` packed ids. Counted, 4 bytes per value:
 *   - weights: every parameter tensor (paramSpecs; the tied lm_head is the embedding, counted once)
 *   - grads: one gradient per parameter
 *   - AdamW moments: m and v per parameter
 *   - activations: every buffer of worker/model/tensors.ts `allocActs(rows, seq)`, counted by
 *     calling it against a counting allocator, so the estimate follows the model's own layout
 *     (the forward activations the backward pass reads, the logits and their gradient (rows·seq, V),
 *     and the backward scratch).
 * Not counted: the sampling KV cache and decode buffers of rollouts, a second (reference or old)
 * policy, the PPO value head, scalar and staging buffers, the bytes of the files while loading,
 * and allocator overhead or alignment. It is a floor, not a promise.
 */
import type { WeightStorage } from '../contract/options';
import type { Ops, Tensor } from '../../kernels/ops';
import type { ModelConfig } from '../model/config';
import { kvDim } from '../model/config';
import { parameterCount } from '../model/params';
import { allocActs, allocParamSet } from '../model/tensors';
import type { LoraConfig, Projection } from '../model/lora';
import { loraActs, loraSpecs } from '../model/lora';

export interface TrainingMemoryEstimate {
  /** The batch the activations are counted for. */
  rows: number;
  seq: number;
  parameters: number;
  /** Bytes of each part and their sum. */
  weights: number;
  grads: number;
  adamMoments: number;
  activations: number;
  total: number;
  /** What the numbers count, in words (shown with them). */
  counts: string;
}

const TRAINING_MEMORY_COUNTS =
  'f32 weights + gradients + AdamW m and v (4 × 4 bytes per parameter) + the activations and backward scratch of one rows × seq training batch (worker/model/tensors.ts allocActs, logits and their gradient included); not the sampling KV cache, a reference policy, staging buffers or allocator overhead';

export function trainingMemoryEstimate(config: ModelConfig, rows: number, seq: number): TrainingMemoryEstimate {
  if (!Number.isInteger(rows) || rows < 1)
    throw new Error(`trainingMemoryEstimate: rows must be a positive integer, got ${rows}`);
  if (!Number.isInteger(seq) || seq < 1)
    throw new Error(`trainingMemoryEstimate: seq must be a positive integer, got ${seq}`);
  const P = parameterCount(config);
  const weights = 4 * P;
  const activations = 4 * countActivationValues(config, rows, seq);
  return {
    rows,
    seq,
    parameters: P,
    weights,
    grads: weights,
    adamMoments: 2 * weights,
    activations,
    total: 4 * weights + activations,
    counts: TRAINING_MEMORY_COUNTS,
  };
}

/**
 * How a model holds one pass's activations: with its adapters' buffers (`lora`), each layer's input
 * alone under per-layer recomputation (`recompute`), or one layer's for a frozen model that never
 * differentiates (`frozen`). model.ts Model actsFor allocates by the same rules.
 */
interface PassLayout {
  lora?: PlannedLora;
  recompute?: boolean;
  frozen?: boolean;
}

/** Values (f32 or i32, 4 bytes each) that allocActs allocates for a [rows, seq] batch of a model of this layout. */
function countActivationValues(config: ModelConfig, rows: number, seq: number, layout: PassLayout = {}): number {
  return countWith((ops) => allocPass(ops, config, rows, seq, layout));
}

/** A pass's activations in this layout, as model.ts Model actsFor allocates them. */
function allocPass(ops: Ops, config: ModelConfig, rows: number, seq: number, layout: PassLayout): void {
  allocActs(ops, config, rows, seq, {
    ...(layout.lora ? { lora: loraActs(layout.lora) } : {}),
    ...(layout.frozen ? { sharedLayers: true } : { recompute: layout.recompute ?? false }),
  });
}

/**
 * Models of at least this many parameters recompute their layers by default (SmolLM-135M class):
 * their batches would train in passes anyway, each pass's forward run twice, so recomputation costs
 * no more forwards and holds a tenth of the activations. Below it (the shipped presets, a 31M model)
 * a batch fits one pass and recomputation would add a forward.
 */
const RECOMPUTE_ABOVE_PARAMETERS = 100_000_000;

/** Whether a run recomputes layers: its `recomputeLayers` option, else by the model's size. */
export function recomputesLayers(config: ModelConfig, option?: boolean): boolean {
  return option ?? parameterCount(config) >= RECOMPUTE_ABOVE_PARAMETERS;
}

/** The trained model's pass layout for a run's `lora` and `recomputeLayers` (the trainers and the plans alike). */
export function trainedPassLayout(
  config: ModelConfig,
  run: { lora?: PlannedLora; recomputeLayers?: boolean },
): PassLayout & { recompute: boolean } {
  return { ...(run.lora ? { lora: run.lora } : {}), recompute: recomputesLayers(config, run.recomputeLayers) };
}

/**
 * Bytes a model's weights take as stored (model.ts `storage`), as tensors.ts allocParamSet
 * allocates them: 4 a value in f32; in bf16 the layer matrices' words, beside one layer widened.
 */
export function weightBytes(config: ModelConfig, storage: WeightStorage = 'f32'): number {
  return 4 * countWith((ops) => allocParamSet(ops, config, 'plan', storage));
}

/** Values `allocate` asks a counting Ops for (it may only call alloc); `seen` is told each allocation. */
function countWith(allocate: (ops: Ops) => void, seen?: (label: string, length: number) => void): number {
  let values = 0;
  // allocActs and allocParamSet only call `alloc`; any other use of this stand-in is a bug here, so it throws.
  const counting = new Proxy({} as Ops, {
    get(_target, key) {
      if (key !== 'alloc')
        throw new Error(`memory plan: a counted allocation called ops.${String(key)}; only alloc is counted`);
      return (label: string, length: number) => {
        values += length;
        seen?.(label, length);
        return { length } as unknown as Tensor;
      };
    },
  });
  allocate(counting);
  return values;
}

/**
 * Bytes of a training pass's activations over `ids` packed ids (allocActs of one row of that width:
 * the buffers grow with the ids, but the LM head's logits stop at its chunk, tensors.ts `headRowsOf`).
 */
export function passActivationBytes(config: ModelConfig, ids: number, layout: PassLayout = {}): number {
  return 4 * countActivationValues(config, 1, ids, layout);
}

/** What a training pass's activations may take by default: a batch of more ids is trained in passes (idsPerPass). */
const ACTIVATION_BUDGET_BYTES = 2 ** 30;

/** The most ids (≥ 1) whose passes of these layouts fit `bytes` together: 0 when not even one does. */
function idsFitting(config: ModelConfig, bytes: number, layouts: readonly PassLayout[]): number {
  const need = (ids: number) => layouts.reduce((n, l) => n + passActivationBytes(config, ids, l), 0);
  if (need(1) > bytes) return 0;
  let [lo, hi] = [1, 2];
  while (hi < 2 ** 30 && need(hi) <= bytes) [lo, hi] = [hi, hi * 2];
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (need(mid) <= bytes) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The default `idsPerPass`: the ids whose activations fit ACTIVATION_BUDGET_BYTES in the trained
 * model's layout (the whole batch of a small model; about ten times more under recomputation).
 */
export function defaultIdsPerPass(config: ModelConfig, layout: PassLayout = {}): number {
  return Math.max(1, idsFitting(config, ACTIVATION_BUDGET_BYTES, [layout]));
}

/** The wasm backend's memory: 4 GiB, memory32's limit (kernels/backends/wasm.ts). */
export const WASM_MEMORY_BYTES = 2 ** 32;

interface MemoryPlanPart {
  part: string;
  bytes: number;
}

export interface MemoryPlan {
  parts: MemoryPlanPart[];
  total: number;
  /** The idsPerPass the plan counts one pass's activations for, and the ids such a pass holds. */
  idsPerPass: number;
  passIds: number;
  /** The ids of one packed row: a pass holds one at least. */
  rowIds: number;
  /** The models holding one pass's activations, by layout: the trained one, and a reference of its own. */
  passLayouts: PassLayout[];
  /** The LoRA the plan counts (adapters trained, no reference copy), absent for full fine-tuning. */
  lora?: PlannedLora;
  /**
   * The largest single tensor of the step (its allocation label, and bytes): on WebGPU each tensor is
   * a GPU buffer of its own, which the adapter bounds by maxStorageBufferBindingSize (kernels/common/tensor.ts).
   */
  largestBuffer: { label: string; bytes: number };
}

/** What a plan reads of a LoRA config: the rank and the targets. */
type PlannedLora = Pick<LoraConfig, 'rank' | 'targetModules'> & { dropout?: number };

/** Bytes as GiB, two decimals: how plans are written. */
export const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

/**
 * The memory a GRPO/PPO/DPO step allocates on one backend, by part (f32, 4 bytes a value): the trained
 * model (weights, gradients, AdamW m and v), a frozen reference and the sampler models (weights
 * only), one training pass's activations (at most `idsPerPass` ids, at most the batch's), and
 * sampling: the KV cache of `rows` sequences of `promptIds + maxNew` ids, one decoding step's
 * activations and the prefill's (layers only). Not counted: staging buffers, allocator alignment.
 */
export function stepMemoryPlan(
  config: ModelConfig,
  o: {
    /** Sequences sampled at once (prompts × group) and the longest prompt, in ids. */
    rows: number;
    /** Ids of the training batch and of one of its rows; absent: GRPO's packing, two chains a row of twice the longest. */
    trainIds?: number;
    rowIds?: number;
    promptIds: number;
    maxNew: number;
    idsPerPass: number;
    reference: boolean;
    samplerModels: number;
    /** LoRA: the base frozen, adapters trained (weights, gradients, moments), the reference the base itself. */
    lora?: PlannedLora;
    /** Per-layer recomputation in the trained model (model.ts `recomputeLayers`). */
    recompute?: boolean;
    /** How the weights no step changes are held (the reference's, a LoRA base's): model.ts `storage`. */
    frozenWeights?: WeightStorage;
  },
): MemoryPlan {
  const weights = 4 * parameterCount(config);
  const frozen = weightBytes(config, o.frozenWeights);
  const bf16 = o.frozenWeights === 'bf16' ? ', bf16' : '';
  const lora = o.lora;
  const adapters = lora ? 4 * loraSpecs(config, lora).reduce((n, s) => n + s.shape[0] * s.shape[1], 0) : 0;
  const length = o.promptIds + o.maxNew;
  // Two chains a packed row of twice the longest: rows·length ids at most, in ⌈rows / 2⌉ rows.
  const batchIds = o.trainIds ?? Math.ceil(o.rows / 2) * 2 * length;
  // A batch of more ids than idsPerPass runs in passes of ⌊idsPerPass / row⌋ rows, one at least (model.ts passesOf).
  const rowIds = o.rowIds ?? 2 * length;
  const passIds =
    batchIds <= o.idsPerPass ? batchIds : Math.min(batchIds, Math.max(1, Math.floor(o.idsPerPass / rowIds)) * rowIds);
  const kv = 2 * o.rows * length * kvDim(config) * config.layers * 4;
  // A sampler's buffers carry the adapters' u (no dropout), as kv-cache.ts Decoder allocates them.
  const sampled = lora ? { lora: { ...loraActs(lora), dropout: false } } : {};
  const decode = 4 * countWith((ops) => allocActs(ops, config, o.rows, 1, { wholeHead: true, ...sampled }));
  const prefill = 4 * countLayerValues(config, o.rows, o.promptIds, sampled);
  const trainedPass: PassLayout = { ...(lora ? { lora } : {}), recompute: o.recompute ?? false };
  const referencePass: PassLayout = { frozen: true };
  const parts: MemoryPlanPart[] = [
    ...(lora
      ? [
          { part: `base model (frozen, also the reference${bf16})`, bytes: frozen },
          { part: `LoRA adapters (rank ${lora.rank}): weights, gradients, AdamW m and v`, bytes: 4 * adapters },
        ]
      : [
          {
            part: `trained model: weights, gradients, AdamW m and v${config.tiedEmbeddings ? ", the embedding lookup's own gradient (tied)" : ''}`,
            bytes: 4 * weights + (config.tiedEmbeddings ? 4 * config.vocab * config.dModel : 0),
          },
          // The reference is a model of its own: its weights, and the activations of its passes.
          ...(o.reference
            ? [
                {
                  part: `reference policy: weights${bf16} and one pass`,
                  bytes: frozen + passActivationBytes(config, passIds, referencePass),
                },
              ]
            : []),
        ]),
    ...(o.samplerModels
      ? [{ part: `${o.samplerModels} sampler model(s) (weights only)`, bytes: o.samplerModels * weights }]
      : []),
    {
      part: `activations of one training pass (${passIds} ids${o.recompute ? ', layers recomputed' : ''})`,
      bytes: passActivationBytes(config, passIds, trainedPass),
    },
    {
      part: `sampling: KV cache of ${o.rows} × ${length} ids, the prefill and a decoding step`,
      bytes: kv + decode + prefill,
    },
  ];
  // The same allocations as the parts', each tensor at once: the largest of them.
  const largestBuffer = { label: '', bytes: 0 };
  const allocations: ((ops: Ops) => void)[] = [
    (ops) => allocParamSet(ops, config, lora ? 'base' : 'trained', lora ? o.frozenWeights : 'f32'),
    ...(o.reference && !lora ? [(ops: Ops) => allocParamSet(ops, config, 'reference', o.frozenWeights)] : []),
    ...(lora
      ? [(ops: Ops) => loraSpecs(config, lora).forEach((x) => ops.alloc(`adapter:${x.name}`, x.shape[0] * x.shape[1]))]
      : []),
    (ops) => allocPass(ops, config, 1, passIds, trainedPass),
    (ops) => allocActs(ops, config, o.rows, 1, { wholeHead: true, ...sampled }),
    (ops) => allocActs(ops, config, o.rows, o.promptIds, { layersOnly: true, sharedLayers: true, ...sampled }),
    (ops) => ops.alloc('kv:k (a layer)', o.rows * length * kvDim(config)),
  ];
  for (const allocate of allocations)
    countWith(allocate, (label, n) => {
      if (4 * n > largestBuffer.bytes) Object.assign(largestBuffer, { label, bytes: 4 * n });
    });
  return {
    parts,
    total: parts.reduce((t, p) => t + p.bytes, 0),
    largestBuffer,
    idsPerPass: o.idsPerPass,
    passIds,
    rowIds,
    passLayouts: o.reference && !lora ? [trainedPass, referencePass] : [trainedPass],
    ...(lora ? { lora } : {}),
  };
}

/** The fields of a GRPO/PPO config, or of its run options (the same names), that a step's plan reads. */
interface PlannedStep {
  prompts: number;
  group: number;
  maxNew: number;
  /** KL β: a reference policy when > 0. */
  beta: number;
  staleness?: number;
  samplerWorker?: boolean;
  idsPerPass?: number;
  /** LoRA adapters trained on the frozen base (a config's `lora`; run options map theirs with lora.ts `loraFromOptions`). */
  lora?: PlannedLora;
  /** Per-layer recomputation; absent: by the model's size (recomputesLayers). */
  recomputeLayers?: boolean;
  frozenWeights?: WeightStorage;
}

/**
 * The plan of one step of `step` on wasm, its longest prompt `promptIds` ids: a reference with
 * β > 0, s + 1 sampler models with a staleness bound s sampled in the trainer's thread, the default
 * idsPerPass when the step names none; and why it does not fit the wasm memory (null when it does).
 */
export function wasmStepPlan(
  config: ModelConfig,
  step: PlannedStep,
  promptIds: number,
): MemoryPlan & { limit: number; problem: string | null } {
  const staleness = step.staleness ?? 0;
  const layout = trainedPassLayout(config, step);
  const plan = stepMemoryPlan(config, {
    rows: step.prompts * step.group,
    promptIds,
    maxNew: step.maxNew,
    idsPerPass: step.idsPerPass ?? defaultIdsPerPass(config, layout),
    reference: step.beta > 0,
    recompute: layout.recompute,
    ...(step.frozenWeights ? { frozenWeights: step.frozenWeights } : {}),
    samplerModels: staleness > 0 && !step.samplerWorker ? staleness + 1 : 0,
    ...(step.lora ? { lora: step.lora } : {}),
  });
  return onWasm(config, plan);
}

/** A plan against the wasm memory: the limit, and why the plan does not fit it (null when it does). */
function onWasm(config: ModelConfig, plan: MemoryPlan): MemoryPlan & { limit: number; problem: string | null } {
  return {
    ...plan,
    limit: WASM_MEMORY_BYTES,
    problem: memoryPlanProblem(config, plan, WASM_MEMORY_BYTES, 'the wasm memory'),
  };
}

/** The fields of a DPO config, or of its run options (the same names), that a step's plan reads. */
interface PlannedDpoStep {
  pairs: number;
  samplesPerPrompt: number;
  maxNew: number;
  idsPerPass?: number;
  lora?: PlannedLora;
  recomputeLayers?: boolean;
  frozenWeights?: WeightStorage;
}

/**
 * The plan of one DPO step on wasm, its longest prompt `promptIds` ids: pairs × samplesPerPrompt
 * sequences sampled at once (from the reference), a batch of a row per completion (2 · pairs rows),
 * the reference a model of its own unless under LoRA.
 */
export function wasmDpoPlan(
  config: ModelConfig,
  step: PlannedDpoStep,
  promptIds: number,
): MemoryPlan & { limit: number; problem: string | null } {
  const layout = trainedPassLayout(config, step);
  const plan = stepMemoryPlan(config, {
    rows: step.pairs * step.samplesPerPrompt,
    trainIds: 2 * step.pairs * (promptIds + step.maxNew),
    rowIds: promptIds + step.maxNew,
    promptIds,
    maxNew: step.maxNew,
    idsPerPass: step.idsPerPass ?? defaultIdsPerPass(config, layout),
    reference: true,
    recompute: layout.recompute,
    ...(step.frozenWeights ? { frozenWeights: step.frozenWeights } : {}),
    samplerModels: 0,
    ...(step.lora ? { lora: step.lora } : {}),
  });
  return onWasm(config, plan);
}

/** The plan against a memory of `limit` bytes: null when it fits, else why not, with what would fit. */
export function memoryPlanProblem(config: ModelConfig, plan: MemoryPlan, limit: number, where: string): string | null {
  if (plan.total <= limit) return null;
  const rest = plan.total - plan.passLayouts.reduce((n, l) => n + passActivationBytes(config, plan.passIds, l), 0);
  // A pass holds whole rows (model.ts passesOf): k rows fit, and every idsPerPass below k + 1 rows gives passes of k.
  const rows = Math.floor(idsFitting(config, limit - rest, plan.passLayouts) / plan.rowIds);
  const advice =
    rows >= 1
      ? `idsPerPass ${(rows + 1) * plan.rowIds - 1} or fewer would fit (passes of ${rows} row${rows === 1 ? '' : 's'} of ` +
        `${plan.rowIds} ids; each pass's forward is then run again for its backward)`
      : `no idsPerPass fits: the model and its sampling, with passes of one row (${plan.rowIds} ids), exceed it ` +
        '(fewer prompts × group or pairs, a shorter maxNew, LoRA)';
  return (
    `the run needs ${gib(plan.total)}, more than ${where}'s ${gib(limit)}: ` +
    `${plan.parts.map((p) => `${p.part} ${gib(p.bytes)}`).join(', ')}. ${advice}`
  );
}

/** Values of the layer stack alone for a [rows, seq] forward (allocActs `layersOnly`, `sharedLayers`: a prefill holds one layer at a time). */
function countLayerValues(
  config: ModelConfig,
  rows: number,
  seq: number,
  o: { lora?: { rank: number; targets: readonly Projection[]; dropout: boolean } } = {},
): number {
  return countWith((ops) => allocActs(ops, config, rows, seq, { layersOnly: true, sharedLayers: true, ...o }));
}
