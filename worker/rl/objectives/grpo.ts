/**
 * `grpoObjective`: the reference library's GRPO composition (dew `GRPOObjective`, arXiv:2402.03300
 * eq. 4; docs/rl-formulas.md §9.1): a registered policy loss times the behavior-correction weights,
 * aggregated over the corrected mask, plus β × a KL to a frozen reference aggregated on its own:
 *
 *   mask' = responseMask · keep(rejection);   c = IS weights (1 without them) · keep(OPSM) · keep(top entropy), each when set
 *   L     = agg(l_pg·c, mask', aggregation) + β · agg(kl(logp, ref), mask', klAggregation) − c_H · E(entropy)
 *   ∂L/∂logp_t = backward_pg(w ⊙ c)_t + β · w_kl,t · ∂kl_t/∂logp_t;   ∂L/∂H_t = −c_H · w_H,t (`dentropy`)
 *
 * Decoupled mode (oldLogp given) compares old with behavior; bypass mode (no oldLogp) uses the
 * behavior log-probs as old and compares sg(logp) with behavior (verl `bypass_mode`). With the
 * defaults and decoupled token-mean this is verl's own composition: `compute_policy_loss_vanilla`
 * + `kl_penalty(low_var_kl)` (`verl/workers/utils/losses.py`), except that verl's KL term keeps
 * the uncorrected mask in bypass mode and dew's (this) applies mask' to both terms. Not the
 * advantages (pack, gae) and not the critic (ppo.ts).
 *
 * The entropy bonus (entropy-bonus.ts, only with `entropyBonus`) is the one term on the entropy
 * rather than the log-probs: its seed `dentropy` goes to the model's backward beside `dlogp`.
 *
 * Metrics: `loss/policy`, `loss/kl`, `loss/total` (and `loss/echo`, `loss/entropy` with the bonus); the loss's own under `rl/`
 * (`rl/pg_clipfrac`, `rl/pg_clipfrac_lower`, `rl/ppo_kl`, ...); `rl/kl` whenever refLogp is given;
 * `rl/entropy` with `entropy`; rolloutCorrection's `mismatch/*` whenever behaviorLogp is given.
 */
import { aggregate, sessionMeanWeights, type AggregationInput, type AggregationOptions } from '../aggregate';
import type { Compat } from '../compat';
import type { IsWeightsOptions } from '../corrections/is-weights';
import type { RejectionThresholds } from '../corrections/rejection';
import { offPolicySequenceMask } from '../corrections/off-policy-sequence-mask';
import { highEntropyMask } from '../entropy-mask';
import { entropyBonus, type EntropyBonusOptions } from '../entropy-bonus';
import { rolloutCorrection, type BypassLossType } from '../corrections/rollout-correction';
import { klPenalty, type KlOptions } from '../kl';
import { aggregatePolicyLoss } from '../losses/aggregate-policy-loss';
import { runPolicyLoss, type PolicyLossSpec } from '../losses/registry';
import { checkFinite, checkTable } from '../table';
import type { ObjectiveInput, ObjectiveOutput } from './types';

export interface GrpoObjectiveOptions {
  /** The policy loss by registry name, with its options. Default `{ name: 'ppo' }`: verl `compute_policy_loss_vanilla`, ε_low = ε_high = 0.2, dual clip 3 (dew `policy_loss="ppo"`). */
  policyLoss?: PolicyLossSpec;
  /** Aggregation of the policy term (and of echo's auxiliary term). Default `{ mode: 'token-mean' }` (verl `loss_agg_mode`, dew `aggregation`). */
  aggregation?: AggregationOptions;
  /** KL strength β ≥ 0. Default 0 (dew and TRL `beta`; verl `use_kl_loss: false`, `kl_loss_coef` 0.001 when on). 0 needs no reference. */
  beta?: number;
  /** KL estimator and clamps. Default `{ estimator: 'k3', compat: 'verl' }` (dew; verl `kl_loss_type: low_var_kl`; TRL: `compat: 'trl'`). */
  kl?: KlOptions;
  /** Aggregation of the KL term. Default `{ mode: 'token-mean' }` (dew "beta × token-mean k3"); verl uses the policy's `loss_agg_mode`. */
  klAggregation?: AggregationOptions;
  /** IS weights from behaviorLogp: a number caps them (TIS), a pair is an IcePop band. Default none (dew `behavior_importance=None`, verl `rollout_is: null`). */
  importance?: IsWeightsOptions;
  /** Rejection masks; dew `sequence_mask` = `seq_sum_k1`, `geometric_mask` = `seq_mean_k1`. Default none (dew, verl `rollout_rs: null`). */
  rejection?: RejectionThresholds;
  /** How bypass mode uses the IS weights. Default `'dew'` (a band only masks, a TIS cap is refused); verl's default is `'ppo_clip'` (metrics only). */
  bypassLossType?: BypassLossType;
  /** Convention of the `mismatch/*` off-policy metrics. Default `'verl'` (`compute_offpolicy_metrics`); `'rllm'`: exact means, current vs behavior. */
  mismatchCompat?: Exclude<Compat, 'trl'>;
  /**
   * TRL's off-policy sequence mask δ (`off_policy_mask_threshold`, corrections/off-policy-sequence-mask.ts): a negative-advantage
   * sequence whose mean `sampler − sg(logp)` exceeds δ loses its policy loss (the denominators keep it). Default none (TRL, verl has none).
   */
  offPolicyMask?: number;
  /**
   * TRL's `top_entropy_quantile` ρ (entropy-mask.ts): only the top-ρ share of the trainable tokens by `entropy` keep their
   * policy loss (a weight: the denominators and the KL term keep them). Needs `input.entropy`. Default none (1 in TRL: every token).
   */
  topEntropyQuantile?: number;
  /**
   * The entropy bonus c_H and how it aggregates the entropy (entropy-bonus.ts): verl `entropy_coeff` ('loss'),
   * TRL `entropy_coef` ('token-mean'). Needs `input.entropy`. Default none (0 in verl and TRL).
   */
  entropyBonus?: EntropyBonusOptions;
}

