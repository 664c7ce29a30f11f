/**
 * `Compat`: which framework's behaviour an option left unset reproduces where verl, TRL and rLLM
 * disagree (docs/rl-formulas.md §11). Every module with a `compat` option imports it from here; each
 * option's JSDoc says what each value selects and which one is the default (verl, except where a
 * module says otherwise). A type only, not a preset table.
 */
export type Compat = 'verl' | 'trl' | 'rllm';

/**
 * `'verl-legacy'`: verl before a formula changed meaning, accepted only by the `compat` options
 * whose JSDoc names it (aggregation's `seq-mean-token-sum-norm`, changed by verl b8d91ef8, #5417).
 * Never a default: the current verl form stays the default everywhere.
 */
export type LegacyCompat = 'verl-legacy';
