/**
 * `dewpoint pretrain` (`npm run pretrain`): trains the default small model on arithmetic with SFT
 * and writes the base checkpoint for the RL demos. Defaults are the base recipe of docs/calibration.md "The SFT base":
 * constant lr 1e-3 after warmup (`--min-lr`), no gradient clipping (`--max-grad-norm 1e9`). It
 * stops deliberately early: at the first evaluation whose held-out accuracy reaches `--target`
 * (default 0.22 on 300 tasks, evaluated every 10 steps from step 450), so the RL presets have room
 * to improve (docs/calibration.md: the 20–40% window is only ~40 steps wide, so it evaluates often).
 * A base made with the cosine decay and clipping of SFT_ARITH (the earlier shipped base) gained
 * 5 points under GRPO where this one gains 10–14 (README).
 *
 * `--from DIR` continues SFT from a checkpoint's weights (fresh AdamW) instead: it runs every step,
 * evaluates every `--eval-every` steps from the start, and writes the last step to `--out`
 * (required, so the shipped base is never overwritten): the "continued SFT" baseline of docs/calibration.md.
 *
 * `--task calc|guess` makes the base of a multi-turn environment instead (default `--task arith`,
 * the above): SFT on demonstration episodes (worker/train/sft-episodes.ts, SFT_CALC / SFT_GUESS)
 * with the same constant lr, no clipping and early stop, held-out accuracy from greedy episodes,
 * written to public/checkpoints/calc-base or guess-base. Their defaults (`TASK_DEFAULTS`) stop
 * well short of what SFT reaches, so that GRPO has room to improve the base.
 */
import { exportCheckpoint, importCheckpoint } from '../../worker/model/checkpoint';
import type { EvalResult } from '../../worker/train/evaluate';
import type { SftStepMetrics } from '../../worker/train/sft';
import { SFT_ARITH, SftRun } from '../../worker/train/sft';
import type { SftEpisodeConfig } from '../../worker/train/sft-episodes';
import { SFT_CALC, SFT_CODE, SFT_GUESS, SftEpisodeRun } from '../../worker/train/sft-episodes';
import { localCodeGrader } from '../code-grader';
import type { Model } from '../../worker/model/model';
import type { CharTokenizer } from '../../worker/data/tokenizer';
import { checkRunOptions } from '../../worker/presets/table';
import { UsageError, bool, num, parseFlags, str, type CommandSpec } from '../args';
import { cliBackend, describeBackend } from '../backend';
import { BASE_CHECKPOINT_DIR, readCheckpointDir, writeCheckpointDir } from '../../worker/model/node-checkpoint-dir';

type PretrainTask = 'arith' | 'calc' | 'guess' | 'code';

/**
 * Per task: the SFT config and the early stop. arith: the base of docs/calibration.md (see above). calc and
 * guess, measured with this command on a 2-CPU machine (seed 1, constant lr 1e-3):
 * - calc: held-out accuracy is ~0 until step ~290, then 8% (295), 17% (305), 33.5% (320), 78%
 *   (350): a window as narrow as arithmetic's, so it evaluates every 5 steps from step 200
 *   (~3.7 s a step; the shipped base stopped at step 320 after 23 minutes).
 * - guess: it rises steadily, 22% (90), 32% (100), 43% (120), 57% (150), 86% (200), 100% (290).
 * Targets 0.3 and 0.55 leave a deliberately imperfect base for GRPO to improve. The guess base
 *   stops at 0.55 rather than 0.4: at step 120 (43% greedy) its episodes sampled at T = 1 succeed
 *   5% of the time, most running out of action ids without EOS; at step 150 (57%), 19%, so most
 *   GRPO groups carry a signal.
 */
const TASK_DEFAULTS: Record<
  PretrainTask,
  {
    sft: typeof SFT_ARITH | SftEpisodeConfig;
    target: number;
    evalFrom: number;
    evalEvery: number;
    evalN: number;
    out: string;
  }
> = {
  arith: { sft: SFT_ARITH, target: 0.22, evalFrom: 450, evalEvery: 10, evalN: 300, out: BASE_CHECKPOINT_DIR },
  calc: { sft: SFT_CALC, target: 0.3, evalFrom: 200, evalEvery: 5, evalN: 200, out: 'public/checkpoints/calc-base' },
  guess: { sft: SFT_GUESS, target: 0.55, evalFrom: 50, evalEvery: 10, evalN: 63, out: 'public/checkpoints/guess-base' },
  code: { sft: SFT_CODE, target: 0.4, evalFrom: 20, evalEvery: 10, evalN: 100, out: 'public/checkpoints/code-base' },
};

/** What the command trains: SftRun (arith) or SftEpisodeRun (calc, guess). */
interface PretrainRun {
  readonly model: Model;
  readonly tok: CharTokenizer;
  next(): Promise<SftStepMetrics>;
  evaluate(): Promise<EvalResult>;
}

