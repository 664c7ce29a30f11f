/**
 * `dewpoint <command>`: the Node entry point (run as `npx dewpoint`, or `npm run bench -- <name>`).
 * Returns the process exit code; usage errors name the command and the allowed values.
 */
import { nodeGpu, configureVulkanIcd } from '../kernels/common/node-gpu';
import { selectBackend } from '../kernels/backends/select';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import { UsageError } from './args';
import { BENCHES, runBench } from './bench/index';
import { evalCommand } from './commands/eval';
import { pretrain } from './commands/pretrain';
import { trainCommand } from './commands/train';
import { episodesCommand } from './commands/episodes';
import { companionCommand } from './commands/companion';
import { exportCommand } from './commands/export';
import { modelCommand } from './commands/model';
import { envCommand } from './commands/env';

const USAGE = `usage: dewpoint <command>

commands:
  info                         backend info (adapter, limits, features) as JSON
  bench <name> [--json]        benchmarks; names: ${Object.keys(BENCHES).join(', ')}
    --runs N                   timed runs per measurement (median), default depends on the bench
  pretrain [--task arith|calc|guess] [--backend auto|webgpu|wasm|cpu] [--out DIR] [--steps N] [--target ACC] [--min-lr X] [--max-grad-norm X] [--from DIR --out DIR] [--warmup N] [--json]
                               SFT on arithmetic; writes the base checkpoint when held-out accuracy >= ACC
  eval --checkpoint DIR [--task arith] [--n 500] [--backend ...] [--json]
                               held-out exact-match accuracy (greedy) and mean completion length
  train --preset grpo-arith|grpo-calc|grpo-guess|grpo-code|ppo-arith|ppo-calc|dpo-arith|flowgrpo-2d | --config FILE
        [--steps N] [--lr X] [--seed S] [--prompts P] [--train-problems N] [--max-grad-norm X]
        [--staleness S [--sampler model|thread]] [--dataset FILE --reward math|exact|regex|code] [--checkpoint DIR]
        [--journal DIR] [--save DIR] [--backend ...] [--eval-every K] [--eval-n N] [--json]
                               GRPO or DPO from a checkpoint (default: the preset's base in public/checkpoints); metrics per step;
                               --journal DIR journals every turn of a multi-turn preset
  env check --env-program FILE --tasks FILE [--env-argv CMD] [--step-seconds S] [--companion URL --token T] [--json]
                               an environment program's first reset and one step (the base's greedy action), before a run
  episodes export --journal DIR [--run ID] [--out FILE]
                               a journaled run's episodes as JSONL (one line per episode)
  companion [--port 8787] [--workers N] [--queue N] [--origin URL[,URL]] [--max-body BYTES]
                               the local sandbox server: runs programs for the app, on 127.0.0.1, behind a printed token
  export RUN --to verl|trl [--out DIR]
                               a run folder (train --save RUN) as the files verl or TRL start from: rollouts and prompts as parquet
                               and the launch command (verl); GRPO and DPO datasets as JSONL and the config's keyword arguments (TRL)
  export --config FILE --to verl|trl [--out FILE] [--json]
                               run options ("Config as JSON") as a verl launch command or TRL config, and the options with no equivalent
  model inspect DIR [--rows R] [--seq T] [--json]
                               a Hugging Face Llama/Mistral folder before loading it (config.json and safetensors headers only):
                               parameter count, dtypes, config, f32 training memory for a rows × seq batch (default: the SFT batch)
`;

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
  switch (command) {
    case 'info': {
      const icd = configureVulkanIcd();
      const selected = await selectBackend({ gpu: await nodeGpu(), wasm: () => nodeWasmOps() }, 'auto');
      if (!selected.ok) throw new Error(selected.reason);
      console.log(JSON.stringify({ ...selected.info, vulkanIcd: icd }, null, 2));
      return 0;
    }
    case 'bench':
      return runBench(rest);
    case 'pretrain':
      return pretrain(rest);
    case 'eval':
      return evalCommand(rest);
    case 'train':
      return trainCommand(rest);
    case 'episodes':
      return episodesCommand(rest);
    case 'env':
      return envCommand(rest);
    case 'companion':
      return companionCommand(rest);
    case 'export':
      return exportCommand(rest);
    case 'model':
      return modelCommand(rest);
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(
        `dewpoint: unknown command '${command}'; allowed: info, bench, pretrain, eval, train, env, episodes, companion, export, model\n\n${USAGE}`,
      );
      return 2;
  }
}
