/**
 * `dewpoint env check --env-program FILE --tasks FILE [--env-argv "CMD ..."] [--step-seconds S]
 * [--max-new N] [--companion URL --token T] [--json]`: the first task's reset and one step of a
 * person's environment program, before a run (worker/episodes/program.ts `previewEnvironment`, the
 * app's Preview): the first context, the base's greedy first action, the program's reply and what
 * it wrote to stderr. A program that fails is reported in the words a run would stop with, and the
 * command exits 1; a usage error exits 2. The sessions run in a companion of this process (or
 * `--companion URL --token T`), as `train --preset grpo-env` runs them.
 */
import { importCheckpoint } from '../../worker/model/checkpoint';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { previewEnvironment } from '../../worker/episodes/program';
import { ENV_PROGRAM_BASE } from '../../worker/presets/table';
import { GRPO_ENV } from '../../worker/train/grpo-episodes';
import { UsageError, bool, num, parseFlags, str, type CommandSpec } from '../args';
import { cliCompanion, cliEnvironment } from '../env-program';

const COMMAND = 'dewpoint env check';

export const ENV_CHECK: CommandSpec = {
  name: 'env check',
  args: '--env-program FILE --tasks FILE',
  summary:
    "an environment program's first reset and one step (the base's greedy first action), before a run: the first " +
    'context, the reply and its stderr, or the failure in the words a run would stop with (exit 1)',
  flags: {
    'env-program': str('FILE', 'the environment program (.py, .js, .mjs or .sh; or any file with --env-argv)'),
    'env-argv': str('CMD', 'the command that starts it (default by its extension, e.g. "python3 -I env.py")'),
    tasks: str('FILE', 'its tasks, a JSONL of {id, prompt, answer?, data?}; the first is checked'),
    'step-seconds': num('S', "the program's deadline for the reset and the step, as a run's stepSeconds (default 10)"),
    'max-new': num('N', "ids of the base's first action at most, EOS included (default grpo-env's maxNew)"),
    companion: str('URL', 'a running companion to open the session in (default: one of this process)'),
    token: str('T', "the running companion's token"),
    json: bool('print the preview as one JSON object on stdout'),
  },
};

export async function envCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check')
    throw new UsageError(
      `dewpoint env: the command is 'env check --env-program FILE --tasks FILE' (run the program's first reset and step), got '${sub ?? ''}'`,
    );
  const f = parseFlags(ENV_CHECK.name, rest, ENV_CHECK.flags);
  const stepSeconds = (f['step-seconds'] as number | undefined) ?? GRPO_ENV.stepSeconds;
  if (!Number.isInteger(stepSeconds) || stepSeconds < 1 || stepSeconds > 600)
    throw new UsageError(`${COMMAND}: --step-seconds must be an integer in 1..600, got ${stepSeconds}`);
  const maxNew = (f['max-new'] as number | undefined) ?? GRPO_ENV.maxNew;
  if (!Number.isInteger(maxNew) || maxNew < 1 || maxNew > 64)
    throw new UsageError(`${COMMAND}: --max-new must be an integer in 1..64, got ${maxNew}`);
  const env = cliEnvironment(f, undefined, false, COMMAND)!;
  const base = importCheckpoint(readCheckpointDir(`public/checkpoints/${ENV_PROGRAM_BASE}`));
  const companion = await cliCompanion(f, COMMAND);
  try {
    process.stderr.write(
      `env check: ${env.program.name} (${env.program.argv.join(' ')}) on ${env.tasks.name}, in ${companion.where}\n`,
    );
    const p = await previewEnvironment(companion.client, { ...env, stepSeconds }, base, maxNew);
    if (f.json) process.stdout.write(`${JSON.stringify(p)}\n`);
    if (!p.ok) {
      process.stderr.write(`env check: the program failed; a run would stop with the same words:\n${p.message}\n`);
      return 1;
    }
    if (!f.json) {
      process.stdout.write(
        `task ${p.task.id} (${p.task.prompt})\n` +
          `reset: the model starts from ${p.context.length} ids: ${p.text}\n` +
          `step: the base's greedy first action ${JSON.stringify(p.action)}: ${p.reply.said}\n` +
          (p.stderr ? `stderr:\n${p.stderr.replace(/^/gm, '  ')}\n` : '') +
          `ok in ${Math.round(p.ms)} ms\n`,
      );
    }
    return 0;
  } finally {
    await companion.close();
  }
}
