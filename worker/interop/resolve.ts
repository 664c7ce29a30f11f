/**
 * The policy-loss, advantage and KL settings a run actually trains with: each option left unset
 * filled in with the default its module gives under its `compat` (worker/rl/losses/*.ts,
 * worker/rl/advantages/*.ts, worker/rl/kl.ts; docs/rl-formulas.md §11). The translators compare these
 * with what verl and TRL can express. `Infinity` stands for "none" (no dual clip, no clamp).
 * Not validation (contract/run-options/), which leaves these options unset.
 */
import type { AdvantageRunOptions, CompatName, PolicyLossRunOptions } from '../contract/options';

/** ppo.ts: ε_low 0.2, ε_high = ε_low, dual clip 3 (verl) or none, log-ratio clamp 20 (verl, rllm) or none (trl), δ none. */
interface PpoSettings {
  name: 'ppo';
  compat: CompatName;
  clipLow: number;
  clipHigh: number;
  dualClip: number;
  logRatioClamp: number;
  delta: number;
}
/** gspo.ts: the log of the sequence ratio capped at 10 (verl, rllm) or not (trl). */
interface GspoSettings {
  name: 'gspo';
  compat: CompatName;
  clipLow: number;
  clipHigh: number;
  logRatioCap: number;
}
/** cispo.ts: two-sided clip (verl, rllm) or TRL's absolute cap (default 5). */
interface CispoSettings {
  name: 'cispo';
  compat: CompatName;
  clipLow: number;
  clipHigh: number;
  cap: number;
}
/** dppo.ts: δ_low 0.2, δ_high = δ_low, truncation C 3 (verl) or none (rllm). */
interface DppoSettings {
  name: 'dppo_tv' | 'dppo_kl';
  compat: 'verl' | 'rllm';
  deltaLow: number;
  deltaHigh: number;
  truncation: number;
}
/** icepop.ts: keep α ≤ d ≤ β, defaults 0.5 and 5. */
interface IcepopSettings {
  name: 'icepop';
  alpha: number;
  beta: number;
}

type LossSettings =
  | PpoSettings
  | GspoSettings
  | CispoSettings
  | DppoSettings
  | IcepopSettings
  | { name: 'reinforce' }
  | Extract<PolicyLossRunOptions, { name: 'reinforce_kl' }>;

export function lossSettings(p: PolicyLossRunOptions): LossSettings {
  switch (p.name) {
    case 'ppo': {
      const compat = p.compat ?? 'verl';
      const clipLow = p.clipLow ?? 0.2;
      return {
        name: 'ppo',
        compat,
        clipLow,
        clipHigh: p.clipHigh ?? clipLow,
        dualClip: p.dualClip ?? (compat === 'verl' ? 3 : Infinity),
        logRatioClamp: p.logRatioClamp ?? (compat === 'trl' ? Infinity : 20),
        delta: p.delta ?? Infinity,
      };
    }
    case 'gspo': {
      const compat = p.compat ?? 'verl';
      const clipLow = p.clipLow ?? 0.2;
      return {
        name: 'gspo',
        compat,
        clipLow,
        clipHigh: p.clipHigh ?? clipLow,
        logRatioCap: p.logRatioCap ?? (compat === 'trl' ? Infinity : 10),
      };
    }
    case 'cispo': {
      const clipLow = p.clipLow ?? 0.2;
      return { name: 'cispo', compat: p.compat ?? 'verl', clipLow, clipHigh: p.clipHigh ?? clipLow, cap: p.cap ?? 5 };
    }
    case 'dppo_tv':
    case 'dppo_kl': {
      const compat = p.compat ?? 'verl';
      const deltaLow = p.deltaLow ?? 0.2;
      return {
        name: p.name,
        compat,
        deltaLow,
        deltaHigh: p.deltaHigh ?? deltaLow,
        truncation: p.truncation ?? (compat === 'rllm' ? Infinity : 3),
      };
    }
    case 'icepop':
      return { name: 'icepop', alpha: p.alpha ?? 0.5, beta: p.beta ?? 5 };
    case 'reinforce':
      return { name: 'reinforce' };
    case 'reinforce_kl':
      return p;
  }
}

/** grpo.ts PRESETS, rloo.ts and reinforce-pp.ts defaults. */
type AdvantageSettings =
  | {
      estimator: 'grpo';
      compat: CompatName;
      scale: 'group' | 'batch' | 'none';
      stdType: 'unbiased' | 'population';
      epsilon: number;
      singleton: 'raw' | 'zero';
    }
  | { estimator: 'rloo'; compat: CompatName; singleton: 'raw' | 'zero'; normalize: boolean }
  | { estimator: 'reinforce++-baseline'; compat: 'verl' | 'rllm'; shiftMean: boolean };

const GRPO_DEFAULTS = {
  verl: { stdType: 'unbiased', epsilon: 1e-6, singleton: 'raw' },
  trl: { stdType: 'unbiased', epsilon: 1e-4, singleton: 'zero' },
  rllm: { stdType: 'population', epsilon: 1e-6, singleton: 'raw' },
} as const;

export function advantageSettings(a: AdvantageRunOptions): AdvantageSettings {
  switch (a.estimator) {
    case 'grpo': {
      const compat = a.compat ?? 'verl';
      const d = GRPO_DEFAULTS[compat];
      return {
        estimator: 'grpo',
        compat,
        scale: a.scale ?? 'group',
        stdType: a.stdType ?? d.stdType,
        epsilon: a.epsilon ?? d.epsilon,
        singleton: a.singleton ?? d.singleton,
      };
    }
    case 'rloo': {
      const compat = a.compat ?? 'verl';
      return {
        estimator: 'rloo',
        compat,
        singleton: a.singleton ?? (compat === 'trl' ? 'zero' : 'raw'),
        normalize: a.normalize,
      };
    }
    case 'reinforce++-baseline':
      return { estimator: 'reinforce++-baseline', compat: a.compat ?? 'verl', shiftMean: a.shiftMean ?? true };
  }
}

/** Whether option `key` of `obj` was set (not left to a resolved default). */
export function isSet(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key) && (obj as Record<string, unknown>)[key] !== undefined;
}