export interface GrpoObjectiveOutput extends ObjectiveOutput {
  /** The token mass both terms were aggregated over: `responseMask` × the rejection keep (dew mask'). */
  mask: Float64Array;
  /**
   * The per-token IS weights c the policy term was multiplied by (constants, after the TIS cap or
   * the IcePop band, and after batch normalisation), `[rows, width]`: 0 off the response mask, 1 on
   * it where none apply (no `importance`, or bypass `'ppo_clip'`, which only logs them); bypass
   * `'dew'` gives the band's 0/1; times the off-policy sequence mask's and the high-entropy mask's keep when set. Never applied to the KL term.
   */
  correctionWeights: Float64Array;
  /** Per token the rejection options' keep flag (1 kept, 0 rejected; all 1 without `rejection`), `[rows, width]`: mask = responseMask × keep. */
  keep: Float64Array;
  /**
   * With `entropyBonus`: ∂loss/∂H per token, `[rows, width]`, the backward's entropy seed; and H's
   * token mean over the tokens the bonus acts on (NaN: none).
   */
  entropy?: { dentropy: Float64Array; tokenMean: number };
}

/** The aggregation layout of an objective over `mask`, with session-mean weights recomputed from `sessionIds` when given. */
export function objectiveMass(
  input: ObjectiveInput,
  mask: Float64Array,
  options: GrpoObjectiveOptions = {},
): AggregationInput {
  const { rows, width, segmentIds, sessionIds } = input;
  const sessionMean = [options.aggregation, options.klAggregation].some((a) => a?.mode === 'session-mean');
  if (sessionMean && options.rejection && !sessionIds) {
    throw new Error(
      "grpoObjective: session-mean with a rejection mask needs sessionIds (pack's), to recompute the session weights over the kept tokens",
    );
  }
  if (sessionIds) checkTable('sessionIds', sessionIds, rows, width);
  const sessionWeights = sessionIds && sessionMean ? sessionMeanWeights(sessionIds, mask) : input.sessionWeights;
  return { rows, width, mask, segmentIds, sessionWeights };
}

/** Checks every table the objective reads against `[rows, width]`, naming the first that is off. */
export function checkObjectiveInput(
  input: ObjectiveInput,
  extra: Record<string, ArrayLike<number> | undefined> = {},
): void {
  const { rows, width } = input;
  const tables: Record<string, ArrayLike<number> | undefined> = {
    logp: input.logp,
    oldLogp: input.oldLogp,
    behaviorLogp: input.behaviorLogp,
    refLogp: input.refLogp,
    advantages: input.advantages,
    responseMask: input.responseMask,
    segmentIds: input.segmentIds,
    sessionWeights: input.sessionWeights,
    sessionIds: input.sessionIds,
    observationMask: input.observationMask,
    entropy: input.entropy,
    logpDetached: input.logpDetached,
    ...extra,
  };
  for (const [name, a] of Object.entries(tables)) if (a !== undefined) checkTable(name, a, rows, width);
}

