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
  ON_POLICY,
  labCorrections,
  labRow,
  labRunOptions,
  labTable,
  parseInjection,
  type LabRow,
} from '../../worker/presets/mismatch-lab';
import { checkRunOptions, findPreset, trainerOf } from '../../worker/presets/table';
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
  const injection = parseInjection(f.inject as string);
  if (!injection.ok) throw new UsageError(`dewpoint lab mismatch: ${injection.message}`);
  const picked = labCorrections(f.corrections === undefined ? undefined : (f.corrections as string).split(','));
  if (!picked.ok) throw new UsageError(`dewpoint lab mismatch: ${picked.message}`);
  const base: GrpoRunOptions = {
    ...(findPreset('grpo-arith')!.defaults as GrpoRunOptions),
    steps: (f.steps as number | undefined) ?? 30,
    seed: (f.seed as number | undefined) ?? 1,
    evalEvery: 0,
    evalN: (f['eval-n'] as number | undefined) ?? 200,
  };
  const checkpoint = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const { ops, info } = await cliBackend(f.backend);
  const inj = injection.injection;
  process.stderr.write(
    `lab mismatch: ${inj.title}, grpo-arith seed ${base.seed}, ${base.steps} steps per run, ${picked.corrections.length} ` +
      `corrections and the on-policy reference, ${describeBackend(info)}\n`,
  );
  const rows: LabRow[] = [];
  // First the on-policy reference, then the injected gap under each correction.
  const runs = [ON_POLICY, ...picked.corrections.map((correction) => ({ injection: inj, correction }))];
  for (const { injection: injected, correction } of runs) {
    const options = labRunOptions(base, injected, correction);
    const problems = checkRunOptions(options);
    if (problems.length)
      throw new Error(`lab mismatch: ${correction.name}: ${problems.map((p) => p.message).join('; ')}`);
    const run = trainerOf(options, { ops, base: checkpoint, services: {}, journal: null });
    const steps: Record<string, number>[] = [];
    try {
      for (let i = 0; i < options.steps; i++) steps.push((await run.next()).metrics);
      const accuracy = (await run.evaluate()).accuracy;
      rows.push(labRow(correction, steps, accuracy));
    } finally {
      run.close?.();
    }
    const r = rows.at(-1)!;
    process.stderr.write(
      `lab mismatch: ${correction.name}: reward ${r.reward.toFixed(3)}, held-out ${r.accuracy.toFixed(3)}, ` +
        `mismatch/kl ${r.kl.toPrecision(3)}, ESS ${r.ess.toPrecision(4)}\n`,
    );
  }
  process.stdout.write(
    f.json
      ? `${JSON.stringify({ injection: inj.text, seed: base.seed, steps: base.steps, rows }, null, 2)}\n`
      : `${inj.title}, grpo-arith, seed ${base.seed}, ${base.steps} steps:\n\n${labTable(rows)}\n`,
  );
  return 0;
}
