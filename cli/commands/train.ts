/**
 * `dewpoint train --preset grpo-arith|dpo-arith [--steps N] [--lr X] [--max-grad-norm X] [--prompts P] [--checkpoint DIR] [--json]`:
 * the GRPO or DPO loop (worker/train/grpo.ts, dpo.ts) in Node, printing one line of metrics per step (JSON lines
 * with --json) and held-out accuracy every `--eval-every` steps (and before the first step).
 */
import { importCheckpoint } from '../../worker/model/checkpoint';
import { DPO_ARITH, DpoRun } from '../../worker/train/dpo';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import { UsageError, parseFlags } from '../args';
import { cliBackend, describeBackend } from '../backend';
import { readCheckpointDir } from '../checkpoint-dir';

const PRESETS = { 'grpo-arith': GRPO_ARITH, 'dpo-arith': DPO_ARITH } as const;

export async function trainCommand(argv: string[]): Promise<number> {
  const f = parseFlags('train', argv, { preset: 'string', steps: 'number', checkpoint: 'string', backend: 'string', json: 'boolean', 'eval-every': 'number', 'eval-n': 'number', seed: 'number', lr: 'number', 'max-grad-norm': 'number', prompts: 'number' });
  const name = (f.preset as string | undefined) ?? 'grpo-arith';
  if (!(name in PRESETS)) throw new UsageError(`dewpoint train: --preset must be one of ${Object.keys(PRESETS).join(', ')}, got '${name}'`);
  const base = PRESETS[name as keyof typeof PRESETS];
  const config = {
    ...base,
    steps: (f.steps as number | undefined) ?? base.steps,
    seed: (f.seed as number | undefined) ?? base.seed,
    lr: (f.lr as number | undefined) ?? base.lr,
    maxGradNorm: (f['max-grad-norm'] as number | undefined) ?? base.maxGradNorm,
    ...(f.prompts !== undefined ? (name === 'dpo-arith' ? { pairs: f.prompts as number } : { prompts: f.prompts as number }) : {}),
    evalEvery: (f['eval-every'] as number | undefined) ?? base.evalEvery,
    evalN: (f['eval-n'] as number | undefined) ?? base.evalN,
  };
  const dir = (f.checkpoint as string | undefined) ?? 'public/checkpoints/arith-base';
  const checkpoint = importCheckpoint(readCheckpointDir(dir));
  const { ops, info } = await cliBackend(f.backend);
  const print = (x: Record<string, unknown>) =>
    process.stdout.write(`${f.json ? JSON.stringify(x) : Object.entries(x).map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`).join(' ')}\n`);
  process.stderr.write(`train ${name}: ${describeBackend(info)}, from ${dir}, ${config.steps} steps\n`);
  const run = name === 'dpo-arith' ? new DpoRun(ops, { ...DPO_ARITH, ...config }, checkpoint) : new GrpoRun(ops, { ...GRPO_ARITH, ...config }, checkpoint);
  const evaluate = async (step: number) => {
    const ev = await run.evaluate();
    print({ step, 'eval/accuracy': ev.accuracy, 'eval/mean_length': ev.meanLength, 'eval/n': ev.n });
    return ev.accuracy;
  };
  const first = config.evalEvery > 0 ? await evaluate(0) : NaN;
  let last = first;
  for (let s = 1; s <= config.steps; s++) {
    const { metrics } = await run.next();
    const keys = ['loss/dpo', 'loss/nll_chosen', 'rewards/margins', 'rewards/accuracies', 'reward/mean', 'reward/std', 'reward/frac_reward_zero_std', 'loss/total', 'rl/pg_clipfrac', 'rl/ppo_kl', 'rl/entropy', 'mismatch/kl', 'opt/grad_norm', 'response/mean_length', 'perf/sample_ms', 'perf/score_ms', 'perf/train_ms', 'perf/tokens_per_s'];
    print({ step: s, ...(f.json ? metrics : Object.fromEntries(keys.filter((k) => k in metrics).map((k) => [k, metrics[k]]))) });
    if (config.evalEvery > 0 && (s % config.evalEvery === 0 || s === config.steps)) last = await evaluate(s);
  }
  if (config.evalEvery > 0) process.stderr.write(`train ${name}: held-out accuracy ${(first * 100).toFixed(1)}% -> ${(last * 100).toFixed(1)}% (${config.evalN} tasks)\n`);
  return 0;
}
