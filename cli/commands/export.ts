/**
 * `dewpoint export --config run.json --to verl|trl [--out FILE] [--json]`: the run options the
 * Experiments view shows as "Config as JSON" (checked by the same schema as `train --config`,
 * worker/runs/fields.ts) as a verl launch command or a TRL config constructor
 * (worker/interop), followed by every option the target has no equivalent for. The output is a
 * runnable file (a shell script or Python), the list as comments; `--out FILE` writes the same
 * text there, `--json` prints the whole export (mapped and unmapped options) as JSON instead.
 * Presets the target cannot take (SFT, Flow-GRPO; DPO on verl) end with exit code 1 and the reason.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { RunOptions } from '../../worker/protocol';
import { EXPORT_TARGETS, exportRun, formatUnmapped, type ExportTarget, type TrlExport, type VerlExport } from '../../worker/interop/index';
import { checkRunOptions } from '../../worker/runs/fields';
import { UsageError, parseFlags } from '../args';

/** The run options in `file`, checked by the schema; a usage error names what is wrong. */
export function readRunOptions(file: string): RunOptions {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`dewpoint export: cannot read --config ${file}: ${(e as Error).message}`);
  }
  let options: unknown;
  try {
    options = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`dewpoint export: --config ${file} is not JSON: ${(e as Error).message}`);
  }
  const problems = checkRunOptions(options);
  if (problems.length) throw new UsageError(`dewpoint export: invalid run options in ${file}:\n${problems.map((p) => `  ${p.message}`).join('\n')}`);
  return options as RunOptions;
}

/** The export as a file: the command or the constructor, then the unmapped options as comments. */
export function exportText(options: RunOptions, e: VerlExport | TrlExport): string {
  const notMapped = [`# Not mapped (${e.unmapped.length}):`, ...formatUnmapped(e.unmapped).map((l) => `#   ${l}`)];
  if ('command' in e) {
    return [
      '#!/usr/bin/env bash',
      `# Dewpoint ${options.preset} as a verl launch (keys of verl-project/verl @ 1dda039). Set MODEL_PATH (the exported`,
      '# checkpoint folder), TRAIN_FILES and VAL_FILES (parquet prompts) first.',
      '',
      e.command,
      '',
      ...notMapped,
      '',
    ].join('\n');
  }
  return [`# Dewpoint ${options.preset} as TRL ${e.className} keyword arguments (huggingface/trl @ f2cd577).`, e.python, ...notMapped, ''].join('\n');
}

export function exportCommand(argv: string[]): number {
  const f = parseFlags('export', argv, { config: 'string', to: 'string', out: 'string', json: 'boolean' });
  if (f.config === undefined) throw new UsageError('dewpoint export: --config FILE is required (the run options, as the Experiments view\'s "Config as JSON")');
  if (!EXPORT_TARGETS.includes(f.to as ExportTarget)) throw new UsageError(`dewpoint export: --to must be one of ${EXPORT_TARGETS.join(', ')}, got ${f.to === undefined ? 'nothing' : `'${String(f.to)}'`}`);
  const options = readRunOptions(f.config as string);
  const e = exportRun(options, f.to as ExportTarget);
  if (!e.ok) {
    process.stderr.write(`dewpoint export: cannot export to ${String(f.to)}: ${e.reason}\n`);
    return 1;
  }
  const text = f.json ? `${JSON.stringify(e, null, 2)}\n` : exportText(options, e);
  process.stdout.write(text);
  if (f.out !== undefined) {
    writeFileSync(f.out as string, text);
    process.stderr.write(`export ${options.preset} to ${String(f.to)}: wrote ${String(f.out)} (${e.unmapped.length} options not mapped)\n`);
  }
  return 0;
}
