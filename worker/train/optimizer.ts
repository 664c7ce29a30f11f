/**
 * The optimizer settings every trainer shares (AdamW with global-norm clipping), and the mapping
 * to the model's step options. Defaults live in each preset (docs/calibration.md gives their reasons).
 */
import type { StepOptions } from '../model/adamw';

export interface OptimizerConfig {
  /** Learning rate (the peak one when a schedule applies). */
  lr: number;
  /** AdamW moment decays, epsilon and decoupled weight decay (applied to matrices only). */
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Global gradient-norm clip (a huge value: none). */
  maxGradNorm: number;
}

/** Step options for optimizer step `step` (1-based), at `lr` (default: the configured one). */
export function stepOptions(c: OptimizerConfig, step: number, lr = c.lr): StepOptions {
  return {
    lr,
    beta1: c.beta1,
    beta2: c.beta2,
    eps: c.eps,
    weightDecay: c.weightDecay,
    maxGradNorm: c.maxGradNorm,
    step,
  };
}
