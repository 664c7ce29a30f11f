/**
 * `dewpoint train --preset grpo-arith|grpo-calc|grpo-guess|grpo-code|ppo-arith|ppo-calc|dpo-arith|flowgrpo-2d | --config FILE [--steps N] [--lr X] [--max-grad-norm X] [--prompts P] [--train-problems N] [--checkpoint DIR] [--journal DIR] [--json]`:
 * the GRPO or DPO loop (worker/train/grpo.ts, grpo-episodes.ts, dpo.ts) in Node, printing one line of metrics per step (JSON lines
 * with --json) and held-out accuracy every `--eval-every` steps (and before the first step). The
 * multi-turn presets start from their environment's base (public/checkpoints/calc-base,
 * guess-base) and, with `--journal DIR`, journal every turn there (cli/node-journal.ts) under the
 * run id printed at the start, for `dewpoint episodes export`.
 * `--config` takes the run options as the Experiments view shows them ("Config as JSON"): the
 * same schema (worker/runs/schema.ts) checks them, and the flags override their fields.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importCheckpoint } from '../../worker/model/checkpoint';
import type { DpoRunOptions, FlowRunOptions, GrpoRunOptions, PpoEpisodeRunOptions, PpoRunOptions } from '../../worker/protocol';
import { PPO_ARITH, PpoRun } from '../../worker/train/ppo';
import { FLOW_GRPO_2D, PRETRAIN_DEFAULTS } from '../../worker/flow/index';
import { flowTrainer, type Trainer } from '../../worker/runs/run-manager';
import { dpoConfigOf, dpoOptionsOf, episodeGrpoOptionsOf, episodeRunConfigOf, flowOptionsOf, grpoConfigOf, grpoOptionsOf, ppoConfigOf, ppoEpisodeOptionsOf, ppoOptionsOf } from '../../worker/runs/configs';
import { checkRunOptions } from '../../worker/runs/fields';
import { DPO_ARITH, DpoRun } from '../../worker/train/dpo';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import { GRPO_CALC, GRPO_CODE, GRPO_GUESS, GrpoEpisodeRun, PPO_CALC } from '../../worker/train/grpo-episodes';
import type { EpisodeGrpoRunOptions } from '../../worker/protocol';
import { baseOf } from '../../worker/runs/run-manager';
import { FileJournal } from '../node-journal';
import type { JournalRunFile } from './episodes';
import { RUN_FILE } from './episodes';
import { UsageError, parseFlags } from '../args';
import { cliBackend, describeBackend } from '../backend';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { localCodeGrader } from '../code-grader';

/** The run options of a preset as the CLI starts them (held-out n as the trainer's default, no checkpoints). */
const PRESET_OPTIONS = {
  'grpo-arith': () => grpoOptionsOf(GRPO_ARITH, { evalN: GRPO_ARITH.evalN, checkpointEvery: 0 }),
  'grpo-calc': () => episodeGrpoOptionsOf(GRPO_CALC, { evalN: GRPO_CALC.evalN, checkpointEvery: 0 }),
  'grpo-guess': () => episodeGrpoOptionsOf(GRPO_GUESS, { evalN: GRPO_GUESS.evalN, checkpointEvery: 0 }),
  'grpo-code': () => episodeGrpoOptionsOf(GRPO_CODE, { evalN: GRPO_CODE.evalN, checkpointEvery: 0 }),
  'ppo-arith': () => ppoOptionsOf(PPO_ARITH, { evalN: PPO_ARITH.evalN, checkpointEvery: 0 }),
  'ppo-calc': () => ppoEpisodeOptionsOf(PPO_CALC, { evalN: PPO_CALC.evalN, checkpointEvery: 0 }),
  'dpo-arith': () => dpoOptionsOf(DPO_ARITH, { evalN: DPO_ARITH.evalN, checkpointEvery: 0 }),
  'flowgrpo-2d': () => flowOptionsOf(FLOW_GRPO_2D, PRETRAIN_DEFAULTS, { checkpointEvery: 0 }),
} as const;