export const PRETRAIN: CommandSpec = {
  name: 'pretrain',
  args: '',
  summary:
    'SFT of the small model on a task; writes its base checkpoint at the first held-out evaluation whose accuracy ' +
    'reaches --target (deliberately early, so RL has room to improve), or continues SFT from a checkpoint (--from)',
  flags: {
    task: str(Object.keys(TASK_DEFAULTS).join('|'), 'what to learn; default arith'),
    out: str('DIR', "where the checkpoint goes; default the task's base in public/checkpoints"),
    steps: num('N', 'most steps'),
    target: num('ACC', "stop at the first evaluation with held-out accuracy >= ACC; default the task's"),
    seed: num('S', 'random seed'),
    'eval-from': num('N', "evaluate from step N on; default the task's (0 with --from)"),
    'eval-every': num('K', "evaluate every K steps; default the task's"),
    'eval-n': num('N', "held-out tasks per evaluation; default the task's"),
    'min-lr': num('X', 'the floor of the cosine decay; default the lr (constant lr)'),
    'max-grad-norm': num('X', 'global gradient-norm clip; default none (1e9)'),
    warmup: num('N', 'warmup steps'),
    from: str(
      'DIR',
      'continue SFT from this checkpoint (fresh AdamW), every step, writing the last to --out (required)',
    ),
    backend: str('auto|webgpu|wasm|cpu', 'where the kernels run; default auto'),
    json: bool('print each step and evaluation as one JSON line'),
  },
};

export async function pretrain(argv: string[]): Promise<number> {
  const f = parseFlags(PRETRAIN.name, argv, PRETRAIN.flags);
  const from = f.from as string | undefined;
  if (from !== undefined && f.out === undefined)
    throw new UsageError('dewpoint pretrain: --from needs --out (a continued run never overwrites the shipped base)');
  const task = (f.task as string | undefined) ?? 'arith';
  if (!Object.prototype.hasOwnProperty.call(TASK_DEFAULTS, task))
    throw new UsageError(
      `dewpoint pretrain: --task must be one of ${Object.keys(TASK_DEFAULTS).join(', ')}, got '${task}'`,
    );
  const d = TASK_DEFAULTS[task as PretrainTask];
  const config = {
    ...d.sft,
    steps: (f.steps as number | undefined) ?? d.sft.steps,
    seed: (f.seed as number | undefined) ?? d.sft.seed,
    evalEvery: (f['eval-every'] as number | undefined) ?? d.evalEvery,
    evalN: (f['eval-n'] as number | undefined) ?? d.evalN,
    // docs/calibration.md "The SFT base": constant lr and no clipping.
    minLr: (f['min-lr'] as number | undefined) ?? d.sft.lr,
    maxGradNorm: (f['max-grad-norm'] as number | undefined) ?? 1e9,
    warmup: (f.warmup as number | undefined) ?? d.sft.warmup,
  };
  const target = (f.target as number | undefined) ?? d.target;
  // Greedy evaluation costs several training steps; before this step accuracy is ~0 (docs/calibration.md, and measured for calc and guess).
  const evalFrom = (f['eval-from'] as number | undefined) ?? (from ? 0 : d.evalFrom);
  checkPretrainFlags(config, { target, evalFrom });
  const { ops, info } = await cliBackend(f.backend);
  const out = (f.out as string | undefined) ?? d.out;
  const log = (x: object) =>
    process.stdout.write(
      `${
        f.json
          ? JSON.stringify(x)
          : Object.entries(x)
              .map(([k, v]) => `${k}=${typeof v === 'number' ? +v.toPrecision(4) : v}`)
              .join(' ')
      }\n`,
    );
  process.stderr.write(
    `pretrain: ${task === 'arith' ? '' : `${task}, `}${describeBackend(info)}, ${from ? `from ${from}, ${config.steps} steps` : `${config.steps} steps max, stop at held-out accuracy >= ${target}`}\n`,
  );
  // code: demonstrations and greedy evaluations are graded in this process with the companion's runner.
  const local = task === 'code' ? localCodeGrader() : null;
  try {
    return await pretrainLoop(local);
  } finally {
    await local?.close();
  }

  async function pretrainLoop(local: ReturnType<typeof localCodeGrader> | null): Promise<number> {
    const run: PretrainRun =
      'env' in config ? new SftEpisodeRun(ops, config, { codeGrader: local?.grader ?? null }) : new SftRun(ops, config);
    if (from) run.model.setWeights(importCheckpoint(readCheckpointDir(from)).weights);
    const t0 = performance.now();
    let reached: { step: number; n: number; accuracy: number; meanLength: number } | null = null;
    for (let s = 1; s <= config.steps; s++) {
      const m = await run.next();
      if (s % 10 === 0 || s === 1) log(m);
      if (config.evalEvery > 0 && s % config.evalEvery === 0 && s >= evalFrom) {
        const ev = await run.evaluate();
        log({ step: s, 'eval/accuracy': ev.accuracy, 'eval/mean_length': ev.meanLength, 'eval/n': ev.n });
        if (from || ev.accuracy >= target)
          reached = { step: s, n: ev.n, accuracy: ev.accuracy, meanLength: ev.meanLength };
        if (!from && reached) break;
      }
    }
    if (from && reached?.step !== config.steps) {
      const ev = await run.evaluate();
      log({ step: config.steps, 'eval/accuracy': ev.accuracy, 'eval/mean_length': ev.meanLength, 'eval/n': ev.n });
      reached = { step: config.steps, n: ev.n, accuracy: ev.accuracy, meanLength: ev.meanLength };
    }
    if (!reached) {
      process.stderr.write(
        `pretrain: held-out accuracy never reached ${target} in ${config.steps} steps; no checkpoint written\n`,
      );
      return 1;
    }
    const episodes = 'env' in config;
    const files = await exportCheckpoint(run.model, run.tok, {
      kind: 'dewpoint-checkpoint',
      trainedWith: episodes
        ? `dewpoint pretrain --task ${task} (SFT on demonstration episodes, worker/train/sft-episodes.ts)`
        : 'dewpoint pretrain (SFT, worker/train/sft.ts)',
      command: `npm run pretrain -- ${argv.join(' ')}`.trim(),
      backend: describeBackend(info),
      sft: config,
      ...(episodes ? { earlyStop: { target, evalFrom } } : {}),
      ...(from ? { from } : {}),
      step: reached.step,
      heldOut: {
        n: reached.n,
        accuracy: reached.accuracy,
        meanLength: reached.meanLength,
        split: HELD_OUT_SPLIT[task as PretrainTask],
      },
      seconds: (performance.now() - t0) / 1000,
    });
    writeCheckpointDir(out, files);
    process.stderr.write(
      `pretrain: step ${reached.step}, held-out accuracy ${(reached.accuracy * 100).toFixed(1)}% on ${reached.n}; wrote ${out}\n`,
    );
    return 0;
  }
}

