/**
 * Export a run's options to another framework: a verl launch command (verl.ts) or TRL keyword
 * arguments (trl.ts), each with the list of options that have no equivalent there. Pure: no
 * files, no validation (callers check the options with worker/presets/table.ts first). SFT and
 * Flow-GRPO export to neither, DPO only to TRL: those give `{ ok: false, reason }`, never a
 * half-empty command.
 */
import type { RunOptions } from '../contract/options';
import { trlConfig, type TrlExport } from './trl';
import type { ExportFailure, Unmapped } from './types';
import { verlCommand, type VerlExport } from './verl';

export { trlConfig, pythonValue, type TrlClassName, type TrlExport } from './trl';
export {
  verlCommand,
  hydraValue,
  NO_DUAL_CLIP,
  VERL_DAPO_ENTRY,
  VERL_ENTRY,
  VERL_KL_TYPE,
  type VerlExport,
} from './verl';
export { optionLeaves, type ExportFailure, type Mapped, type Unmapped, type UnmappedKind } from './types';

export const EXPORT_TARGETS = ['verl', 'trl'] as const;
export type ExportTarget = (typeof EXPORT_TARGETS)[number];

export function exportRun(options: RunOptions, to: 'verl'): VerlExport | ExportFailure;
export function exportRun(options: RunOptions, to: 'trl'): TrlExport | ExportFailure;
export function exportRun(options: RunOptions, to: ExportTarget): VerlExport | TrlExport | ExportFailure;
export function exportRun(options: RunOptions, to: ExportTarget): VerlExport | TrlExport | ExportFailure {
  return to === 'verl' ? verlCommand(options) : trlConfig(options);
}

const KIND_LABEL = { none: 'no equivalent', default: 'target default', resolved: 'resolved' } as const;

/** One line per unmapped option: `policyLoss.logRatioClamp = 20 (unset) [no equivalent]: why`. */
export function formatUnmapped(list: readonly Unmapped[]): string[] {
  return list.map(
    (u) =>
      `${u.path} = ${typeof u.value === 'string' ? u.value : JSON.stringify(u.value)}${u.unset ? ' (unset)' : ''} [${KIND_LABEL[u.kind]}]: ${u.reason}`,
  );
}
