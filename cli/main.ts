/**
 * `dewpoint <command>`: the Node entry point (run as `npx dewpoint`, or `npm run bench -- <name>`).
 * Returns the process exit code; usage errors name the command and the allowed values. The help
 * (`--help`, `-h`, after any command too) is written from the commands' flag tables (cli/help.ts).
 */
import { nodeGpu, configureVulkanIcd } from '../kernels/common/node-gpu';
import { selectBackend } from '../kernels/backends/select';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { readFileSync } from 'node:fs';
import { HELP_FLAGS, UsageError, asksForHelp, parseFlags, type CommandSpec } from './args';
import { BENCH, runBench } from './bench/index';
import { EVAL, evalCommand } from './commands/eval';
import { PRETRAIN, pretrain } from './commands/pretrain';
import { trainCommand } from './commands/train';
import { TRAIN } from './commands/train-flags';
import { EPISODES_EXPORT, episodesCommand } from './commands/episodes';
import { ENV_CHECK, envCommand } from './commands/env';
import { COMPANION, companionCommand } from './commands/companion';
import { EXPORT, exportCommand } from './commands/export';
import { AUDIT, auditCommand } from './commands/audit';
import { LAB_MISMATCH, labCommand } from './commands/lab';
import { MODEL_INSPECT, modelCommand } from './commands/model';
import { commandHelp, mainHelp } from './help';

/** `dewpoint info`: no flags. */
const INFO: CommandSpec = {
  name: 'info',
  args: '',
  summary: 'backend info (adapter, limits, features, the Vulkan driver chosen) as JSON',
  flags: {},
};

/** Every command, in the order the help lists them: its table (flags, help) and what runs it. */
const COMMANDS: readonly { spec: CommandSpec; run: (argv: string[]) => number | Promise<number> }[] = [
  { spec: INFO, run: info },
  { spec: BENCH, run: runBench },
  { spec: PRETRAIN, run: pretrain },
  { spec: EVAL, run: evalCommand },
  { spec: TRAIN, run: trainCommand },
  { spec: ENV_CHECK, run: envCommand },
  { spec: EPISODES_EXPORT, run: episodesCommand },
  { spec: COMPANION, run: companionCommand },
  { spec: EXPORT, run: exportCommand },
  { spec: AUDIT, run: auditCommand },
  { spec: LAB_MISMATCH, run: labCommand },
  { spec: MODEL_INSPECT, run: modelCommand },
];
/** The word after `dewpoint` that names a command (`episodes` for `episodes export`). */
const word = (c: CommandSpec) => c.name.split(' ')[0];

/** The package's version (package.json, the one source). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const specs = COMMANDS.map((c) => c.spec);
  if (command === undefined || HELP_FLAGS.includes(command)) {
    process.stdout.write(mainHelp(specs));
    return command === undefined ? 1 : 0;
  }
  if (command === '--version') {
    process.stdout.write(`dewpoint ${version()}\n`);
    return 0;
  }
  const found = COMMANDS.find((c) => word(c.spec) === command);
  if (!found) {
    process.stderr.write(
      `dewpoint: unknown command '${command}'; allowed: ${specs.map(word).join(', ')}\n\n${mainHelp(specs)}`,
    );
    return 2;
  }
  if (asksForHelp(rest, found.spec.flags)) {
    process.stdout.write(commandHelp(found.spec));
    return 0;
  }
  return found.run(rest);
}

async function info(argv: string[]): Promise<number> {
  parseFlags(INFO.name, argv, INFO.flags);
  const icd = configureVulkanIcd();
  const selected = await selectBackend({ gpu: await nodeGpu(), wasm: () => nodeWasmOps() }, 'auto');
  if (!selected.ok) throw new Error(selected.reason);
  console.log(JSON.stringify({ ...selected.info, vulkanIcd: icd }, null, 2));
  return 0;
}
