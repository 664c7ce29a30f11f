/**
 * `echo`: the PPO surrogate on response tokens plus `coefficient` × cross-entropy (−logp) on
 * environment-observation tokens, the latter aggregated by the objective's mode over its own mask.
 *
 * The CE term is returned as an auxiliary term (`name: 'echo'`, mask = `observationMask`,
 * l = −logp, g = −1); the objective adds `coefficient · Σ v_t l_t` with v the aggregation weights
 * over that mask, so its gradient on an observation token is −coefficient·v_t. Behavior
 * corrections multiply the PPO term only. Not the aggregation. Reference: rLLM `echo`
 * (arXiv:2605.24517: `ppo_clip + env_loss_coef · aggregate(−logp, obs_mask)`); docs/rl-formulas.md §5.7.
 */
import { checkFinite, checkTable } from '../table';
import { ppoLoss, type PpoOptions } from './ppo';
import type { PolicyLossContext, PolicyLossResult } from './types';

export interface EchoOptions extends PpoOptions {
  /** Weight of the observation cross-entropy. Default 0.05 (rLLM `env_loss_coef`); 0 gives plain ppo. */
  coefficient?: number;
  // `compat` defaults to `rllm` here (rLLM `ppo_clip`: ±20 clamp, no dual clip); `verl` adds the dual clip.
}

export function echoLoss(ctx: PolicyLossContext, options: EchoOptions = {}): PolicyLossResult {
  const { coefficient = 0.05, ...ppo } = options;
  const result = ppoLoss(ctx, { ...ppo, compat: ppo.compat ?? 'rllm' });
  const obs = ctx.observationMask;
  if (!obs) throw new Error(`policy loss 'echo' needs observationMask ([rows, width])`);
  checkTable('observationMask', obs, ctx.rows, ctx.width);
  checkFinite('logp', ctx.logp, ctx.width, obs);
  const n = ctx.rows * ctx.width;
  const mask = new Float64Array(n);
  const loss = new Float64Array(n);
  const dlogp = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (obs[i] !== 0 && obs[i] !== 1)
      throw new Error(`observationMask[${Math.floor(i / ctx.width)}, ${i % ctx.width}] = ${obs[i]}: expected 0 or 1`);
    if (!obs[i]) continue;
    mask[i] = 1;
    loss[i] = -ctx.logp[i];
    dlogp[i] = -1;
  }
  if (coefficient === 0) return result; // rLLM skips the term
  return {
    ...result,
    metrics: { ...result.metrics, echo_coef: coefficient },
    auxiliary: [{ name: 'echo', coefficient, mask, loss, dlogp }],
  };
}
