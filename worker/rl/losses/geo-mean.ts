/**
 * `geo_mean`: GMPO, PPO's clip applied to the geometric mean of a sequence's token ratios, a
 * sequence being a packed chain (a row without `segmentIds`).
 *
 *   d_t = logp_t − old_t (no ±20 clamp);  d̂_t = clamp(d_t, −ε_low, ε_high)   (a clip in log space)
 *   σ_t = sign(A_t);  c_t = σ_t · min(σ_t d_t, σ_t d̂_t)       (the pessimistic side, as PPO's max)
 *   x_i = Σ_{t∈i} m_t c_t / (n_i + 1e-8);  s_i = exp(x_i);  Ā_i = Σ_{t∈i} m_t A_t / (n_i + 1e-8)
 *   verl: L = mean over rows of −Ā_i s_i
 *
 * Here every masked token of chain i carries l_t = −Ā_i s_i, so seq-mean-token-mean aggregation
 * gives verl's mean over sequences (verl forces it; it also counts fully masked rows, whose loss
 * is 0). The ratio couples a chain's tokens (`local: false`): ∂l_u/∂logp_t = −Ā_i s_i ∂c_t/∂d_t /
 * (n_i + 1e-8) for u, t in chain i, with ∂c_t/∂d_t = 1 where the clip does not bind, 0 where it
 * does, ½ at a tie (torch.minimum). A token with A_t = 0 has σ_t = 0: it adds 0 to x_i but counts
 * in n_i (verl). Correction weights multiply l_t per token (their arithmetic mean over a chain
 * under seq-mean-token-mean), where verl multiplies by their geometric mean per sequence.
 *
 * Reference: verl `compute_policy_loss_geo_mean` (verl-project/verl 1dda039,
 * verl/trainer/ppo/core_algos.py, `@register_policy_loss("geo_mean")`), after GMPO (arXiv
 * 2507.20673, callsys/GMPO train_zero_math_gmpo.py). TRL has no such loss. docs/rl-formulas.md §5.8.
 */
import { checkContext, clip, dclip, dmin, verlMean } from './math';
import { coupledResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface GeoMeanOptions {
  /** ε_low: logp − old is clipped below at −ε_low. Default 0.2 (verl `clip_ratio_low`, falling back to `clip_ratio` = 0.2). */
  clipLow?: number;
  /** ε_high: logp − old is clipped above at ε_high. Default `clipLow` (verl `clip_ratio_high` falls back the same way). */
  clipHigh?: number;
}

/** The options with every default filled in (what the loss computes with; the exports compare these). */
export function geoMeanSettings(o: GeoMeanOptions = {}) {
  const clipLow = o.clipLow ?? 0.2;
  return { clipLow, clipHigh: o.clipHigh ?? clipLow };
}

export function geoMeanLoss(ctx: PolicyLossContext, options: GeoMeanOptions = {}): PolicyLossResult {
  const c = checkContext(ctx, 'geo_mean', { old: true });
  const { clipLow, clipHigh } = geoMeanSettings(options);
  const loss = new Float64Array(c.n);
  const a = new Float64Array(c.n); // ∂l_t/∂s_i = −Ā_i
  const b = new Float64Array(c.n); // ∂s_i/∂logp_t
  const seqOf = new Int32Array(c.n).fill(-1);
  const higher = new Float64Array(c.n);
  const lower = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  c.spans.forEach((span, k) => {
    let n = 0;
    let sumC = 0;
    let sumA = 0;
    const dc = new Float64Array(span.end - span.start);
    for (let t = span.start; t < span.end; t++) {
      if (!c.mask[t]) continue;
      const A = c.adv[t];
      const d = c.logp[t] - c.old[t];
      const dh = clip(d, -clipLow, clipHigh);
      const sg = Math.sign(A);
      sumC += sg * Math.min(sg * d, sg * dh);
      dc[t - span.start] = sg * dmin(sg * d, sg * dh, sg, sg * dclip(d, -clipLow, clipHigh));
      sumA += A;
      n += 1;
      higher[t] = d !== dh && A > 0 ? 1 : 0;
      lower[t] = d !== dh && A < 0 ? 1 : 0;
      negKl[t] = -d;
    }
    const s = Math.exp(sumC / (n + 1e-8));
    const meanA = sumA / (n + 1e-8);
    for (let t = span.start; t < span.end; t++) {
      if (!c.mask[t]) continue;
      seqOf[t] = k;
      loss[t] = -meanA * s;
      a[t] = -meanA;
      b[t] = (s * dc[t - span.start]) / (n + 1e-8);
    }
  });
  // verl: pg_clipfrac counts clipped log-ratios with A > 0, pg_clipfrac_lower with A < 0.
  const metrics = {
    pg_clipfrac: verlMean(higher, c.mask),
    pg_clipfrac_lower: verlMean(lower, c.mask),
    ppo_kl: verlMean(negKl, c.mask),
  };
  return coupledResult(loss, seqOf, c.spans.length, a, b, metrics);
}
