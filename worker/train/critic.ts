/**
 * PPO's critic step, one for every run that trains with a critic (ppo-arith's single-turn run,
 * ppo-calc's and ppo-env's episode run): one scoring pass for the old log-probs and values, masked
 * GAE per session over its action ids, then `updateOnBatch` with the critic's targets; and the
 * critic's figures (verl critic/*). Not the update itself (update.ts) nor a run.
 *
 * Reference: dew `PPOObjective`, `PPORollout`; verl `compute_gae_advantage_return`, `masked_whiten`.
 */
import { gae } from '../rl/index';
import type { GrpoFamilyOptions, PpoRunOptions } from '../contract/options';
import type { SessionCritic } from '../contract/records';
import type { PackedBatch } from '../rl/pack-types';
import type { Session } from '../rl/types';
import type { UpdateConfig, UpdateContext } from './update';
import { scoreBeforeUpdate, updateOnBatch } from './update';

/**
 * The critic's options (PPO's shapes: ppo-arith, ppo-calc, ppo-env): GAE's γ and λ, whitening
 * re-centred (verl) or only scaled (`shift_mean=False`), the value loss's weight (dew
 * value_coefficient) and clip range (dew value_clip; verl cliprange_value 0.5).
 */
export type CriticConfig = Pick<PpoRunOptions, 'gamma' | 'lam' | 'shiftMean' | 'valueCoefficient' | 'valueClip'>;

/** A run's critic: its options' when they are PPO's (they have GAE's γ), else null (an outcome estimator's run). */
export function criticOf(o: GrpoFamilyOptions): CriticConfig | null {
  if (!('gamma' in o)) return null;
  const { gamma, lam, shiftMean, valueCoefficient, valueClip } = o;
  return { gamma, lam, shiftMean, valueCoefficient, valueClip };
}

/** Critic metrics of a batch over its action tokens: what verl logs as critic/* and returns/*, and explained variance. */
export function criticMetrics(
  mask: ArrayLike<number>,
  values: ArrayLike<number>,
  returns: ArrayLike<number>,
  advantages: ArrayLike<number>,
): Record<string, number> {
  const idx: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1) idx.push(i);
  const n = idx.length;
  if (n === 0) return {};
  const mean = (f: (i: number) => number) => idx.reduce((s, i) => s + f(i), 0) / n;
  const variance = (f: (i: number) => number) => {
    const m = mean(f);
    return mean((i) => (f(i) - m) ** 2);
  };
  const varReturns = variance((i) => returns[i]);
  const varResidual = variance((i) => returns[i] - values[i]);
  const range = (f: (i: number) => number) =>
    idx.reduce(([lo, hi], i) => [Math.min(lo, f(i)), Math.max(hi, f(i))], [Infinity, -Infinity]);
  const [advMin, advMax] = range((i) => advantages[i]);
  const [retMin, retMax] = range((i) => returns[i]);
  const [valMin, valMax] = range((i) => values[i]);
  return {
    // verl critic/vf_explained_var: 1 − Var(R − V)/Var(R) (population variances, eps 1e-5 as verl).
    'critic/vf_explained_var': 1 - varResidual / (varReturns + 1e-5),
    'critic/values/mean': mean((i) => values[i]),
    'critic/values/min': valMin,
    'critic/values/max': valMax,
    'critic/returns/mean': mean((i) => returns[i]),
    'critic/returns/min': retMin,
    'critic/returns/max': retMax,
    'critic/advantages/mean': mean((i) => advantages[i]),
    'critic/advantages/std': Math.sqrt(variance((i) => advantages[i])),
    'critic/advantages/min': advMin,
    'critic/advantages/max': advMax,
  };
}

/**
 * PPO's update of a batch packed without an outcome estimator (`first`, advantages all 0): one
 * scoring pass under the current weights (old log-probs and values; renormalised over the
 * support when asked), masked GAE per session over its action tokens (an episode's observation
 * ids are off the mask and skipped), then updateOnBatch's critic path. Returns the packed batch
 * with GAE's advantages, the critic's figures per id and per session, and the critic metrics.
 */
export async function criticUpdate(
  ctx: Omit<UpdateContext, 'critic' | 'config'> & { config: UpdateConfig & CriticConfig },
  first: PackedBatch,
  sessions: readonly Session[],
) {
  const c = ctx.config;
  const scored = await scoreBeforeUpdate(ctx, first);
  if (!scored.values) throw new Error('criticUpdate: the model has no value head');
  const values = Float64Array.from(scored.values);
  const g = gae(
    {
      rewards: first.tokenRewards,
      values,
      mask: first.responseMask,
      rows: first.rows,
      width: first.width,
      sessionIds: first.sessionIds,
      callIndex: first.callIndex,
    },
    { gamma: c.gamma, lam: c.lam, whiten: true, shiftMean: c.shiftMean },
  );
  const packed: PackedBatch = { ...first, advantages: g.advantages };
  const critic = {
    oldLogp: Float64Array.from(scored.logp),
    oldValues: values,
    returns: g.returns,
    valueCoefficient: c.valueCoefficient,
    valueClip: c.valueClip,
  };
  const trained = await updateOnBatch({ ...ctx, critic }, packed);
  const raw = g.returns.map((r, i) => (first.responseMask[i] === 1 ? r - values[i] : 0));
  const metrics = {
    ...criticMetrics(first.responseMask, values, g.returns, g.advantages),
    'critic/raw_advantages/mean': mean(raw, first.responseMask),
  };
  const withCritic = sessions.map((s, k): Session => ({
    ...s,
    critic: sessionCritic(first, k, values, g.returns, g.advantages),
  }));
  return { trained, packed, values, returns: g.returns, sessions: withCritic, metrics };
}

/**
 * Session k's critic figures per sampled id, calls in order: its packed positions on the response
 * mask, sorted by call and then by where they lie (a call's ids are contiguous in its chain).
 */
function sessionCritic(
  p: Pick<PackedBatch, 'sessionIds' | 'responseMask' | 'callIndex'>,
  k: number,
  values: ArrayLike<number>,
  returns: ArrayLike<number>,
  advantages: ArrayLike<number>,
): SessionCritic {
  const at: number[] = [];
  for (let i = 0; i < p.sessionIds.length; i++) if (p.sessionIds[i] === k + 1 && p.responseMask[i] === 1) at.push(i);
  at.sort((a, b) => p.callIndex[a] - p.callIndex[b] || a - b);
  return {
    values: at.map((i) => values[i]),
    returns: at.map((i) => returns[i]),
    advantages: at.map((i) => advantages[i]),
  };
}

function mean(x: ArrayLike<number>, mask: ArrayLike<number>): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] !== 1) continue;
    s += x[i];
    n++;
  }
  return n ? s / n : 0;
}
