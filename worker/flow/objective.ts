/**
 * The Flow-GRPO objective over recorded SDE transitions, as a pure function (float64): per kept
 * transition (sample i, step k) the PPO-clipped surrogate on the transition's log-prob ratio, with
 * the sample's advantage clipped to ±advClipMax, plus β × Flow-GRPO's KL to a frozen reference.
 *
 *   A   = clamp(a_i, −advClipMax, advClipMax)
 *   r   = exp(logp − old)
 *   l   = max(−A·r, −A·clip(r, 1 − ε, 1 + ε))
 *   L   = Σ_kept l / n_kept + β · Σ_kept KL / n_kept
 *
 * Reference: yifan123/flow_grpo @ ac4c86e8 `scripts/train_sd3.py` (the "grpo logic": torch.clamp of the
 * advantages, ratio, unclipped/clipped loss, torch.maximum, `policy_loss + beta * kl_loss`; its
 * metrics approx_kl = ½·mean(Δ²), clipfrac = mean(|r − 1| > ε), clipfrac_gt_one, clipfrac_lt_one);
 * dew `FlowGRPOObjective` ("the denominator counts kept stochastic transitions"). flow_grpo takes
 * the mean over a batch per timestep and averages equal-sized timesteps, which is this mean over
 * (sample, step) pairs; zero-advantage samples it filters out, here their rows are masked by the
 * caller (or not packed). No ratio clamp before exp (flow_grpo has none). Gradients follow torch:
 * where the clipped term is strictly larger the gradient is 0, elsewhere −A·r (clamp passes the
 * gradient inside its band and at its bounds, torch.maximum splits ties between equal gradients).
 * clipRange: flow_grpo's and dew's default 1e-4 suits images, whose log-prob is a mean over ~10⁵
 * coordinates; a 2-D point's is a mean over two, so the 2-D run uses 0.05 (run.ts `FLOW_GRPO_2D`).
 */

export interface FlowGrpoOptions {
  /** ε, the ratio band 1 ± ε. Default 1e-4 (flow_grpo `train.clip_range`, dew). */
  clipRange?: number;
  /** Advantages are clipped to ±advClipMax. Default 5 (flow_grpo `train.adv_clip_max`, dew). */
  advClipMax?: number;
  /** KL strength β; 0 needs no `kl`. Default 0 (flow_grpo `train.beta`, dew). */
  beta?: number;
}

export interface FlowGrpoInput {
  /** (N, K) samples × transitions, row-major. */
  rows: number;
  width: number;
  /** log p_θ of each transition under the live weights: the differentiable input. */
  logp: ArrayLike<number>;
  /** The sampler's log-probs (flow_grpo `sample["log_probs"]`). */
  oldLogp: ArrayLike<number>;
  /** One advantage per sample (N), broadcast over its transitions, or one per transition (N, K). */
  advantages: ArrayLike<number>;
  /** 1 on transitions that carry loss (kept stochastic steps of non-zero-advantage samples), else 0. */
  mask: ArrayLike<number>;
  /** Per-transition KL to the frozen reference (sde.ts `transitionKl`); needed when β > 0. */
  kl?: ArrayLike<number>;
}

export interface FlowGrpoOutput {
  loss: number;
  /** ∂L/∂logp per transition (N, K). */
  dlogp: Float64Array;
  /** ∂L/∂KL per transition (N, K): β·mask/n_kept. */
  dkl: Float64Array;
  metrics: Record<string, number>;
  /** Per transition: the ratio r, whether the clipped term won (no gradient), whether |r − 1| > ε. */
  ratio: Float64Array;
  clipped: Float64Array;
  outside: Float64Array;
  /** Per transition, the clipped advantage A it trained with (0 off the mask). */
  advantages: Float64Array;
  /** Kept transitions n_kept, the denominator. */
  transitions: number;
}

