/**
 * `clip_cov`: PPO's clipped surrogate that also drops the gradient of a few tokens whose
 * advantage and log-probability covary strongly (the entropy-collapse remedy of "The Entropy
 * Mechanism of RL for Reasoning LMs", arXiv 2505.22617).
 *
 *   r = exp(logp − old) (no ±20 clamp);  l1 = −A·r;  l2 = −A·clip(r, 1−ε_low, 1+ε_high)
 *   cov_t = (A_t − mean(A)) · (logp_t − mean(sg logp))           (verl masked means, +1e-8, over the batch)
 *   candidates: m_t = 1, l2 ≤ l1 (PPO's clip does not bind), lb < cov_t < ub
 *   k = max(⌊ratio · Σm⌋, 1) candidates drawn at random get corr_t = 0, the rest 1
 *   l = max(l1, l2) · corr                                         (no dual clip)
 *
 * verl draws the k with `torch.randperm` from the global generator; here the draw is seeded by a
 * hash of the batch (sg logp, old, A, mask), so the same batch always drops the same tokens and
 * a run is reproducible from its seed. cov only selects, so it carries no gradient. The batch is
 * what the objective passes (a mini-batch), as verl's is a micro-batch.
 *
 * Reference: verl `compute_policy_loss_clip_cov` (verl-project/verl 1dda039,
 * verl/trainer/ppo/core_algos.py, `@register_policy_loss("clip_cov")`), after PRIME-RL
 * Entropy-Mechanism-of-RL. TRL has no such loss. docs/rl-formulas.md §5.9.
 */
import { mulberry32 } from '../../../kernels/common/random';
import { checkContext, clip, dclip, dmax, verlMean } from './math';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface ClipCovOptions {
  /** ε_low. Default 0.2 (verl `clip_ratio_low`). */
  clipLow?: number;
  /** ε_high. Default `clipLow` (verl `clip_ratio_high` falls back the same way). */
  clipHigh?: number;
  /** Share of the batch's tokens whose gradient is dropped, at least one (verl `clip_cov_ratio`). Default 2e-4. */
  ratio?: number;
  /** Lower bound lb on the covariance of a candidate (verl `clip_cov_lb`). Default 1. */
  lb?: number;
  /** Upper bound ub on the covariance of a candidate (verl `clip_cov_ub`). Default 5. */
  ub?: number;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function clipCovSettings(o: ClipCovOptions = {}) {
  const clipLow = o.clipLow ?? 0.2;
  return { clipLow, clipHigh: o.clipHigh ?? clipLow, ratio: o.ratio ?? 2e-4, lb: o.lb ?? 1, ub: o.ub ?? 5 };
}

/** A 32-bit FNV-1a hash of the float64 bits of each array at the masked positions: the batch's own seed. */
export function batchSeed(mask: ArrayLike<number>, arrays: ArrayLike<number>[]): number {
  const bits = new DataView(new ArrayBuffer(8));
  let h = 0x811c9dc5;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    for (const a of arrays) {
      bits.setFloat64(0, a[i]);
      for (let j = 0; j < 8; j++) h = Math.imul(h ^ bits.getUint8(j), 0x01000193);
    }
  }
  return h >>> 0;
}

/** Token covariances (A_t − mean A)(sg logp_t − mean sg logp) over the mask, verl masked means (+1e-8). */
export function tokenCovariance(
  adv: ArrayLike<number>,
  logp: ArrayLike<number>,
  mask: ArrayLike<number>,
): Float64Array {
  const meanA = verlMean(adv, mask);
  const meanL = verlMean(logp, mask);
  const cov = new Float64Array(mask.length);
  for (let i = 0; i < mask.length; i++) if (mask[i]) cov[i] = (adv[i] - meanA) * (logp[i] - meanL);
  return cov;
}

export function clipCovLoss(ctx: PolicyLossContext, options: ClipCovOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'clip_cov', { old: true });
  const s = clipCovSettings(options);
  if (!(s.ratio > 0)) throw new Error(`clip_cov: ratio = ${s.ratio}: expected > 0 (verl asserts clip_cov_ratio > 0)`);
  const lo = 1 - s.clipLow;
  const hi = 1 + s.clipHigh;
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  const cov = tokenCovariance(c.adv, c.det, c.mask);
  const candidates: number[] = [];
  let tokens = 0;
  for (let i = 0; i < c.n; i++) {
    if (!c.mask[i]) continue;
    tokens += 1;
    const a = c.adv[i];
    const d = c.logp[i] - c.old[i];
    const r = Math.exp(d);
    const l1 = -a * r;
    const l2 = -a * clip(r, lo, hi);
    loss[i] = Math.max(l1, l2);
    dlogp[i] = dmax(l1, l2, -a * r, -a * r * dclip(r, lo, hi));
    negKl[i] = -d;
    const rd = Math.exp(c.det[i] - c.old[i]); // the clip test at sg(logp), so that selection holds still under differences
    const clippedByOrigin = -a * clip(rd, lo, hi) > -a * rd;
    if (!clippedByOrigin && cov[i] > s.lb && cov[i] < s.ub) candidates.push(i);
  }
  const k = Math.min(Math.max(Math.floor(s.ratio * tokens), 1), candidates.length);
  const rand = mulberry32(batchSeed(c.mask, [c.det, c.old, c.adv]));
  const dropped = new Float64Array(c.n);
  for (let j = 0; j < k; j++) {
    const pick = j + Math.floor(rand() * (candidates.length - j)); // a partial Fisher–Yates shuffle
    [candidates[j], candidates[pick]] = [candidates[pick], candidates[j]];
    const i = candidates[j];
    dropped[i] = 1;
    loss[i] = 0;
    dlogp[i] = 0;
  }
  // verl: pg_clipfrac is the share of dropped tokens (corr == 0), not of PPO-clipped ones.
  return localResult(loss, dlogp, { pg_clipfrac: verlMean(dropped, c.mask), ppo_kl: verlMean(negKl, c.mask) });
}
