/**
 * SampledRollout: draw G completions per prompt and pack them as one-call sessions.
 *
 * Reference: dew `SampledRollout` (docs/rl-core.md "Rollouts and sources"). EOS is a valid action in
 * the response mask but excluded from the reward's text (the PromptSource's rule); a completion
 * that ran out of the token budget is `truncated`, scored, and `truncation` decides whether it
 * trains (default `'score'`, dew's SampledRollout; worker/rl `pack` alone defaults to `'mask'`).
 * The estimator defaults to `'grpo'` (dew's `'group'`). The model, reward, decode, token budget
 * and sampling are the PromptSource's.
 */
import { pack } from '../rl/pack';
import type { PackOptions, PackResult } from '../rl/pack-types';
import type { PromptSource, SampledSession } from './prompt-source';

interface SampledRolloutOptions {
  /** Completions per prompt (G). Default 4 (dew). */
  groups?: number;
  /** Passed to `pack`; `estimator` defaults to `'grpo'` and `truncation` to `'score'`. */
  pack?: PackOptions;
}

export class SampledRollout<T extends { id: string }> {
  readonly groups: number;
  readonly packOptions: PackOptions;

  constructor(
    readonly source: PromptSource<T>,
    options: SampledRolloutOptions = {},
  ) {
    this.groups = options.groups ?? 4;
    if (!Number.isInteger(this.groups) || this.groups < 1)
      throw new Error(`SampledRollout: groups = ${this.groups}; expected an integer ≥ 1`);
    this.packOptions = { estimator: 'grpo', truncation: 'score', ...options.pack };
  }

  /**
   * G sessions per task drawn under policy version `version`, prompt-major (task i's sample j at
   * i·G + j). All are submitted in one tick, so the source draws them as one batch in that order.
   * Rejects with the first failure (a draw or a reward); the others still settle.
   */
  collect(tasks: readonly T[], version: number): Promise<SampledSession[]> {
    return Promise.all(tasks.flatMap((task) => this.source.submit(task, this.groups, { version })));
  }

  /** `pack(sessions, width, …)` with this rollout's pack options, overridden by `options` (e.g. `rows`). */
  pack(sessions: readonly SampledSession[], width: number, options: PackOptions = {}): PackResult {
    return pack(sessions, width, { ...this.packOptions, ...options });
  }
}
