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
 * `dewpoint export RUN --to verl|skyrl` writes the bundle (worker/interop/bundle.ts): the weights the
 * run ended with (`model/`), the prompts with verl's and SkyRL's keys, the rollouts, `reward.py` (the
 * reward's standard-library twin) with its parity against the run's scores (run here with python3
 * when there is one: `parity.json`), launch.sh (verl's main_ppo; for SkyRL its entrypoint, with the
 * environment skyrl_env.py and skyrl_main.py: worker/interop/skyrl.ts), preflight.json and README.md. A preflight
 * rule that refuses (a head_dim vLLM rejects, a tokenizer it cannot read) ends with exit code 1
 * and the rules named, the bundle written.
 *
 * Presets the target cannot take (SFT, Flow-GRPO; DPO on verl and SkyRL) end with exit code 1 and the reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BUNDLE_TARGETS, bundleFiles, type BundleTarget } from '../../worker/interop/bundle';
import type { RunOptions } from '../../worker/protocol';
import { configText, exportFiles } from '../../worker/interop/files';
import { EXPORT_TARGETS, exportRun, type ExportTarget } from '../../worker/interop/index';
import { withPresetDefaults } from '../../worker/presets/config-import';
import { checkRunOptions } from '../../worker/presets/table';
import { UsageError, bool, parseFlags, str, type CommandSpec } from '../args';
import { readRunFolder, readRunModel } from '../run-folder';

export const EXPORT: CommandSpec = {
  name: 'export',
  args: 'RUN | --config FILE',
  summary:
    'a run folder (dewpoint train --save RUN) as the files verl or TRL start from (rollouts and prompts as parquet ' +
    "and the launch command; GRPO and DPO datasets as JSONL and the config's keyword arguments), or run options " +
    '(--config) as a verl launch command or TRL config, with the options that have no equivalent',
  flags: {
    to: str(
      'verl|trl|skyrl',
      'the target (required); a run folder to verl or skyrl is the whole bundle, weights included',
    ),
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
  const targets = [...new Set([...EXPORT_TARGETS, ...BUNDLE_TARGETS])];
  if (!targets.includes(f.to as never))
    throw new UsageError(
      `dewpoint export: --to must be one of ${targets.join(', ')}, got ${f.to === undefined ? 'nothing' : `'${String(f.to)}'`}`,
    );
  if (run !== undefined) {
    if (f.config !== undefined || f.json)
      throw new UsageError('dewpoint export: give a run folder or --config FILE (with --json), not both');
    const out = (f.out as string | undefined) ?? join(run, String(f.to));
    return f.to === 'trl' ? exportFolder(run, 'trl', out) : exportBundle(run, f.to as BundleTarget, out);
  }
  if (f.to === 'skyrl')
    throw new UsageError('dewpoint export: --to skyrl takes a run folder (dewpoint train --save DIR), not --config');
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

/** `python3 reward.py check parity.jsonl` in the bundle: its JSON report, or why it could not run. */
function parityCheck(out: string): Record<string, unknown> {
  const python = ['/usr/bin/python3', 'python3'].find((p) => p === 'python3' || existsSync(p))!;
  const p = spawnSync(python, ['reward.py', 'check', 'parity.jsonl'], { cwd: out, encoding: 'utf8' });
  if (p.error || (p.status !== 0 && p.status !== 1))
    return { ran: false, why: p.error?.message ?? `${python} exited ${p.status}: ${p.stderr.trim()}` };
  return { ran: true, python, ...(JSON.parse(p.stdout) as Record<string, unknown>) };
}

function exportBundle(run: string, to: BundleTarget, out: string): number {
  const { options, steps } = readRunFolder(run, 'export');
  const b = bundleFiles(options, steps, readRunModel(run), to);
  for (const file of b.files) {
    mkdirSync(dirname(join(out, file.name)), { recursive: true });
    writeFileSync(join(out, file.name), file.bytes);
    process.stdout.write(`${join(out, file.name)}\n`);
  }
  let parityFailed = false;
  if (b.files.some((f) => f.name === 'reward.py')) {
    const report = parityCheck(out);
    writeFileSync(join(out, 'parity.json'), `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${join(out, 'parity.json')}\n`);
    parityFailed = report.ran === true && report.equal !== report.rows;
    process.stderr.write(
      report.ran
        ? `export ${options.preset} to ${to}: reward.py gives Dewpoint's score on ${String(report.equal)} of ${String(report.rows)} rollouts\n`
        : `export ${options.preset} to ${to}: reward.py's parity not checked (${String(report.why)})\n`,
    );
  }
  process.stderr.write(`export ${options.preset} to ${to}: ${b.files.length} files in ${out}\n`);
  for (const c of b.refused) process.stderr.write(`dewpoint export: preflight refused (${c.rule}): ${c.detail}\n`);
  return b.refused.length || parityFailed ? 1 : 0;
}
