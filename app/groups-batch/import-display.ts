/**
 * What the Groups and Batch views say where an imported run (verl rollouts, status `imported`)
 * lacks what a run trained here keeps: a step without sessions has nothing to inspect, and a step
 * without a batch has none for a reason of the dump's, not of the objective's. Text only, from the
 * run's stored import record (worker/interop/verl-import.ts `missing`, `present`); tested in
 * import-display.test.ts.
 */
import type { ImportedRunOptions } from '../../worker/protocol';

/**
 * Why an imported run's steps keep no sessions to inspect (its dump has no token ids), or null
 * when they keep them (a dump with response_ids, or a run trained here: `imported` null).
 */
export function noSessionsText(imported: Pick<ImportedRunOptions, 'present'> | null): string | null {
  if (!imported || imported.present.includes('response_ids')) return null;
  return 'none: the dump has no token ids';
}

/** Why step `step` has no stored batch: for an imported run what its dump lacks, else the objective's reason. */
export function noBatchText(step: number, imported: Pick<ImportedRunOptions, 'present' | 'missing'> | null): string {
  if (!imported)
    return `Step ${step} has no stored batch (only GRPO steps are packed; DPO trains one row per sequence).`;
  if (!imported.present.includes('response_ids'))
    return `Step ${step} has no stored batch: this imported verl dump has no token ids (response_ids), so there is nothing to pack.`;
  const large = imported.missing.find((m) => m.field === 'batch size' && m.view === 'Batch');
  return large
    ? `Step ${step} has no stored batch: ${large.cannot}.`
    : `Step ${step} has no stored batch: it was not stored when this verl dump was imported.`;
}
