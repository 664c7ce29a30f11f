/**
 * What an export to another framework (verl.ts, trl.ts) says about each Dewpoint option: which key
 * of the target it became (`Mapped`), or why it has none (`Unmapped`). An option never disappears:
 * every leaf of the run options lands in one of the two lists (tested by walking the options),
 * and an option that only partly carries over (an approximation) is in both. Pure data and a
 * small builder; not the translations themselves.
 */

/** One Dewpoint option and the target key (a Hydra override key, a Python keyword) it set. */
export interface Mapped {
  /** Dotted path into the run options (`policyLoss.clipHigh`). */
  path: string;
  /** The option's value (for an option left unset: the default Dewpoint resolved for it). */
  value: unknown;
  /** The target's key (`actor_rollout_ref.actor.clip_ratio_high`, `epsilon_high`). */
  key: string;
  /** The value written there (may differ from `value`: top-k 0 is verl's -1). */
  to: unknown;
  /** Why the value differs, or how close the equivalence is. */
  note?: string;
}

/**
 * `none`: the target has no equivalent (the value is lost, or needs work outside the config).
 * `default`: no key, but the target behaves so already (verl always clamps the log-ratio at ±20).
 * `resolved`: a selector of Dewpoint defaults (`compat`): no key of its own, its effects are
 * exported, or listed, through the options it fills in.
 */
export type UnmappedKind = 'none' | 'default' | 'resolved';

export interface Unmapped {
  path: string;
  value: unknown;
  kind: UnmappedKind;
  reason: string;
  /** The option was left unset: `value` is the default Dewpoint resolved (e.g. from `compat`). */
  unset?: true;
}

/** An export the target cannot take at all (Flow-GRPO, SFT, DPO on verl). */
export interface ExportFailure {
  ok: false;
  reason: string;
}

/** Collects the mapped and unmapped options of one export, in the order they were decided. */
export class MappingLog {
  readonly mapped: Mapped[] = [];
  readonly unmapped: Unmapped[] = [];

  map(path: string, value: unknown, key: string, to: unknown, note?: string): void {
    this.mapped.push(note === undefined ? { path, value, key, to } : { path, value, key, to, note });
  }

  none(path: string, value: unknown, reason: string, unset = false): void {
    this.push(path, value, 'none', reason, unset);
  }

  asDefault(path: string, value: unknown, reason: string, unset = false): void {
    this.push(path, value, 'default', reason, unset);
  }

  /** Every set leaf of `obj` (nested objects too: a GDPO estimator's weights) under `prefix`, as having no equivalent. */
  noneAll(prefix: string, obj: object, reason: string): void {
    for (const { path, value } of optionLeaves(obj, prefix)) if (value !== undefined) this.none(path, value, reason);
  }

  resolved(path: string, value: unknown, reason: string): void {
    this.push(path, value, 'resolved', reason, false);
  }

  private push(path: string, value: unknown, kind: UnmappedKind, reason: string, unset: boolean): void {
    this.unmapped.push(unset ? { path, value, kind, reason, unset: true } : { path, value, kind, reason });
  }
}

/** Every leaf of an options object as a dotted path and its value (an empty object has no leaves). */
export function optionLeaves(options: object, prefix = ''): { path: string; value: unknown }[] {
  return Object.entries(options).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? optionLeaves(v as object, path)
      : [{ path, value: v }];
  });
}

/** The value as the unmapped list shows it: a finite number, or `'none'` for an unbounded default. */
export const bound = (x: number): number | 'none' => (Number.isFinite(x) ? x : 'none');
