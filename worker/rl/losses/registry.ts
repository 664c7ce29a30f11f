/**
 * The policy-loss registry: every named loss, looked up by name with its own typed options.
 * Adding a loss is one file exporting `(ctx, options?) => PolicyLossResult` plus one line here.
 *
 * Names follow the reference library and rLLM's registry (docs/rl-core.md "Objectives and losses"):
 * `ppo` is verl `vanilla`, `reinforce` is verl `gpg`. Not the objective: see
 * `aggregatePolicyLoss` for how a result is aggregated, and objectives/grpo.ts (docs/rl-formulas.md
 * §9.1) for the GRPO composition that picks a loss by name.
 */
import { cispoLoss } from './cispo';
import { clipCovLoss } from './clip-cov';
import { dppoKlLoss, dppoTvLoss } from './dppo';
import { droLoss } from './dro';
import { echoLoss } from './echo';
import { geoMeanLoss } from './geo-mean';
import { gspoLoss } from './gspo';
import { icepopLoss } from './icepop';
import { klCovLoss } from './kl-cov';
import { ppoLoss } from './ppo';
import { reinforceLoss } from './reinforce';
import { reinforceKlLoss } from './reinforce-kl';
import { sapoLoss } from './sapo';
import { vespoLoss } from './vespo';
import type { PolicyLossContext, PolicyLossFn, PolicyLossResult } from './types';

export const POLICY_LOSSES = {
  ppo: ppoLoss,
  gspo: gspoLoss,
  cispo: cispoLoss,
  reinforce: reinforceLoss,
  dppo_tv: dppoTvLoss,
  dppo_kl: dppoKlLoss,
  icepop: icepopLoss,
  reinforce_kl: reinforceKlLoss,
  echo: echoLoss,
  geo_mean: geoMeanLoss,
  clip_cov: clipCovLoss,
  kl_cov: klCovLoss,
  sapo: sapoLoss,
  dro: droLoss,
  vespo: vespoLoss,
} as const satisfies Record<string, PolicyLossFn<never>>;

export type PolicyLossName = keyof typeof POLICY_LOSSES;

/** The options object of the loss called `N`. */
export type PolicyLossOptions<N extends PolicyLossName> = NonNullable<Parameters<(typeof POLICY_LOSSES)[N]>[1]>;

/** A loss chosen by name with its options, e.g. `{ name: 'ppo', options: { dualClip: 3 } }`. Default loss: `ppo`. */
export type PolicyLossSpec = { [N in PolicyLossName]: { name: N; options?: PolicyLossOptions<N> } }[PolicyLossName];

export const POLICY_LOSS_NAMES = Object.keys(POLICY_LOSSES) as PolicyLossName[];

export function isPolicyLossName(name: string): name is PolicyLossName {
  return Object.prototype.hasOwnProperty.call(POLICY_LOSSES, name);
}

/** Runs the loss called `name`; an unknown name is refused with the list of known ones. */
export function policyLoss<N extends PolicyLossName>(
  name: N,
  ctx: PolicyLossContext,
  options?: PolicyLossOptions<N>,
): PolicyLossResult {
  if (!isPolicyLossName(name)) {
    throw new Error(`policy loss '${String(name)}' is unknown; expected one of ${POLICY_LOSS_NAMES.join(', ')}`);
  }
  return (POLICY_LOSSES[name] as PolicyLossFn<PolicyLossOptions<N>>)(ctx, options);
}

/** `policyLoss` for a spec object (as a config form or the CLI would hold it). */
export function runPolicyLoss(spec: PolicyLossSpec, ctx: PolicyLossContext): PolicyLossResult {
  return policyLoss(spec.name, ctx, spec.options as never);
}
