/**
 * `dewpoint train`'s flag table: what `train` parses (cli/commands/train.ts) and what its `--help`
 * lists (cli/help.ts), one entry per flag with its description. The preset names in the help and
 * in the descriptions come from the preset table (worker/presets/table.ts), never written here.
 * Not the checks of the values: train.ts and the run options' schema make those.
 */
import { PRESETS } from '../../worker/presets/table';
import { bool, num, str, type CommandSpec } from '../args';

const names = (keep: (p: (typeof PRESETS)[number]) => boolean) =>
  PRESETS.filter((p) => p.cli !== null && keep(p))
    .map((p) => p.name)
    .join(', ');
const ENV_PRESETS = names((p) => p.environment === true);
const DATASET_PRESETS = names((p) => p.dataset !== null);
const EPISODE_PRESETS = names((p) => p.episodes !== undefined);

export const TRAIN: CommandSpec = {
  name: 'train',
  args: '',
  summary:
    "RL from a checkpoint with a preset's trainer (GRPO, PPO, DPO, Flow-GRPO): one line of metrics per step on " +
    'stdout (JSON lines with --json), held-out accuracy every --eval-every steps; progress, the run id and ' +
    'what it writes on stderr',
  flags: {
    preset: str('NAME', `the preset to run (below); default ${names(() => true).split(', ')[0]}`),
    config: str(
      'FILE',
      'run options as the Experiments view\'s "Config as JSON", or a part of them completed from its ' +
        "preset's defaults; instead of --preset, and the flags below override its fields",
    ),
    steps: num('N', 'training steps'),
    seed: num('S', 'random seed'),
    lr: num('X', 'learning rate'),
    'max-grad-norm': num('X', 'global gradient-norm clip'),
    prompts: num('P', "prompts sampled per step (the preset's pairs for DPO, groups for Flow-GRPO)"),
    'train-problems': num(
      'N',
      'train on a set of N problems, visited in passes (16: the overfitting check); default: the whole stream',
    ),
    staleness: num('S', 'sample S batches ahead of the trainer (asynchronous rollouts); 0: on-policy'),
    sampler: str('model|thread', 'with --staleness: sample ahead on the trainer thread (model) or on worker threads'),
    'eval-every': num('K', 'evaluate held-out accuracy before the first step and every K steps; 0: never'),
    'eval-n': num('N', "held-out tasks per evaluation (default: the preset's, as in the app)"),
    checkpoint: str(
      'DIR',
      "a Dewpoint checkpoint or a Hugging Face Llama/Mistral folder to start from (default: the preset's base " +
        'in public/checkpoints)',
    ),
    backend: str('auto|webgpu|wasm|cpu', 'where the kernels run; default auto'),
    json: bool('print each step (and each evaluation) as one JSON line: every metric, with health/* flags'),
    journal: str('DIR', `journal every turn there under the run id printed at start (${EPISODE_PRESETS})`),
    save: str(
      'DIR',
      "keep each step's groups and rollouts there, and the weights it ends with (model/), for dewpoint export DIR --to verl|trl|skyrl",
    ),
    dataset: str('FILE', `train on a prompt file (.jsonl or .parquet) instead of the generator (${DATASET_PRESETS})`),
    reward: str('math|exact|regex|code', 'with --dataset: how a completion is scored'),
    'reward-pattern': str('RE', 'with --reward regex: the answer pattern (one capture group, or the whole match)'),
    'held-out': num('N', 'records of --dataset (or tasks of --tasks) kept out of training for evaluation'),
    'env-program': str('FILE', `your environment program (JSON lines over stdin/stdout; ${ENV_PRESETS})`),
    'env-argv': str(
      '"CMD …"',
      'the command that runs --env-program (default by its extension: python3 -I, node --jitless, sh)',
    ),
    tasks: str('FILE', `the environment's tasks, a JSONL of {id, prompt, answer?, data?} (${ENV_PRESETS})`),
    companion: str(
      'URL',
      `run the program's sessions in this companion (with --token) instead of one started in this process (${ENV_PRESETS})`,
    ),
    token: str('T', 'the token --companion URL printed'),
  },
  sections: () => [
    {
      heading: 'presets (dewpoint train --preset NAME, or the "preset" of its --config)',
      lines: PRESETS.filter((p) => p.cli !== null).map(
        (p) => `${p.name.padEnd(13)} ${p.title}${p.base ? ` (base: ${p.base})` : ''}`,
      ),
    },
    ...(PRESETS.some((p) => p.cli === null)
      ? [
          {
            heading: 'presets in the app only',
            lines: PRESETS.filter((p) => p.cli === null).map(
              (p) =>
                `${p.name.padEnd(13)} ${p.title}${p.family === 'sft' ? ' (SFT from the command line: dewpoint pretrain)' : ''}`,
            ),
          },
        ]
      : []),
  ],
};
