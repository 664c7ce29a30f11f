/**
 * `gspo`: PPO clipping on a sequence-level ratio, a sequence being a packed chain.
 *
 *   c_i = Σ_{t∈i} m_t (sg(logp_t) − old_t) / max(n_i, 1)            (no ±20 clamp)
 *   verl:  log s_t = min(logp_t − sg(logp_t) + c_i, cap)  → value min(c_i, cap), gradient local
 *   l_t = max(−A_t s, −A_t clip(s, 1−ε_low, 1+ε_high))           (no dual clip)
 *
 * How the aggregation weight interacts: under verl's stop-gradient the gradient is local,
 * g_t = −A_t s_i 1[c_i ≤ cap] 1[¬clipped], and ∂(Σ w l)/∂logp_t = w_t g_t for any weights. With
 * uniform A and seq-mean-token-mean this is the paper's sequence gradient −A s_i/(n_i B′) (verl
 * forces that aggregation; here the objective chooses it). `compat: 'trl'` is TRL's
 * `importance_sampling_level="sequence"`: s_i = exp(mean log-ratio) with no stop-gradient and no
 * cap, so tokens of a chain share a gradient: ∂(Σ w l)/∂logp_t = (Σ_{u∈i} w_u ∂l_u/∂s) s_i m_t/n_i,
 * which `backward(w)` computes (`local: false`; `dlogp` holds the diagonal ∂l_t/∂logp_t only).
 *
 * References: verl `compute_policy_loss_gspo`, rLLM `gspo` (same math), TRL `GRPOTrainer`
 * (`importance_sampling_level`); docs/rl-formulas.md §5.2. Not the aggregation.
 */
import { checkContext, clip, dclip, dmax, verlMean } from './math';
import type { Compat } from '../compat';
import { localResult, type PolicyLossContext, type PolicyLossResult } from './types';

export interface GspoOptions {
  /** ε_low. Default 0.2 (verl `clip_ratio_low` fallback, TRL `epsilon`, rLLM `eps_clip`); the paper uses 3e-4. */
  clipLow?: number;
  /** ε_high. Default `clipLow` (verl, TRL, rLLM); the paper uses 4e-4. */
  clipHigh?: number;
  /** Cap on log s (verl `clamp(max=10.0)`). Default 10 under `verl`/`rllm`; none under `trl`. */
  logRatioCap?: number;
  /** Default `verl` (= `rllm`). `trl`: the coupled sequence ratio described above. */
  compat?: Compat;
}

/** gspo's result: the registry's, plus the sequence ratio it clipped. */
export interface GspoResult extends PolicyLossResult {
  /**
   * Per token, its sequence's length-normalised log importance ratio, the mean over the chain's
   * masked tokens of logp − old (verl `negative_approx_kl_seq`, before the cap; TRL
   * `log_importance_weights` at sequence level), `[rows, width]`: constant over a chain, 0 off the mask.
   */
  sequenceLogRatio: Float64Array;
  /** Per token, its sequence's ratio s = exp(min(sequenceLogRatio, cap)) (before the clip), `[rows, width]`, 0 off the mask. */
  sequenceRatio: Float64Array;
}

/** The options with every default filled in under their `compat` (what the loss computes with; the exports compare these). */
export function gspoSettings(o: GspoOptions = {}) {
  const compat = o.compat ?? 'verl';
  const clipLow = o.clipLow ?? 0.2;
  return {
    compat,
    clipLow,
    clipHigh: o.clipHigh ?? clipLow,
    logRatioCap: o.logRatioCap ?? (compat === 'trl' ? Infinity : 10),
  };
}

export function gspoLoss(ctx: PolicyLossContext, options: GspoOptions = {}): GspoResult {
  const c = checkContext(ctx, 'gspo', { old: true });
  const { compat, clipLow, clipHigh, logRatioCap: cap } = gspoSettings(options);
  const lo = 1 - clipLow;
  const hi = 1 + clipHigh;
  const loss = new Float64Array(c.n);
  const dlogp = new Float64Array(c.n);
  const dlds = new Float64Array(c.n); // ∂l_t/∂s (trl)
  const clipped = new Float64Array(c.n);
  const negKl = new Float64Array(c.n);
  const sequenceLogRatio = new Float64Array(c.n);
  const sequenceRatio = new Float64Array(c.n);
  const seqOf = new Int32Array(c.n).fill(-1);
  const scale: number[] = []; // s_i·1/n_i for the trl backward
  c.spans.forEach((span, k) => {
    let sum = 0;
    let n = 0;
    for (let i = span.start; i < span.end; i++) {
      if (!c.mask[i]) continue;
      sum += c.det[i] - c.old[i];
      n += 1;
    }
    const ci = sum / Math.max(n, 1);
    let trlSum = 0;
    if (compat === 'trl') {
      for (let i = span.start; i < span.end; i++) if (c.mask[i]) trlSum += c.logp[i] - c.old[i];
    }
    const xTrl = trlSum / Math.max(n, 1);
    scale.push(xTrl <= cap ? Math.exp(Math.min(xTrl, cap)) / Math.max(n, 1) : 0);
    const seqLog = compat === 'trl' ? xTrl : ci; // equal unless a finite-difference check holds sg(logp) apart
    for (let i = span.start; i < span.end; i++) {
      if (!c.mask[i]) continue;
      seqOf[i] = k;
      sequenceLogRatio[i] = seqLog;
      sequenceRatio[i] = Math.exp(Math.min(seqLog, cap));
      const a = c.adv[i];
      const x = compat === 'trl' ? xTrl : c.logp[i] - c.det[i] + ci;
      const s = Math.exp(Math.min(x, cap));
      const ds = x <= cap ? s : 0; // ∂s/∂x
      const l1 = -a * s;
      const l2 = -a * clip(s, lo, hi);
      loss[i] = Math.max(l1, l2);
      dlds[i] = dmax(l1, l2, -a, -a * dclip(s, lo, hi));
      dlogp[i] = compat === 'trl' ? dlds[i] * scale[k] : dlds[i] * ds;
      clipped[i] = l2 > l1 ? 1 : 0;
      negKl[i] = c.old[i] - c.logp[i];
    }
  });
  const metrics = { pg_clipfrac: verlMean(clipped, c.mask), pg_clipfrac_lower: 0, ppo_kl: verlMean(negKl, c.mask) };
  const result = { ...localResult(loss, dlogp, metrics), sequenceLogRatio, sequenceRatio };
  if (compat !== 'trl') return result;
  return {
    ...result,
    local: false,
    backward(weights) {
      const shared = new Float64Array(scale.length);
      for (let i = 0; i < c.n; i++) if (seqOf[i] >= 0 && weights[i] !== 0) shared[seqOf[i]] += weights[i] * dlds[i];
      const g = new Float64Array(c.n);
      for (let i = 0; i < c.n; i++) if (seqOf[i] >= 0) g[i] = shared[seqOf[i]] * scale[seqOf[i]];
      return g;
    },
  };
}
