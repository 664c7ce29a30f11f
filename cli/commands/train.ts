/**
 * `dewpoint train --preset grpo-arith|dpo-arith | --config FILE [--steps N] [--lr X] [--max-grad-norm X] [--prompts P] [--train-problems N] [--checkpoint DIR] [--json]`:
 * the GRPO or DPO loop (worker/train/grpo.ts, dpo.ts) in Node, printing one line of metrics per step (JSON lines
 * with --json) and held-out accuracy every `--eval-every` steps (and before the first step).
 * `--config` takes the run options as the Experiments view shows them ("Config as JSON"): the
 * same schema (worker/runs/schema.ts) checks them, and the flags override their fields.
 */
import { readFileSync } from 'node:fs';
import { importCheckpoint } from '../../worker/model/checkpoint';
import type { DpoRunOptions, GrpoRunOptions } from '../../worker/protocol';
import { dpoConfigOf, dpoOptionsOf, grpoConfigOf, grpoOptionsOf } from '../../worker/runs/configs';
import { checkRunOptions } from '../../worker/runs/fields';
import { DPO_ARITH, DpoRun } from '../../worker/train/dpo';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import { UsageError, parseFlags } from '../args';
import { cliBackend, describeBackend } from '../backend';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../../worker/model/node-checkpoint-dir';

/** The run options of a preset as the CLI starts them (held-out n as the trainer's default, no checkpoints). */
const PRESET_OPTIONS = {
  'grpo-arith': () => grpoOptionsOf(GRPO_ARITH, { evalN: GRPO_ARITH.evalN, checkpointEvery: 0 }),
  'dpo-arith': () => dpoOptionsOf(DPO_ARITH, { evalN: DPO_ARITH.evalN, checkpointEvery: 0 }),
} as const;

/** The options to run: `--config FILE` or the preset's, with the flags written over them, checked by the schema. */
export function cliRunOptions(f: Record<string, string | number | boolean | undefined>): GrpoRunOptions | DpoRunOptions {
  let options: Record<string, unknown>;
  if (f.config !== undefined) {
    if (f.preset !== undefined) throw new UsageError('dewpoint train: give --preset or --config, not both (the config names its preset)');
    let text: string;
    try {
      text = readFileSync(f.config as string, 'utf8');
    } catch (e) {
      throw new UsageError(`dewpoint train: cannot read --config ${f.config}: ${(e as Error).message}`);
    }
    try {
      options = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`dewpoint train: --config ${f.config} is not JSON: ${(e as Error).message}`);
    }
    if (options.preset !== 'grpo-arith' && options.preset !== 'dpo-arith') {
      throw new UsageError(`dewpoint train: the config's preset must be one of ${Object.keys(PRESET_OPTIONS).join(', ')}, got '${String(options.preset)}'`);
    }
  } else {
    const name = (f.preset as string | undefined) ?? 'grpo-arith';
    if (!(name in PRESET_OPTIONS)) throw new UsageError(`dewpoint train: --preset must be one of ${Object.keys(PRESET_OPTIONS).join(', ')}, got '${name}'`);
    options = { ...PRESET_OPTIONS[name as keyof typeof PRESET_OPTIONS]() };
  }
  const flagFields: Record<string, string> = { steps: 'steps', seed: 'seed', lr: 'lr', 'max-grad-norm': 'maxGradNorm', 'eval-every': 'evalEvery', 'eval-n': 'evalN', 'train-problems': 'trainProblems' };
  for (const [flag, field] of Object.entries(flagFields)) if (f[flag] !== undefined) options[field] = f[flag];
  if (f.prompts !== undefined) options[options.preset === 'dpo-arith' ? 'pairs' : 'prompts'] = f.prompts;
  const problems = checkRunOptions(options);
  if (problems.length) throw new UsageError(`dewpoint train: invalid run options:\n${problems.map((p) => `  ${p.message}`).join('\n')}`);
  return options as unknown as GrpoRunOptions | DpoRunOptions;
}

export async function trainCommand(argv: string[]): Promise<number> {
  const f = parseFlags('train', argv, { preset: 'string', config: 'string', steps: 'number', checkpoint: 'string', backend: 'string', json: 'boolean', 'eval-every': 'number', 'eval-n': 'number', seed: 'number', lr: 'number', 'max-grad-norm': 'number', prompts: 'number', 'train-problems': 'number' });
  const options = cliRunOptions(f);
  const name = options.preset;
  const config = options.preset === 'dpo-arith' ? dpoConfigOf(options, DPO_ARITH) : grpoConfigOf(options, GRPO_ARITH);
  const dir = (f.checkpoint as string | undefined) ?? BASE_CHECKPOINT_DIR;
  const checkpoint = importCheckpoint(readCheckpointDir(dir));
  const { ops, info } = await cliBackend(f.backend);
  const print = (x: Record<string, unknown>) =>
    process.stdout.write(`${f.json ? JSON.stringify(x) : Object.entries(x).map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`).join(' ')}\n`);
  process.stderr.write(`train ${name}: ${describeBackend(info)}, from ${dir}, ${config.steps} steps\n`);
  const run = 'pairs' in config ? new DpoRun(ops, config, checkpoint) : new GrpoRun(ops, config, checkpoint);
  const evaluate = async (step: number) => {
    const ev = await run.evaluate();
    print({ step, 'eval/accuracy': ev.accuracy, 'eval/mean_length': ev.meanLength, 'eval/n': ev.n });
    return ev.accuracy;
  };
  const first = config.evalEvery > 0 ? await evaluate(0) : NaN;
  let last = first;
  for (let s = 1; s <= config.steps; s++) {
    const { metrics } = await run.next();
    const keys = ['loss/dpo', 'loss/nll_chosen', 'rewards/margins', 'rewards/accuracies', 'reward/mean', 'reward/std', 'reward/frac_reward_zero_std', 'loss/total', 'rl/pg_clipfrac', 'rl/ppo_kl', 'rl/entropy', 'mismatch/kl', 'opt/grad_norm', 'response/mean_length', 'perf/sample_ms', 'perf/old_logprob_ms', 'perf/ref_ms', 'perf/train_ms', 'perf/tokens_per_s'];
    print({ step: s, ...(f.json ? metrics : Object.fromEntries(keys.filter((k) => k in metrics).map((k) => [k, metrics[k]]))) });
    if (config.evalEvery > 0 && (s % config.evalEvery === 0 || s === config.steps)) last = await evaluate(s);
  }
  if (config.evalEvery > 0) process.stderr.write(`train ${name}: held-out accuracy ${(first * 100).toFixed(1)}% -> ${(last * 100).toFixed(1)}% (${config.evalN} tasks)\n`);
  return 0;
}
