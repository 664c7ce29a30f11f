/**
 * The policy-loss and advantage settings a run actually trains with: each option left unset filled
 * in with the default its module gives under its `compat`, by that module's own `*Settings`
 * (worker/rl/losses/*.ts, worker/rl/advantages/*.ts; docs/rl-formulas.md §11). The translators compare these
 * with what verl and TRL can express. `Infinity` stands for "none" (no dual clip, no clamp).
 * Not validation (contract/run-options/), which leaves these options unset.
 */
import type { AdvantageRunOptions, PolicyLossRunOptions } from '../contract/options';
import {
  cispoSettings,
  clipCovSettings,
  dppoSettings,
  droSettings,
  gdpoSettings,
  geoMeanSettings,
  grpoPasskSettings,
  grpoSettings,
  gspoSettings,
  icepopSettings,
  klCovSettings,
  otbSettings,
  ppoSettings,
  reinforcePlusPlusSettings,
  rlooSettings,
  sapoSettings,
  vespoSettings,
} from '../rl/index';

/** Each loss's options resolved by its own module (the defaults live there once), tagged with its name. */
type LossSettings =
  | ({ name: 'ppo' } & ReturnType<typeof ppoSettings>)
  | ({ name: 'gspo' } & ReturnType<typeof gspoSettings>)
  | ({ name: 'cispo' } & ReturnType<typeof cispoSettings>)
  | ({ name: 'dppo_tv' | 'dppo_kl' } & ReturnType<typeof dppoSettings>)
  | ({ name: 'icepop' } & ReturnType<typeof icepopSettings>)
  | ({ name: 'geo_mean' } & ReturnType<typeof geoMeanSettings>)
  | ({ name: 'clip_cov' } & ReturnType<typeof clipCovSettings>)
  | ({ name: 'kl_cov' } & ReturnType<typeof klCovSettings>)
  | ({ name: 'sapo' } & ReturnType<typeof sapoSettings>)
  | ({ name: 'dro' } & ReturnType<typeof droSettings>)
  | ({ name: 'vespo' } & ReturnType<typeof vespoSettings>)
  | { name: 'reinforce' }
  | Extract<PolicyLossRunOptions, { name: 'reinforce_kl' }>;

export function lossSettings(p: PolicyLossRunOptions): LossSettings {
  switch (p.name) {
    case 'ppo':
      return { name: 'ppo', ...ppoSettings(p) };
    case 'gspo':
      return { name: 'gspo', ...gspoSettings(p) };
    case 'cispo':
      return { name: 'cispo', ...cispoSettings(p) };
    case 'dppo_tv':
    case 'dppo_kl':
      return { name: p.name, ...dppoSettings(p) };
    case 'icepop':
      return { name: 'icepop', ...icepopSettings(p) };
    case 'reinforce':
      return { name: 'reinforce' };
    case 'reinforce_kl':
      return p;
    case 'geo_mean':
      return { name: 'geo_mean', ...geoMeanSettings(p) };
    case 'clip_cov':
      return { name: 'clip_cov', ...clipCovSettings(p) };
    case 'kl_cov':
      return { name: 'kl_cov', ...klCovSettings(p) };
    case 'sapo':
      return { name: 'sapo', ...sapoSettings(p) };
    case 'dro':
      return { name: 'dro', ...droSettings(p) };
    case 'vespo':
      return { name: 'vespo', ...vespoSettings(p) };
  }
}

/** Each estimator's options resolved by its own module, tagged with its name. */
type AdvantageSettings =
  | ({ estimator: 'grpo' } & ReturnType<typeof grpoSettings>)
  | ({ estimator: 'rloo' } & ReturnType<typeof rlooSettings>)
  | ({ estimator: 'reinforce++-baseline' } & ReturnType<typeof reinforcePlusPlusSettings>)
  | { estimator: 'gpg' }
  | ({ estimator: 'grpo-passk' } & ReturnType<typeof grpoPasskSettings>)
  | ({ estimator: 'gdpo' } & ReturnType<typeof gdpoSettings>)
  | ({ estimator: 'otb' } & ReturnType<typeof otbSettings>)
  | ({ estimator: 'otb-tir' } & ReturnType<typeof otbSettings>);

export function advantageSettings(a: AdvantageRunOptions): AdvantageSettings {
  switch (a.estimator) {
    case 'grpo':
      return { estimator: 'grpo', ...grpoSettings(a) };
    case 'rloo':
      return { estimator: 'rloo', ...rlooSettings(a) };
    case 'reinforce++-baseline':
      return { estimator: 'reinforce++-baseline', ...reinforcePlusPlusSettings(a) };
    case 'gpg':
      return { estimator: 'gpg' };
    case 'grpo-passk':
      return { estimator: 'grpo-passk', ...grpoPasskSettings(a) };
    case 'gdpo':
      return { estimator: 'gdpo', ...gdpoSettings(a) };
    case 'otb':
      return { estimator: 'otb', ...otbSettings({ handleZeroTail: a.handleZeroTail, align: 'position' }) };
    case 'otb-tir':
      return { estimator: 'otb-tir', ...otbSettings({ handleZeroTail: a.handleZeroTail, align: 'token' }) };
  }
}

/** Whether option `key` of `obj` was set (not left to a resolved default). */
export function isSet(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key) && (obj as Record<string, unknown>)[key] !== undefined;
}