/** What `heldOut` in dewpoint.json was measured on. */
const HELD_OUT_SPLIT: Record<PretrainTask, string> = {
  arith: 'hash-disjoint held-out (worker/data/arith.ts)',
  calc: 'hash-disjoint held-out of (a, b, c) (worker/episodes/calc.ts); greedy episodes, reward 1',
  guess:
    'every secret 1..63 (worker/episodes/guess.ts: the whole task space, train and held-out alike); greedy episodes, reward 1',
  code: 'hash-disjoint held-out of the step pairs (worker/episodes/code.ts); greedy episodes graded in the sandbox, reward 1 = every case passes',
};

/**
 * The flags' values, checked before any work: the fields the sft-arith preset shares are checked by
 * its schema (the Experiments view's messages), the pretrain-only ones here, each naming its flag.
 */
function checkPretrainFlags(
  c: Pick<typeof SFT_ARITH, 'steps' | 'lr' | 'seed' | 'evalEvery' | 'evalN' | 'minLr' | 'maxGradNorm' | 'warmup'>,
  extra: { target: number; evalFrom: number },
): void {
  // Each field is named by its flag: the kebab-case of its path (evalN: --eval-n).
  const flag = (path: string) => `--${path.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)}`;
  const problems = checkRunOptions(
    {
      preset: 'sft-arith',
      steps: c.steps,
      lr: c.lr,
      seed: c.seed,
      evalEvery: c.evalEvery,
      evalN: c.evalN,
      checkpointEvery: 0,
    },
    flag,
  ).map((p) => p.message);
  const check = (ok: boolean, flag: string, value: number, allowed: string) => {
    if (!ok) problems.push(`--${flag} must be ${allowed}, got ${value}`);
  };
  check(c.minLr > 0 && c.minLr <= c.lr, 'min-lr', c.minLr, `in (0, ${c.lr}] (the peak lr)`);
  check(c.maxGradNorm > 0, 'max-grad-norm', c.maxGradNorm, 'positive (1e9: no clipping)');
  check(Number.isInteger(c.warmup) && c.warmup >= 0, 'warmup', c.warmup, 'an integer ≥ 0');
  check(extra.target > 0 && extra.target <= 1, 'target', extra.target, 'an accuracy in (0, 1]');
  check(Number.isInteger(extra.evalFrom) && extra.evalFrom >= 0, 'eval-from', extra.evalFrom, 'an integer ≥ 0');
  if (problems.length)
    throw new UsageError(`dewpoint pretrain: invalid options:\n${problems.map((p) => `  ${p}`).join('\n')}`);
}