export function grpoObjective(input: ObjectiveInput, options: GrpoObjectiveOptions = {}): GrpoObjectiveOutput {
  const { rows, width, logp, oldLogp, behaviorLogp, refLogp, responseMask } = input;
  const beta = options.beta ?? 0;
  if (!(beta >= 0) || !Number.isFinite(beta))
    throw new Error(`grpoObjective: beta = ${beta}: expected a finite number ≥ 0`);
  if (beta > 0 && !refLogp) {
    throw new Error(
      `grpoObjective: beta = ${beta} needs refLogp, the frozen reference's log-probs ([rows, width]); pass refLogp or set beta = 0`,
    );
  }
  if ((options.importance || options.rejection) && !behaviorLogp) {
    throw new Error(
      'grpoObjective: importance weights and rejection masks compare with the sampler; pass behaviorLogp ([rows, width])',
    );
  }
  checkObjectiveInput(input);
  const detached = input.logpDetached ?? logp;
  const metrics: Record<string, number> = {};

  let mask: Float64Array = Float64Array.from(responseMask);
  let correctionWeights: Float64Array | undefined;
  let keep: Float64Array = new Float64Array(rows * width).fill(1);
  if (behaviorLogp) {
    const correction = rolloutCorrection({
      rows,
      width,
      responseMask,
      segmentIds: input.segmentIds,
      behaviorLogp,
      oldLogp,
      logp: detached,
      importance: options.importance,
      rejection: options.rejection,
      bypassLossType: options.bypassLossType ?? 'dew',
      compat: options.mismatchCompat ?? 'verl',
    });
    mask = correction.mask;
    correctionWeights = correction.weights;
    keep = correction.keep;
    Object.assign(metrics, correction.metrics);
  }
  if (options.offPolicyMask !== undefined) {
    // TRL multiplies the per-token policy loss by the mask before its aggregation: a weight, not a change of mass.
    const opsm = offPolicySequenceMask({
      rows,
      width,
      responseMask,
      segmentIds: input.segmentIds,
      logp: detached,
      samplingLogp: behaviorLogp ?? oldLogp ?? detached,
      advantages: input.advantages,
      threshold: options.offPolicyMask,
    });
    const weights = correctionWeights ?? Float64Array.from(responseMask);
    for (let i = 0; i < weights.length; i++) weights[i] *= opsm.keep[i];
    correctionWeights = weights;
    Object.assign(metrics, opsm.metrics);
  }
  let highEntropyKeep: Float64Array | undefined;
  if (options.topEntropyQuantile !== undefined) {
    if (!input.entropy)
      throw new Error(
        `grpoObjective: topEntropyQuantile = ${options.topEntropyQuantile} needs entropy, the policy's per-token entropy ([rows, width])`,
      );
    const high = highEntropyMask({ rows, width, entropy: input.entropy, mask, quantile: options.topEntropyQuantile });
    highEntropyKeep = high.keep;
    const weights = correctionWeights ?? Float64Array.from(responseMask);
    for (let i = 0; i < weights.length; i++) weights[i] *= high.keep[i];
    correctionWeights = weights;
    Object.assign(metrics, high.metrics);
  }
  const mass = objectiveMass(input, mask, options);

  const spec = options.policyLoss ?? { name: 'ppo' };
  const result = runPolicyLoss(spec, {
    rows,
    width,
    logp,
    oldLogp: oldLogp ?? behaviorLogp,
    behaviorLogp,
    advantages: input.advantages,
    mask,
    segmentIds: input.segmentIds,
    observationMask: input.observationMask,
    logpDetached: input.logpDetached,
  });
  const pg = aggregatePolicyLoss(result, mass, options.aggregation, correctionWeights);
  for (const [k, v] of Object.entries(result.metrics)) metrics[`rl/${k}`] = v;
  for (const [k, v] of Object.entries(pg.auxiliaryLoss)) metrics[`loss/${k}`] = v;

  const dlogp = pg.dlogp;
  let klLoss = 0;
  if (refLogp) {
    const kl = klPenalty({ rows, width, logp, refLogp, mask, logpDetached: input.logpDetached }, options.kl);
    const klAgg = aggregate(kl.value, mass, options.klAggregation);
    metrics['rl/kl'] = klAgg.loss;
    if (beta > 0) {
      klLoss = beta * klAgg.loss;
      for (let i = 0; i < dlogp.length; i++)
        if (klAgg.weights[i] !== 0) dlogp[i] += beta * klAgg.weights[i] * kl.dlogp[i];
    }
  }
  if (input.entropy) {
    checkFinite('entropy', input.entropy, width, mask);
    metrics['rl/entropy'] = aggregate(input.entropy, mass, options.aggregation).loss; // verl `actor/entropy`: agg_loss over the mask
  }
  let bonus: ReturnType<typeof entropyBonus> | undefined;
  if (options.entropyBonus) {
    if (!input.entropy)
      throw new Error(
        `grpoObjective: entropyBonus (coef ${options.entropyBonus.coef}) needs entropy, the policy's per-token entropy ([rows, width])`,
      );
    bonus = entropyBonus(input.entropy, mass, options.aggregation, options.entropyBonus, highEntropyKeep);
    metrics['loss/entropy'] = bonus.loss;
    metrics['rl/entropy_coef'] = options.entropyBonus.coef;
  }
  const loss = pg.loss + klLoss + (bonus?.loss ?? 0);
  metrics['loss/policy'] = pg.policyLoss;
  metrics['loss/kl'] = klLoss;
  metrics['loss/total'] = loss;
  return {
    loss,
    dlogp,
    metrics,
    mask,
    correctionWeights: correctionWeights ?? Float64Array.from(responseMask),
    keep,
    ...(bonus ? { entropy: { dentropy: bonus.dentropy, tokenMean: bonus.tokenMean } } : {}),
  };
}
