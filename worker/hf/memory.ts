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
import type { Ops, Tensor } from '../../kernels/ops';
import type { ModelConfig } from '../model/config';
import { parameterCount } from '../model/params';
import { allocActs } from '../model/tensors';

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

export const TRAINING_MEMORY_COUNTS =
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

/** Values (f32 or i32, 4 bytes each) that allocActs allocates for a [rows, seq] batch. */
function countActivationValues(config: ModelConfig, rows: number, seq: number): number {
  let values = 0;
  // allocActs only calls `alloc`; any other use of this stand-in is a bug here, so it throws.
  const counting = new Proxy({} as Ops, {
    get(_target, key) {
      if (key !== 'alloc')
        throw new Error(`trainingMemoryEstimate: allocActs called ops.${String(key)}; only alloc is counted`);
      return (_label: string, length: number) => {
        values += length;
        return { length } as unknown as Tensor;
      };
    },
  });
  allocActs(counting, config, rows, seq);
  return values;
}
