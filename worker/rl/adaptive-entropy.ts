/**
 * The adaptive entropy coefficient (Skywork-OR1, He et al. 2025, arXiv:2505.22312 §4), as TRL
 * runs it (huggingface/trl f2cd577, `trl/trainer/grpo_trainer.py` `_compute_loss`, GRPOConfig
 * `use_adaptive_entropy`, `entropy_coef` 0, `entropy_coef_min` 0, `entropy_coef_max` 1,
 * `entropy_coef_delta` 0.005, `entropy_target` 0.2):
 *
 *   applied_k = c_k   if H_{k−1} ≤ target, else 0         (H_0 = +∞: the first step applies none)
 *   after step k, H_k = the step's token-mean entropy (entropy-bonus.ts `tokenMean`):
 *   c_{k+1} = min(c_k + δ, c_max)  if H_k ≤ target,  else  max(c_k − δ, c_min)
 *
 * So the bonus switches on only once the entropy has fallen to the target, and its coefficient
 * climbs by δ per optimizer step while it stays there. The state is part of a run's position
 * (TRL saves `entropy_ctrl_state.json`). docs/rl-formulas.md §5.15. verl and SkyRL have only a
 * static coefficient.
 */

export interface AdaptiveEntropyOptions {
  /** c_0 (TRL `entropy_coef`). */
  coef: number;
  min: number;
  max: number;
  /** δ, the step (TRL `entropy_coef_delta`). */
  delta: number;
  /** The entropy the controller holds the policy at (TRL `entropy_target`). */
  target: number;
}

/** Where the controller stands between optimizer steps; JSON-safe (no ∞: null is "none measured yet"). */
export interface EntropyControllerState {
  coef: number;
  /** The last optimizer step's token-mean entropy; null before the first (TRL's +∞). */
  lastEntropy: number | null;
}

export function initialEntropyState(o: AdaptiveEntropyOptions): EntropyControllerState {
  return { coef: o.coef, lastEntropy: null };
}

/** The coefficient step k applies: c_k once the last measured entropy is at or below the target, else 0. */
export function appliedEntropyCoef(state: EntropyControllerState, o: AdaptiveEntropyOptions): number {
  return state.lastEntropy !== null && state.lastEntropy <= o.target ? state.coef : 0;
}

/**
 * The state after an optimizer step that measured `entropy` (its token mean). A step without
 * tokens (NaN) measures 0, as TRL's `clamp(min=1)` denominator gives.
 */
export function nextEntropyState(
  state: EntropyControllerState,
  entropy: number,
  o: AdaptiveEntropyOptions,
): EntropyControllerState {
  const h = Number.isNaN(entropy) ? 0 : entropy;
  const coef = h <= o.target ? Math.min(state.coef + o.delta, o.max) : Math.max(state.coef - o.delta, o.min);
  return { coef, lastEntropy: h };
}
