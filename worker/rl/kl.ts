/**
 * Per-token KL estimators between the policy and a frozen reference, each with its value and its
 * derivative with respect to `logp` (the gradient autograd gives, stop-gradients included).
 *
 * Not the aggregation (see `aggregate.ts`; `grpoObjective` gives the KL term its own) and
 * not the off-policy metrics. References: verl `kl_penalty` / `kl_penalty_forward`
 * (`verl/trainer/ppo/core_algos.py`, `k3+` straight-through since #6058), TRL `GRPOTrainer`'s
 * per-token k3 (unclamped); docs/rl-formulas.md §6 and §11.11.
 */
import { checkFinite, checkTable } from './table';
import type { Compat } from './compat';

/**
 * `k1` = logp − ref; `abs` = |logp − ref|; `k2` = ½(logp − ref)²; `k3` = e^{ref−logp} − (ref−logp) − 1
 * (verl `low_var_kl`). A trailing `+` keeps the value and takes k2's gradient (verl straight-through).
 */
export type KlEstimator = 'k1' | 'abs' | 'k2' | 'k3' | 'k1+' | 'abs+' | 'k2+' | 'k3+';

export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'abs', 'k2', 'k3', 'k1+', 'abs+', 'k2+', 'k3+'];

/** verl's spellings: `kl` = k1, `mse` = k2, `low_var_kl` = k3 (each also with `+`). */
const ALIASES: Record<string, KlEstimator> = { kl: 'k1', mse: 'k2', low_var_kl: 'k3' };

export interface KlOptions {
  /** Default `k3` (verl `kl_loss_type: low_var_kl`; TRL's only estimator; dew's). verl spellings `kl`, `mse`, `low_var_kl` are accepted. */
  estimator?: KlEstimator | 'kl' | 'mse' | 'low_var_kl' | 'kl+' | 'mse+' | 'low_var_kl+';
  /**
   * Default `verl`: k3 clamps ref − logp to ±20 and the value to [−10, 10]. `trl`: k3 unclamped
   * (TRL GRPO `per_token_kl`). `rllm` = verl (rLLM delegates to verl's `kl_penalty`).
   */
  compat?: Compat;
}

export interface KlInput {
  rows: number;
  width: number;
  /** Policy log-probs, `[rows, width]`: the differentiable input. */
  logp: ArrayLike<number>;
  /** Frozen reference log-probs, `[rows, width]`. */
  refLogp: ArrayLike<number>;
  /** Where to evaluate; 0 elsewhere. Default: every entry. */
  mask?: ArrayLike<number>;
  /** The value sg(logp) reads in the `+` forms; default `logp`. Set only by finite-difference checks. */
  logpDetached?: ArrayLike<number>;
}

export interface KlResult {
  /** Per-token estimator value, `[rows, width]` (0 off the mask). */
  value: Float64Array;
  /** Per-token ∂value/∂logp, `[rows, width]` (0 off the mask). */
  dlogp: Float64Array;
}

export function klEstimatorOf(name: string): KlEstimator {
  const plus = name.endsWith('+');
  const base = plus ? name.slice(0, -1) : name;
  const resolved = `${ALIASES[base] ?? base}${plus ? '+' : ''}`;
  if (!(KL_ESTIMATORS as readonly string[]).includes(resolved)) {
    throw new Error(
      `KL estimator '${name}' is unknown; expected one of ${KL_ESTIMATORS.join(', ')} (or verl's kl, mse, low_var_kl)`,
    );
  }
  return resolved as KlEstimator;
}

/** Value and ∂/∂logp of a base (non-`+`) estimator at one token (docs/rl-formulas.md §6 table). */
export function klAt(
  estimator: 'k1' | 'abs' | 'k2' | 'k3',
  logp: number,
  ref: number,
  compat: Compat = 'verl',
): [number, number] {
  const d = logp - ref;
  switch (estimator) {
    case 'k1':
      return [d, 1];
    case 'abs':
      return [Math.abs(d), Math.sign(d)]; // torch abs: gradient 0 at 0
    case 'k2':
      return [0.5 * d * d, d];
    case 'k3': {
      if (compat === 'trl') return [Math.exp(-d) + d - 1, 1 - Math.exp(-d)];
      const kappa = Math.min(Math.max(-d, -20), 20); // clamp(ref − logp, ±20), gradient passes at the bounds
      const raw = Math.exp(kappa) - kappa - 1;
      const value = Math.min(Math.max(raw, -10), 10);
      const pass = Math.abs(d) <= 20 && raw <= 10;
      return [value, pass ? 1 - Math.exp(kappa) : 0];
    }
  }
}

/** The estimator over a table: per-token values and ∂/∂logp. */
export function klPenalty(input: KlInput, options: KlOptions = {}): KlResult {
  const { rows, width, logp, refLogp, mask } = input;
  const estimator = klEstimatorOf(options.estimator ?? 'k3');
  const compat = options.compat ?? 'verl';
  const detached = input.logpDetached ?? logp;
  checkTable('logp', logp, rows, width);
  checkTable('refLogp', refLogp, rows, width);
  checkTable('logpDetached', detached, rows, width);
  if (mask) checkTable('mask', mask, rows, width);
  checkFinite('logp', logp, width, mask);
  checkFinite('refLogp', refLogp, width, mask);
  const plus = estimator.endsWith('+');
  const base = (plus ? estimator.slice(0, -1) : estimator) as 'k1' | 'abs' | 'k2' | 'k3';
  const value = new Float64Array(rows * width);
  const dlogp = new Float64Array(rows * width);
  for (let i = 0; i < value.length; i++) {
    if (mask && !mask[i]) continue;
    if (!plus || base === 'k2') {
      [value[i], dlogp[i]] = klAt(base, logp[i], refLogp[i], compat);
    } else {
      // verl: ½(logp − ref)² − sg(½(logp − ref)²) + sg(forward): value of `base`, gradient of k2.
      const k2 = (x: number) => 0.5 * (x - refLogp[i]) ** 2;
      value[i] = k2(logp[i]) - k2(detached[i]) + klAt(base, detached[i], refLogp[i], compat)[0];
      dlogp[i] = logp[i] - refLogp[i];
    }
  }
  return { value, dlogp };
}
