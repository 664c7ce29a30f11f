/**
 * `dewpoint lab mismatch --inject bf16|stale:K|temperature:T`: the mismatch lab
 * (worker/presets/mismatch-lab.ts). grpo-arith from the shipped base, the same seed: once
 * on-policy (the reference), then with the injected gap once per behaviour correction; one row per run: the reward over the last 5
 * steps, the held-out greedy accuracy after the last step, `mismatch/kl`, the ESS and the share the
 * correction masked or capped, as a Markdown table (or JSON with `--json`). Each run is the
 * trainer `dewpoint train` drives (worker/presets/table.ts `trainerOf`), stepped here.
 */
import { importCheckpoint } from '../../worker/model/checkpoint';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import type { GrpoRunOptions } from '../../worker/protocol';
import {
  INJECTION_FORMS,
  LAB_CORRECTIONS,
  labCorrectionOf,
  labCorrections,
  labPlan,
  labRow,
  labTable,
  parseInjection,
  type LabRow,
} from '../../worker/presets/mismatch-lab';
import { findPreset, trainerOf } from '../../worker/presets/table';
import { UsageError, bool, num, parseFlags, str, type CommandSpec } from '../args';
import { cliBackend, describeBackend } from '../backend';

export const LAB_MISMATCH: CommandSpec = {
  name: 'lab mismatch',
  args: '--inject KIND',
  summary:
    'the mismatch lab: grpo-arith with a known sampler/trainer gap injected, once per behaviour correction (none, TIS, ' +
    "IcePop, verl's token/sequence/geometric masks, TRL's four modes), the same seed; a table of reward, held-out " +
    'accuracy, mismatch/kl, ESS and the share masked or capped',
  flags: {
    inject: str(INJECTION_FORMS.join('|'), 'the gap to inject (required)'),
    steps: num('N', 'training steps of each run (default 30)'),
    seed: num('S', 'the seed of every run (default 1)'),
    corrections: str('A,B,…', `the corrections to run (default all: ${LAB_CORRECTIONS.map((c) => c.name).join(', ')})`),
    'eval-n': num('N', 'held-out problems scored after the last step (default 200)'),
    backend: str('auto|webgpu|wasm|cpu', 'where the kernels run; default auto'),
    json: bool('print the rows as JSON instead of a Markdown table'),
  },
};

export async function labCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'mismatch')
    throw new UsageError(`dewpoint lab: the lab must be 'mismatch', got ${sub === undefined ? 'none' : `'${sub}'`}`);
  const f = parseFlags(LAB_MISMATCH.name, rest, LAB_MISMATCH.flags);
  if (f.inject === undefined)
    throw new UsageError(`dewpoint lab mismatch: --inject is required: ${INJECTION_FORMS.join(', ')}`);
  const base: GrpoRunOptions = {
    ...(findPreset('grpo-arith')!.defaults as GrpoRunOptions),
    steps: (f.steps as number | undefined) ?? 30,
    seed: (f.seed as number | undefined) ?? 1,
    evalEvery: 0,
    evalN: (f['eval-n'] as number | undefined) ?? 200,
  };
  const names = f.corrections === undefined ? undefined : (f.corrections as string).split(',');
  // Each flag's problem under its own name, then the plan.
  const injection = parseInjection(f.inject as string);
  if (!injection.ok) throw new UsageError(`dewpoint lab mismatch: --inject: ${injection.message}`);
  const corrections = labCorrections(names);
  if (!corrections.ok) throw new UsageError(`dewpoint lab mismatch: --corrections: ${corrections.message}`);
  const p = labPlan(base, f.inject as string, names);
  if (!p.ok) throw new Error(p.message);
  const { plan } = p;
  const checkpoint = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const { ops, info } = await cliBackend(f.backend);
  process.stderr.write(
    `lab mismatch: ${plan.title}, grpo-arith seed ${base.seed}, ${base.steps} steps per run, ${plan.runs.length - 1} ` +
      `corrections and the on-policy reference, ${describeBackend(info)}\n`,
  );
  const rows: LabRow[] = [];
  for (const r of plan.runs) {
    const run = trainerOf(r.options, { ops, base: checkpoint, services: {}, journal: null });
    const steps: Record<string, number>[] = [];
    try {
      for (let i = 0; i < r.options.steps; i++) steps.push((await run.next()).metrics);
      rows.push(labRow(labCorrectionOf(r.correction)!, steps, (await run.evaluate()).accuracy));
    } finally {
      run.close?.();
    }
    const row = rows.at(-1)!;
    process.stderr.write(
      `lab mismatch: ${r.correction}: reward ${row.reward.toFixed(3)}, held-out ${row.accuracy.toFixed(3)}, ` +
        `mismatch/kl ${row.kl.toPrecision(3)}, ESS ${row.ess.toPrecision(4)}\n`,
    );
  }
  process.stdout.write(
    f.json
      ? `${JSON.stringify({ injection: f.inject, seed: base.seed, steps: base.steps, rows }, null, 2)}\n`
      : `${plan.title}, grpo-arith, seed ${base.seed}, ${base.steps} steps:\n\n${labTable(rows)}\n`,
  );
  return 0;
}
