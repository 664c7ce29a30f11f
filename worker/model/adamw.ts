/**
 * The optimizer step every model on `Ops` takes (the language model, model.ts, and the flow
 * policy's velocity field, worker/flow/model.ts): the global gradient norm over every tensor,
 * clipping to `maxGradNorm` (torch.nn.utils.clip_grad_norm_), then AdamW on each tensor with the
 * clipped gradient (torch.optim.AdamW; decoupled weight decay on matrices only), and one scalar
 * readback: the pre-clip norm. Not a schedule: the learning rate and step come from the trainer
 * (worker/train/optimizer.ts `stepOptions`); the kernels are kernels/adamw and kernels/gradnorm.
 */
import type { AdamWParams, Ops, Tensor } from '../../kernels/ops';

export interface StepOptions extends Omit<AdamWParams, 'weightDecay'> {
  weightDecay: number;
  /** Clip the global gradient norm to this value; Infinity disables clipping. */
  maxGradNorm: number;
}

/** One parameter tensor, its gradient and its AdamW moments (all the same length). */
export interface AdamWSlot {
  param: Tensor;
  grad: Tensor;
  m: Tensor;
  v: Tensor;
  /** Apply `weightDecay` (matrices); norms, biases and the value head get none. */
  decay: boolean;
}

/** The step's two scalar tensors (1): Σ g² over every gradient, and the clip scale. */
export interface AdamWScratch {
  normSq: Tensor;
  clip: Tensor;
}

/**
 * Clips the gradients of `slots` to `o.maxGradNorm` together and applies AdamW to each, in
 * order; the norm sums the tensors in the order of `slots`. Every kernel is dispatched before it
 * returns (a bad hyperparameter throws here); the promise is the readback of the pre-clip norm.
 */
export function adamwStep(
  ops: Ops,
  slots: readonly AdamWSlot[],
  scratch: AdamWScratch,
  o: StepOptions,
): Promise<number> {
  const grads = slots.map((s) => s.grad);
  ops.gradNormSquared(scratch.normSq, grads);
  const clipping = Number.isFinite(o.maxGradNorm);
  if (clipping) ops.clipScale(scratch.clip, scratch.normSq, o.maxGradNorm);
  for (const s of slots) {
    ops.adamw(
      s.param,
      s.grad,
      s.m,
      s.v,
      s.param.length,
      {
        lr: o.lr,
        beta1: o.beta1,
        beta2: o.beta2,
        eps: o.eps,
        step: o.step,
        weightDecay: s.decay ? o.weightDecay : 0,
      },
      clipping ? scratch.clip : null,
    );
  }
  return ops.read(scratch.normSq).then((sq) => Math.sqrt(sq[0]));
}
