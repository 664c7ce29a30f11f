/**
 * Clipped value loss for PPO's critic, with the per-token gradient ∂L/∂v that seeds the value
 * head's backward pass.
 *
 * Reference: verl `compute_value_loss` (`core_algos.py`), docs/rl-formulas.md §8.1:
 * `v̂ = max(min(v, old + c), old − c)`, `l = max((v − R)², (v̂ − R)²)`, `L = 0.5 · agg(l, m)`.
 * The gradient follows torch exactly, kinks included: `torch.max`/`torch.min` split the gradient
 * ½/½ on ties (`clip_by_value` is built from them), so `v` exactly on a clip bound gets half of
 * the clipped branch. Returns and old values are constants. Not the policy loss and not GAE.
 *
 * Deviation: with the default token-mean and no mask tokens the loss is 0 with zero gradient
 * (verl divides 0 by 0).
 */
import { verlMaskedMeanOf } from './corrections/sequences';
import { checkFinite, checkTable } from './table';

export interface ValueLossInput {
  rows: number;
  width: number;
  /** Current critic predictions `v` (verl `vpreds`), `[rows, width]`: the differentiable input. */
  values: ArrayLike<number>;
  /** Critic values recorded at rollout (verl `values`), `[rows, width]`. */
  oldValues: ArrayLike<number>;
  /** Return targets R (verl `returns`), `[rows, width]`. */
  returns: ArrayLike<number>;
  /** 1 on tokens that carry value loss, `[rows, width]`. */
  responseMask: ArrayLike<number>;
  /** Clip range c around `oldValues`. Default 0.5 (verl `critic.cliprange_value`; dew `value_clip` is 0.2). `Infinity` = unclipped. */
  clip?: number;
  /**
   * Aggregation weights `w_t = ∂agg/∂l_t` (e.g. from the aggregation module), read where the mask
   * is 1. Default: token-mean, `m_t / Σm` (verl critic `loss_agg_mode: token-mean`).
   */
  aggWeights?: ArrayLike<number>;
}

export interface ValueLossResult {
  /** `0.5 · Σ_t w_t l_t`. */
  loss: number;
  /** ∂loss/∂values per token, `[rows, width]`, zero off the mask. */
  dvalues: Float64Array;
  /** verl's critic metrics: `critic/vf_loss`, `critic/vf_clipfrac`, `critic/vpred_mean`. */
  metrics: Record<string, number>;
  /** Per token the clipped prediction v̂ = max(min(v, old + c), old − c) (verl `vpredclipped`), `[rows, width]`, 0 off the mask. */
  clippedValues: Float64Array;
  /** Per token the unclipped term (v − R)² (verl `vf_losses1`), `[rows, width]`, 0 off the mask. */
  unclippedLoss: Float64Array;
  /** Per token the clipped term (v̂ − R)² (verl `vf_losses2`), `[rows, width]`, 0 off the mask. */
  clippedLoss: Float64Array;
  /** Per token the term taken, max of the two (verl `clipped_vf_losses`): `loss = 0.5 · Σ_t w_t tokenLoss_t`. */
  tokenLoss: Float64Array;
  /** Per token 1 where the clipped term was taken (strictly larger, verl's `vf_clipfrac` test), 0 where the unclipped one was (ties included) and off the mask. */
  clippedTaken: Float64Array;
}

/** d min(x, b)/dx in torch (tie: ½). */
const dMin = (x: number, b: number) => (x < b ? 1 : x === b ? 0.5 : 0);
/** d max(x, b)/dx in torch (tie: ½). */
const dMax = (x: number, b: number) => (x > b ? 1 : x === b ? 0.5 : 0);

export function valueLoss(input: ValueLossInput): ValueLossResult {
  const { rows, width, values, oldValues, returns, responseMask: m, clip = 0.5, aggWeights } = input;
  if (!(clip >= 0)) throw new Error(`valueLoss: clip must be ≥ 0 (Infinity allowed), got ${clip}`);
  for (const [name, a] of [
    ['values', values],
    ['oldValues', oldValues],
    ['returns', returns],
    ['responseMask', m],
  ] as const) {
    checkTable(name, a, rows, width);
  }
  for (let i = 0; i < m.length; i++) {
    if (m[i] !== 0 && m[i] !== 1)
      throw new Error(`responseMask[${Math.floor(i / width)}, ${i % width}] = ${m[i]}: expected 0 or 1`);
  }
  for (const [name, a] of [
    ['values', values],
    ['oldValues', oldValues],
    ['returns', returns],
  ] as const)
    checkFinite(name, a, width, m);
  let n = 0;
  for (let i = 0; i < m.length; i++) n += m[i];
  let w: (i: number) => number = (i) => m[i] / n;
  if (aggWeights) {
    checkTable('aggWeights', aggWeights, rows, width);
    checkFinite('aggWeights', aggWeights, width, m);
    w = (i) => aggWeights[i];
  }
  const dvalues = new Float64Array(m.length);
  let loss = 0;
  const clipped = new Float64Array(m.length);
  const clippedValues = new Float64Array(m.length);
  const unclippedLoss = new Float64Array(m.length);
  const clippedLoss = new Float64Array(m.length);
  const tokenLoss = new Float64Array(m.length);
  for (let i = 0; i < m.length; i++) {
    if (!m[i]) continue;
    const v = values[i];
    const R = returns[i];
    const hi = oldValues[i] + clip;
    const lo = oldValues[i] - clip;
    const u = Math.min(v, hi);
    const vc = Math.max(u, lo);
    const l1 = (v - R) ** 2;
    const l2 = (vc - R) ** 2;
    const g1 = 2 * (v - R);
    const g2 = 2 * (vc - R) * dMax(u, lo) * dMin(v, hi);
    const dl = l1 > l2 ? g1 : l2 > l1 ? g2 : 0.5 * (g1 + g2);
    tokenLoss[i] = Math.max(l1, l2);
    loss += 0.5 * w(i) * tokenLoss[i];
    dvalues[i] = 0.5 * w(i) * dl + 0; // + 0 turns −0 into 0
    clipped[i] = l2 > l1 ? 1 : 0;
    clippedValues[i] = vc;
    unclippedLoss[i] = l1;
    clippedLoss[i] = l2;
  }
  const metrics = {
    'critic/vf_loss': loss,
    'critic/vf_clipfrac': verlMaskedMeanOf(m, (i) => clipped[i]),
    'critic/vpred_mean': verlMaskedMeanOf(m, (i) => values[i]),
  };
  return { loss, dvalues, metrics, clippedValues, unclippedLoss, clippedLoss, tokenLoss, clippedTaken: clipped };
}
