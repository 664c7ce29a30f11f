/**
 * Which dashboard panels are flat by construction for a run's options, and why in words: the
 * dashboard collapses them to that sentence with a button to draw them anyway. Pure, from the
 * options alone (never from the curves: a curve flat by chance is still drawn).
 *
 * Why they are flat (worker/train/update.ts `updateOnBatch`): with one update per batch (1 epoch ×
 * 1 mini-batch) the ratio's denominator is the sampler's own log-probs (the critic's scoring of the
 * same weights for PPO), so the ratio is 1 up to float rounding: nothing is clipped and the policy's
 * KL to the sampling policy (`rl/ppo_kl`) is ~1e-8. Without top-k or top-p the sampler draws from
 * the trainer's own softmax of logits / T (it scores at the sampling temperature, as verl), so the
 * sampler-mismatch KL is 0 and the ESS 1 at any temperature (a 3-step grpo-arith run from the CLI
 * reports rl/pg_clipfrac 0, rl/ppo_kl 8e-9 to 4e-8, mismatch/kl 0 and mismatch/ess 1 + 2e-8). Only
 * the GRPO and PPO families train that way; SFT, DPO and Flow-GRPO panels are never collapsed.
 */
import type { PresetFamily } from '../../worker/protocol';

/** Panel id (dashboard-panels.ts) → the sentence that says why it is flat. */
export type FlatPanels = Record<string, string>;

/** The fields these rules read, as the GRPO- and PPO-family options hold them (each checked before use). */
interface Readable {
  epochs?: unknown;
  miniBatches?: unknown;
  beta?: unknown;
  temperature?: unknown;
  topK?: unknown;
  topP?: unknown;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function flatPanels(options: object | null | undefined, family: PresetFamily | undefined): FlatPanels {
  if (!options || (family !== 'grpo' && family !== 'ppo')) return {};
  const o = options as Readable;
  const flat: FlatPanels = {};
  const oneUpdate = isNumber(o.epochs) && isNumber(o.miniBatches) && o.epochs * o.miniBatches === 1;
  if (oneUpdate) {
    const why = 'one update per batch (1 epoch × 1 mini-batch) trains on the policy that sampled it, so the ratio is 1';
    flat.clip = `flat: this run does not clip; ${why}, never outside the clip range.`;
    if (o.beta === 0) flat.kl = `flat: KL β = 0 (no reference policy), and ${why}: its KL to the sampling policy is 0.`;
  }
  if (isNumber(o.temperature) && o.temperature > 0 && o.topK === 0 && o.topP === 1) {
    const why = 'the sampler draws from the trainer’s own distribution (logits / T, no top-k, no top-p)';
    flat['mismatch-kl'] = `flat: ${why}, so the two differ by float rounding only.`;
    flat.ess = `flat: ${why}, so every importance weight is 1.`;
  }
  return flat;
}
