/**
 * grpo-env in the CLI: `--env-program FILE [--env-argv "CMD ..."] --tasks FILE [--held-out N]`
 * read into the run options' `environment` (worker/episodes/program.ts `loadEnvironment` checks
 * both files), and the companion the program's sessions run in: a companion started in this
 * process on 127.0.0.1 (the process runner, a random token, nothing else can call it), or one
 * already running, named by `--companion URL --token T`. A config that records a program
 * (`--config` from a run) keeps its recorded hash, so `--env-program` with a changed file is
 * refused naming both hashes (the schema's check).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ProcessRunner } from '../companion/process-runner';
import { startCompanion } from '../companion/server';
import { CompanionClient } from '../worker/companion-client/client';
import type { EnvProgramRunOptions } from '../worker/contract/options';
import { argvOf, loadEnvironment } from '../worker/episodes/program';
import { UsageError, type Flags } from './args';

const read = (command: string, flag: string, file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${command}: cannot read --${flag} ${file}: ${(e as Error).message}`);
  }
};

/**
 * The environment the flags give over `current` (the options' own: a config's, which is a run's
 * record when `recorded`, else the preset's example). Without a file flag, `current` (with
 * `--held-out`). With a recorded one, `--env-program` replaces its text and keeps its hash (a
 * changed file is then refused by the schema), and `--tasks` / `--env-argv` replace theirs;
 * otherwise both files are needed.
 */
export function cliEnvironment(
  f: Flags,
  current: EnvProgramRunOptions | undefined,
  recorded: boolean,
  command = 'dewpoint train',
): EnvProgramRunOptions | undefined {
  const heldOut = f['held-out'] as number | undefined;
  if (['env-program', 'env-argv', 'tasks'].every((k) => f[k] === undefined))
    return heldOut === undefined || !current ? current : { ...current, tasks: { ...current.tasks, heldOut } };
  const argv = f['env-argv'] !== undefined ? argvOf(String(f['env-argv'])) : undefined;
  if (argv && argv.length === 0)
    throw new UsageError(`${command}: --env-argv is empty; give the command, e.g. "python3 -I env.py"`);
  const programFile = f['env-program'] as string | undefined;
  const tasksFile = f.tasks as string | undefined;
  // The files given are read over a run's record only; over the example, both are needed.
  const base = recorded ? current : undefined;
  if (!base && (programFile === undefined || tasksFile === undefined))
    throw new UsageError(
      `${command}: an environment program needs --env-program FILE and --tasks FILE (a JSONL of {id, prompt, answer?, data?})`,
    );
  const program =
    programFile !== undefined
      ? { name: basename(programFile), text: read(command, 'env-program', programFile) }
      : { name: base!.program.name, text: base!.program.text };
  const tasks =
    tasksFile !== undefined
      ? { name: basename(tasksFile), text: read(command, 'tasks', tasksFile) }
      : { name: base!.tasks.name, text: base!.tasks.records.map((r) => JSON.stringify(r)).join('\n') };
  const loaded = loadEnvironment({
    program,
    tasks,
    argv: argv ?? (programFile === undefined ? base!.program.argv : undefined),
    heldOut: heldOut ?? (tasksFile === undefined ? base!.tasks.heldOut : undefined),
  });
  if (!loaded.ok) throw new UsageError(`${command}: ${loaded.message}`);
  const env = loaded.environment;
  // A recorded run's hash stays: the schema compares it with the text given and names both.
  return base ? { ...env, program: { ...env.program, sha256: base.program.sha256 } } : env;
}

/** The companion a grpo-env run's sessions open in, and how to let it go. */
interface CliCompanion {
  client: CompanionClient;
  where: string;
  close(): Promise<void>;
}

const ORIGIN = 'http://dewpoint-cli.invalid';

/** `fetch` that sends `origin` as the page's Origin: Node's fetch sends none, and the companion admits only its origins. */
export function fetchWithOrigin(origin: string): typeof fetch {
  return (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), origin } });
}

/** `--companion URL --token T`, or a companion of this process's own on 127.0.0.1 (closed with the run). */
export async function cliCompanion(f: Flags, command = 'dewpoint train'): Promise<CliCompanion> {
  if (f.companion !== undefined) {
    if (f.token === undefined)
      throw new UsageError(`${command}: --companion URL needs --token T (the token it printed)`);
    const client = new CompanionClient(String(f.companion), String(f.token));
    const status = await client.status();
    if (!status.connected)
      throw new UsageError(`${command}: --companion ${String(f.companion)} does not answer: ${status.error}`);
    return { client, where: `the companion at ${String(f.companion)}`, close: async () => {} };
  }
  if (f.token !== undefined) throw new UsageError(`${command}: --token is for --companion URL`);
  const token = randomBytes(24).toString('hex');
  const runner = new ProcessRunner();
  const containment = await runner.probe();
  const companion = await startCompanion(
    {
      runner: { name: 'process', run: runner.run.bind(runner) },
      token,
      origins: [ORIGIN],
      workers: 1,
      queueLimit: 1,
      maxBodyBytes: 8 * 1024 ** 2,
      networkIsolation: containment.networkIsolation,
      containment,
      sessions: { launcher: runner },
    },
    0,
  );
  return {
    client: new CompanionClient(companion.url, token, fetchWithOrigin(ORIGIN)),
    where: `a companion of this process at ${companion.url} (process runner, network ${containment.networkIsolation ? 'isolated' : 'NOT isolated'})`,
    close: () => companion.close(),
  };
}
