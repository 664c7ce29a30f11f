/**
 * `dewpoint export RUN --to verl|trl [--out DIR]`: a run folder (`dewpoint train --save RUN`,
 * cli/run-folder.ts) as the files verl or TRL start from (worker/interop/files.ts): verl's
 * rollouts.parquet, train.parquet, val.parquet (the held-out tasks) and launch.sh; TRL's
 * grpo.jsonl, grpo-eval.jsonl, dpo.jsonl and config.py. They go to `--out DIR` (default RUN/verl
 * or RUN/trl), one file each (the app hands the same files over as one .zip).
 *
 * `dewpoint export --config run.json --to verl|trl [--out FILE] [--json]`: only the run options
 * the Experiments view shows as "Config as JSON", or a part of them (completed from the preset's
 * defaults and checked by the same schema as `train --config`, worker/presets/table.ts), as a verl
 * launch command or a TRL config constructor, followed by every option the target has no
 * equivalent for, printed (and written to `--out FILE`); `--json` prints the whole export (mapped
 * and unmapped options) as JSON instead.
 *
 * Presets the target cannot take (SFT, Flow-GRPO; DPO on verl) end with exit code 1 and the reason.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunOptions } from '../../worker/protocol';
import { configText, exportFiles } from '../../worker/interop/files';
import { EXPORT_TARGETS, exportRun, type ExportTarget } from '../../worker/interop/index';
import { withPresetDefaults } from '../../worker/presets/config-import';
import { checkRunOptions } from '../../worker/presets/table';
import { UsageError, bool, parseFlags, str, type CommandSpec } from '../args';
import { readRunFolder } from '../run-folder';

export const EXPORT: CommandSpec = {
  name: 'export',
  args: 'RUN | --config FILE',
  summary:
    'a run folder (dewpoint train --save RUN) as the files verl or TRL start from (rollouts and prompts as parquet ' +
    "and the launch command; GRPO and DPO datasets as JSONL and the config's keyword arguments), or run options " +
    '(--config) as a verl launch command or TRL config, with the options that have no equivalent',
  flags: {
    to: str('verl|trl', 'the target (required)'),
    out: str('DIR|FILE', 'where the files go (default RUN/verl or RUN/trl); with --config, a file for what it prints'),
    config: str('FILE', 'run options ("Config as JSON", or a part of them) instead of a run folder'),
    json: bool('with --config: print the whole export (mapped and unmapped options) as JSON'),
  },
};

/** The run options in `file` (a partial config completed from its preset's defaults), checked by the schema; a usage error names what is wrong. */
function readRunOptions(file: string): RunOptions {
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
  // A partial config takes its preset's defaults for the rest, as `train --config` and the app's import do.
  const complete = withPresetDefaults(options) ?? options;
  const problems = checkRunOptions(complete);
  if (problems.length)
    throw new UsageError(
      `dewpoint export: invalid run options in ${file}:\n${problems.map((p) => `  ${p.message}`).join('\n')}`,
    );
  return complete as RunOptions;
}

export function exportCommand(argv: string[]): number {
  const run = argv[0] !== undefined && !argv[0].startsWith('--') ? argv[0] : undefined;
  const f = parseFlags(EXPORT.name, run === undefined ? argv : argv.slice(1), EXPORT.flags);
  if (!EXPORT_TARGETS.includes(f.to as ExportTarget))
    throw new UsageError(
      `dewpoint export: --to must be one of ${EXPORT_TARGETS.join(', ')}, got ${f.to === undefined ? 'nothing' : `'${String(f.to)}'`}`,
    );
  if (run !== undefined) {
    if (f.config !== undefined || f.json)
      throw new UsageError('dewpoint export: give a run folder or --config FILE (with --json), not both');
    return exportFolder(run, f.to as ExportTarget, (f.out as string | undefined) ?? join(run, String(f.to)));
  }
  if (f.config === undefined)
    throw new UsageError(
      'dewpoint export: a run folder (dewpoint train --save DIR) or --config FILE (the run options, as the Experiments view\'s "Config as JSON") is required',
    );
  const options = readRunOptions(f.config as string);
  const e = exportRun(options, f.to as ExportTarget);
  if (!e.ok) {
    process.stderr.write(`dewpoint export: cannot export to ${String(f.to)}: ${e.reason}\n`);
    return 1;
  }
  const text = f.json ? `${JSON.stringify(e, null, 2)}\n` : configText(options, e);
  process.stdout.write(text);
  if (f.out !== undefined) {
    writeFileSync(f.out as string, text);
    process.stderr.write(
      `export ${options.preset} to ${String(f.to)}: wrote ${String(f.out)} (${e.unmapped.length} options not mapped)\n`,
    );
  }
  return 0;
}

function exportFolder(run: string, to: ExportTarget, out: string): number {
  const { options, steps } = readRunFolder(run, 'export');
  const e = exportFiles(options, steps, to);
  if (!e.ok) {
    process.stderr.write(`dewpoint export: cannot export to ${to}: ${e.reason}\n`);
    return 1;
  }
  mkdirSync(out, { recursive: true });
  for (const file of e.files) {
    writeFileSync(join(out, file.name), file.bytes);
    process.stdout.write(`${join(out, file.name)}\n`);
  }
  const rows = steps.reduce((n, s) => n + s.rows.length, 0);
  process.stderr.write(
    `export ${options.preset} to ${to}: ${steps.length} steps, ${rows} rollouts, ${e.files.length} files in ${out}\n`,
  );
  return 0;
}