export function flowGrpoObjective(input: FlowGrpoInput, options: FlowGrpoOptions = {}): FlowGrpoOutput {
  const eps = options.clipRange ?? 1e-4;
  const advMax = options.advClipMax ?? 5;
  const beta = options.beta ?? 0;
  if (!(eps >= 0)) throw new Error(`flowGrpoObjective: clipRange = ${eps}: expected ≥ 0`);
  if (!(advMax >= 0)) throw new Error(`flowGrpoObjective: advClipMax = ${advMax}: expected ≥ 0`);
  if (!(beta >= 0) || !Number.isFinite(beta))
    throw new Error(`flowGrpoObjective: beta = ${beta}: expected a finite number ≥ 0`);
  const { rows: N, width: K } = input;
  const n = N * K;
  for (const [name, a] of [
    ['logp', input.logp],
    ['oldLogp', input.oldLogp],
    ['mask', input.mask],
  ] as const) {
    if (a.length !== n)
      throw new Error(`flowGrpoObjective: ${name} has ${a.length} entries, expected rows × width = ${N} × ${K}`);
  }
  const perSample = input.advantages.length === N;
  if (!perSample && input.advantages.length !== n)
    throw new Error(
      `flowGrpoObjective: advantages has ${input.advantages.length} entries, expected ${N} (per sample) or ${n} (per transition)`,
    );
  if (beta > 0 && (!input.kl || input.kl.length !== n))
    throw new Error(`flowGrpoObjective: beta = ${beta} needs kl with ${n} entries, got ${input.kl?.length ?? 'none'}`);

  let kept = 0;
  for (let j = 0; j < n; j++) if (input.mask[j]) kept++;
  const w = kept > 0 ? 1 / kept : 0;
  const dlogp = new Float64Array(n);
  const dkl = new Float64Array(n);
  const ratio = new Float64Array(n);
  const clipped = new Float64Array(n);
  const outside = new Float64Array(n);
  const advantages = new Float64Array(n);
  let policy = 0;
  let klSum = 0;
  let approxKl = 0;
  let gtOne = 0;
  let ltOne = 0;
  let clippedCount = 0;
  for (let j = 0; j < n; j++) {
    if (!input.mask[j]) continue;
    const a = Math.min(advMax, Math.max(-advMax, input.advantages[perSample ? Math.floor(j / K) : j]));
    const delta = input.logp[j] - input.oldLogp[j];
    const r = Math.exp(delta);
    const unclipped = -a * r;
    const clippedLoss = -a * Math.min(1 + eps, Math.max(1 - eps, r));
    const strictlyClipped = clippedLoss > unclipped;
    policy += Math.max(unclipped, clippedLoss);
    dlogp[j] = strictlyClipped ? 0 : w * -a * r;
    advantages[j] = a;
    ratio[j] = r;
    clipped[j] = strictlyClipped ? 1 : 0;
    clippedCount += clipped[j];
    outside[j] = Math.abs(r - 1) > eps ? 1 : 0;
    if (r - 1 > eps) gtOne++;
    if (1 - r > eps) ltOne++;
    approxKl += 0.5 * delta * delta;
    if (beta > 0) {
      klSum += input.kl![j];
      dkl[j] = beta * w;
    }
  }
  const policyLoss = policy * w;
  const klLoss = klSum * w;
  const loss = policyLoss + beta * klLoss;
  const metrics: Record<string, number> = {
    'loss/policy': policyLoss,
    'loss/kl': klLoss,
    'loss/total': loss,
    'rl/approx_kl': approxKl * w,
    'rl/clipfrac': (gtOne + ltOne) * w,
    'rl/clipfrac_gt_one': gtOne * w,
    'rl/clipfrac_lt_one': ltOne * w,
    'rl/pg_clipfrac': clippedCount * w,
    'rl/transitions': kept,
  };
  return { loss, dlogp, dkl, metrics, ratio, clipped, outside, advantages, transitions: kept };
}
