/**
 * A PPO run on arithmetic (ppo-arith): the policy and a critic (the model's value head, a linear
 * map of the last hidden state, zero-initialised) trained together on one loss (dew
 * `PPOObjective`). Per `next()`:
 *
 * 1. P prompts × G completions drawn under the current weights, scored by MathReward (as GRPO).
 * 2. pack without an outcome estimator (every session trains; no zero-advantage masking: a
 *    critic gives each token its own advantage); the terminal reward sits on each completion's
 *    last action token (`tokenRewards`, verl `token_level_rewards`).
 * 3. One scoring pass before any update: old log-probs and old values (verl `old_log_prob`,
 *    `values`).
 * 4. GAE (γ, λ) over each session's action tokens, whitened over the batch (verl
 *    `compute_gae_advantage_return`, `masked_whiten`); returns = un-whitened advantages + values.
 * 5. `epochs` × `miniBatches` optimizer steps of `ppoObjective`: the clipped policy loss plus
 *    c_v · the clipped value loss, one backward pass into both heads, one AdamW.
 *
 * Steps 3–5 are critic.ts `criticUpdate`, the one critic step (the episode run takes it too);
 * the rest is the single-turn run (grpo.ts `SingleTurnRun`).
 *
 * Reference: dew `PPOObjective`, `PPORollout` (λ 0.95, γ 1, value_coefficient 0.5, value_clip
 * 0.2); verl ppo_trainer (critic as a separate model and optimizer: here one, as dew).
 * Not the UI loop (worker/runs) nor the CLI.
 */
import type { Ops } from '../../kernels/ops';
import type { KindServices } from '../episodes/kinds';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type { PpoRunOptions } from '../contract/options';
import { criticOf } from './critic';
import type { GrpoStep } from './grpo';
import { GRPO_ARITH, SingleTurnRun } from './grpo';

/**
 * ppo-arith's options (the form's defaults): GRPO_ARITH's task, sampling, optimizer and policy loss,
 * so the two compare on the same sample budget (16 prompts × 8 completions), truncated completions
 * scored; dew PPORollout's γ 1, λ 0.95, c_v 0.5, value clip 0.2; 2 epochs × 2 mini-batches (the old
 * log-probs and values are a separate pass then).
 */
export const PPO_ARITH: PpoRunOptions = (() => {
  const { advantage: _advantage, maskZeroAdvantage: _mask, ...grpo } = GRPO_ARITH;
  return {
    ...grpo,
    preset: 'ppo-arith',
    truncation: 'score',
    epochs: 2,
    miniBatches: 2,
    gamma: 1,
    lam: 0.95,
    shiftMean: true,
    valueCoefficient: 0.5,
    valueClip: 0.2,
  };
})();

/** A GRPO step's record, its advantages GAE's (whitened), plus the critic's figures. */
interface PpoStep extends GrpoStep {
  /** Per packed id: the critic's value at rollout, the return target and the un-whitened advantage (returns − values). */
  values: Float64Array;
  returns: Float64Array;
}

export class PpoRun extends SingleTurnRun<PpoRunOptions> {
  // No outcome estimator: GAE over the critic's values gives the advantages after packing.
  constructor(ops: Ops, config: PpoRunOptions, base: LoadedCheckpoint, services: KindServices = {}) {
    super(
      ops,
      config,
      base,
      {
        critic: criticOf(config),
        pack: { estimator: 'none', truncation: config.truncation, maskZeroAdvantage: false },
      },
      services,
    );
  }

  override async next(): Promise<PpoStep> {
    const s = await super.next();
    if (!s.values || !s.returns) throw new Error('PpoRun: the critic step gave no values or returns');
    return { ...s, values: s.values, returns: s.returns };
  }
}