/** The options to run: `--config FILE` or the preset's, with the flags written over them, checked by the schema. */
export function cliRunOptions(f: Record<string, string | number | boolean | undefined>): GrpoRunOptions | EpisodeGrpoRunOptions | PpoRunOptions | PpoEpisodeRunOptions | DpoRunOptions | FlowRunOptions {
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
    if (!Object.prototype.hasOwnProperty.call(PRESET_OPTIONS, String(options.preset))) {
      throw new UsageError(`dewpoint train: the config's preset must be one of ${Object.keys(PRESET_OPTIONS).join(', ')}, got '${String(options.preset)}'`);
    }
  } else {
    const name = (f.preset as string | undefined) ?? 'grpo-arith';
    if (!(name in PRESET_OPTIONS)) throw new UsageError(`dewpoint train: --preset must be one of ${Object.keys(PRESET_OPTIONS).join(', ')}, got '${name}'`);
    options = { ...PRESET_OPTIONS[name as keyof typeof PRESET_OPTIONS]() };
  }
  const flagFields: Record<string, string> = { steps: 'steps', seed: 'seed', lr: 'lr', 'max-grad-norm': 'maxGradNorm', 'eval-every': 'evalEvery', 'eval-n': 'evalN', 'train-problems': 'trainProblems' };
  for (const [flag, field] of Object.entries(flagFields)) if (f[flag] !== undefined) options[field] = f[flag];
  if (f.prompts !== undefined) options[options.preset === 'dpo-arith' ? 'pairs' : options.preset === 'flowgrpo-2d' ? 'groups' : 'prompts'] = f.prompts;
  const problems = checkRunOptions(options);
  if (problems.length) throw new UsageError(`dewpoint train: invalid run options:\n${problems.map((p) => `  ${p.message}`).join('\n')}`);
  return options as unknown as GrpoRunOptions | EpisodeGrpoRunOptions | PpoRunOptions | PpoEpisodeRunOptions | DpoRunOptions | FlowRunOptions;
}

