/**
 * The OTB step, for every GRPO-family run whose estimator is `otb` (single-turn) or `otb-tir`
 * (episodes): one scoring pass of the packed batch under the current weights for the old log-probs
 * and Σπ² (verl `compute_log_prob` with `calculate_sum_pi_squared`), the rollout corrections'
 * IS weights and rejection mask from them when the run has any (verl applies both before its
 * advantages), OTB's per-token advantages over each prompt group (rl/advantages/otb-packed.ts),
 * then `updateOnBatch` with those old log-probs, so no second pass rescores them. As critic.ts does
 * for PPO's GAE. Not the estimator (rl/advantages/otb.ts) nor the update (update.ts).
 *
 * Reference: verl `compute_advantage` (`verl/trainer/ppo/ray_trainer.py`, verl-project/verl 1dda039),
 * which hands `old_log_probs`, `sum_pi_squared` and `rollout_is_weights` to
 * `compute_optimal_token_baseline_advantage`; docs/rl-formulas.md §3.8.
 */
import type { AdvantageRunOptions } from '../contract/options';
import type { PackedAdvantageDetails, PackedBatch, PackOptions } from '../rl/pack-types';
import { otbPacked } from '../rl/advantages/otb-packed';
import { rolloutCorrection } from '../rl/corrections/rollout-correction';
import type { Session } from '../rl/types';
import type { UpdateContext } from './update';
import { objectiveOptionsOf, scoreBeforeUpdate, updateOnBatch } from './update';

/** A run's OTB: which variant (how members line up) and verl's handle_zero_tail. */
export interface OtbConfig {
  estimator: 'otb' | 'otb-tir';
  handleZeroTail: boolean;
}

/** The run's OTB when its estimator is one (GRPO's shapes), else null (an outcome estimator, or PPO's critic). */
export function otbOf(o: { advantage?: AdvantageRunOptions }): OtbConfig | null {
  const a = o.advantage;
  if (a?.estimator !== 'otb' && a?.estimator !== 'otb-tir') return null;
  return { estimator: a.estimator, handleZeroTail: a.handleZeroTail ?? true };
}

/** How a GRPO-family run packs for its estimator: an outcome estimator runs in pack; OTB's advantages come after scoring (none in pack). */
export function estimatorPacking(a: AdvantageRunOptions): Pick<PackOptions, 'estimator' | 'advantage'> {
  if (a.estimator === 'otb' || a.estimator === 'otb-tir') return { estimator: 'none' };
  const { estimator, ...advantage } = a;
  return { estimator, advantage };
}

/**
 * OTB's update of a batch packed without an estimator (`first`, advantages all 0): score it once
 * (old log-probs and Σπ², renormalised over the support when asked), OTB per prompt group (pack's
 * `(task, group)`) over the trained ids, then updateOnBatch on those advantages and old log-probs.
 * Returns the batch as trained, with OTB's advantages per id, each session's mean advantage and
 * baseline, and the estimator's working for the Groups view.
 */
export async function otbUpdate(ctx: UpdateContext, first: PackedBatch, sessions: readonly Session[], otb: OtbConfig) {
  const c = ctx.config;
  const scored = await scoreBeforeUpdate(ctx, first, true);
  const oldLogp = Float64Array.from(scored.logp);
  const { importance, rejection } = objectiveOptionsOf(c);
  const correction =
    importance || rejection
      ? rolloutCorrection({
          rows: first.rows,
          width: first.width,
          responseMask: first.responseMask,
          segmentIds: first.segmentIds,
          behaviorLogp: first.behaviorLogProbs,
          oldLogp,
          importance,
          rejection,
        })
      : null;
  const o = otbPacked(
    {
      rows: first.rows,
      width: first.width,
      sessionIds: first.sessionIds,
      callIndex: first.callIndex,
      responseMask: first.responseMask,
      ...(correction ? { mask: correction.mask } : {}),
      tokenRewards: first.tokenRewards,
      oldLogp,
      sumPiSquared: scored.sumPiSquared!,
      ...(importance && correction ? { isWeights: correction.weights } : {}),
      groupOf: (i) => JSON.stringify([sessions[i].task, sessions[i].group]),
    },
    { handleZeroTail: otb.handleZeroTail, align: otb.estimator === 'otb-tir' ? 'token' : 'position' },
  );
  const details: PackedAdvantageDetails = {
    estimator: otb.estimator,
    settings: { ...o.settings, isWeights: importance !== undefined, rejection: rejection !== undefined },
    groups: o.groups,
    baselines: Float64Array.from(sessions, (_, i) => o.sessionBaselines.get(i) ?? 0),
    batch: null,
  };
  const packed: PackedBatch = {
    ...first,
    advantages: o.advantages,
    sessionAdvantages: Float64Array.from(sessions, (_, i) => o.sessionAdvantages.get(i) ?? 0),
    advantageDetails: details,
  };
  const trained = await updateOnBatch({ ...ctx, oldLogp }, packed);
  return { trained, packed, metrics: otbMetrics(first.responseMask, o.advantages, scored.sumPiSquared!) };
}

/** `otb/*` figures over the trained ids: the advantages' mean, std and range, and the mean Σπ² (1 = a sure policy). */
function otbMetrics(mask: ArrayLike<number>, a: ArrayLike<number>, spi: ArrayLike<number>): Record<string, number> {
  const idx: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1) idx.push(i);
  if (idx.length === 0) return {};
  const mean = idx.reduce((s, i) => s + a[i], 0) / idx.length;
  return {
    'otb/advantages/mean': mean,
    'otb/advantages/std': Math.sqrt(idx.reduce((s, i) => s + (a[i] - mean) ** 2, 0) / idx.length),
    'otb/advantages/min': idx.reduce((m, i) => Math.min(m, a[i]), Infinity),
    'otb/advantages/max': idx.reduce((m, i) => Math.max(m, a[i]), -Infinity),
    'otb/sum_pi_squared/mean': idx.reduce((s, i) => s + spi[i], 0) / idx.length,
  };
}