export async function trainCommand(argv: string[]): Promise<number> {
  const f = parseFlags('train', argv, { preset: 'string', config: 'string', steps: 'number', checkpoint: 'string', backend: 'string', json: 'boolean', 'eval-every': 'number', 'eval-n': 'number', seed: 'number', lr: 'number', 'max-grad-norm': 'number', prompts: 'number', 'train-problems': 'number', journal: 'string' });
  const options = cliRunOptions(f);
  const name = options.preset;
  const episodic = options.preset === 'grpo-calc' || options.preset === 'grpo-guess' || options.preset === 'grpo-code' || options.preset === 'ppo-calc';
  if (f.journal !== undefined && !episodic) throw new UsageError(`dewpoint train: --journal is for the episode presets (grpo-calc, grpo-guess, grpo-code, ppo-calc), not ${name}`);
  const baseName = baseOf(name);
  if (baseName === null && f.checkpoint !== undefined) throw new UsageError(`dewpoint train: ${name} starts from no checkpoint (its policy is pretrained in the run); drop --checkpoint`);
  const dir = (f.checkpoint as string | undefined) ?? `public/checkpoints/${baseName}`;
  const loaded = baseName === null ? null : importCheckpoint(readCheckpointDir(dir));
  const base = () => loaded!;
  const { ops, info } = await cliBackend(f.backend);
  const print = (x: Record<string, unknown>) =>
    process.stdout.write(`${f.json ? JSON.stringify(x) : Object.entries(x).map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`).join(' ')}\n`);
  let run: DpoRun | GrpoRun | GrpoEpisodeRun | PpoRun | Pick<Trainer, 'next' | 'evaluate'>;
  let steps: number;
  let evalEvery: number;
  let evalN: number;
  // grpo-code grades in this process with the companion's runner (cli/code-grader.ts).
  const local = options.preset === 'grpo-code' ? localCodeGrader() : null;
  if (options.preset === 'grpo-calc' || options.preset === 'grpo-guess' || options.preset === 'grpo-code' || options.preset === 'ppo-calc') {
    const config = episodeRunConfigOf(options);
    const runId = `cli-${name}-${Date.now().toString(36)}`;
    const journal = f.journal !== undefined ? { journal: new FileJournal(f.journal as string), runId, writer: `${runId}/cli` } : null;
    if (journal) {
      const file: JournalRunFile = { runId, options, checkpoint: dir };
      mkdirSync(journal.journal.runDir(runId), { recursive: true });
      writeFileSync(join(journal.journal.runDir(runId), RUN_FILE), JSON.stringify(file, null, 2));
      process.stderr.write(`train ${name}: journaling every turn to ${f.journal} as run ${runId}\n`);
    }
    run = new GrpoEpisodeRun(ops, config, base(), journal, { codeGrader: local?.grader ?? null });
    ({ steps, evalEvery, evalN } = config);
  } else if (options.preset === 'flowgrpo-2d') {
    // Pretrained by flow matching on the first call (no base checkpoint); the accuracy is the fraction of the ODE preview inside the shape.
    run = flowTrainer(ops, options);
    ({ steps, evalEvery, evalN } = options);
  } else if (options.preset === 'ppo-arith') {
    const config = ppoConfigOf(options, PPO_ARITH);
    run = new PpoRun(ops, config, base());
    ({ steps, evalEvery, evalN } = config);
  } else if (options.preset === 'dpo-arith') {
    const config = dpoConfigOf(options, DPO_ARITH);
    run = new DpoRun(ops, config, base());
    ({ steps, evalEvery, evalN } = config);
  } else {
    const config = grpoConfigOf(options as GrpoRunOptions, GRPO_ARITH);
    run = new GrpoRun(ops, config, base());
    ({ steps, evalEvery, evalN } = config);
  }
  process.stderr.write(`train ${name}: ${describeBackend(info)}, from ${loaded ? dir : 'a policy pretrained in the run'}, ${steps} steps\n`);
  let evaluated = evalN;
  const evaluate = async (step: number) => {
    const ev = await run.evaluate();
    evaluated = ev.n;
    print({ step, 'eval/accuracy': ev.accuracy, 'eval/mean_length': ev.meanLength, 'eval/n': ev.n });
    return ev.accuracy;
  };
  try {
    await trainLoop();
  } finally {
    await local?.close();
  }
  return 0;

  async function trainLoop(): Promise<void> {
    const first = evalEvery > 0 ? await evaluate(0) : NaN;
    let last = first;
    for (let s = 1; s <= steps; s++) {
      const { metrics } = await run.next();
      const keys = ['reward/inside_frac', 'eval/inside_frac', 'rl/pg_clipfrac', 'rl/approx_kl', 'episodes/turns_mean', 'episodes/completed', 'episodes/truncated', 'episodes/error', 'loss/dpo', 'loss/nll_chosen', 'rewards/margins', 'rewards/accuracies', 'reward/mean', 'reward/std', 'reward/frac_reward_zero_std', 'loss/total', 'rl/pg_clipfrac', 'rl/ppo_kl', 'rl/entropy', 'mismatch/kl', 'opt/grad_norm', 'response/mean_length', 'loss/value', 'critic/vf_explained_var', 'critic/vf_clipfrac', 'critic/values/mean', 'critic/returns/mean', 'perf/sample_ms', 'perf/old_logprob_ms', 'perf/ref_ms', 'perf/train_ms', 'perf/tokens_per_s'];
      print({ step: s, ...(f.json ? metrics : Object.fromEntries(keys.filter((k) => k in metrics).map((k) => [k, metrics[k]]))) });
      if (evalEvery > 0 && (s % evalEvery === 0 || s === steps)) last = await evaluate(s);
    }
    if (evalEvery > 0) process.stderr.write(`train ${name}: held-out accuracy ${(first * 100).toFixed(1)}% -> ${(last * 100).toFixed(1)}% (${evaluated} tasks)\n`);
    if (local) process.stderr.write(`train ${name}: ${local.grader.misses} completions graded, ${local.grader.hits} repeats answered from the cache\n`);
  }
}
