/**
 * `bench async`: steps and sessions per second of grpo-arith and grpo-code at staleness 0, 1 and 2
 * (worker/train/scheduler.ts), with the fractions of wall time the trainer waited for its batch
 * (verl trainer/idle_ratio) and no batch was being collected (rollouter/idle_ratio), on the wasm
 * backend, in one run; grpo-arith also at s = 1 and 2 with the batches ahead sampled on worker
 * threads (`--sampler thread`: cli/thread-sampler.ts, a one-thread wasm backend each). grpo-code
 * grades in the CLI's in-process sandbox (the companion's runner and fleet, cli/code-grader.ts), as
 * `train --preset grpo-code` does, one batch a step (its dynamic sampling off: 1 to 10 batches a
 * step would hide the overlap in their spread). Each cell runs 1 + runs + s steps of a fresh run
 * from the preset's base: step 1 fills the pipeline and is not timed, the
 * last s drain it (nothing is launched past the run's end) and are not timed either, so the
 * figures are the steady state over `runs` steps. Timings on this shared machine drift by up to
 * 2× between minutes, so each preset first runs untimed (the JIT, the caches), then its cells run
 * in ROUNDS rounds of s = 0, 1, 2; a cell's figures are medians over the rounds, and its speed-up
 * the median of its ratio to s = 0 of the same round. At s = 0 the idle ratios come from the
 * step's phases (the trainer waits through sampling; sampling stops while it trains).
 */
import type { Ops } from '../../kernels/ops';
import { importCheckpoint } from '../../worker/model/checkpoint';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';
import { median } from '../../worker/selftest';
import { GRPO_ARITH, GrpoRun } from '../../worker/train/grpo';
import { GRPO_CODE, EpisodeRun } from '../../worker/train/grpo-episodes';
import { cliBackend, describeBackend } from '../backend';
import { localCodeGrader, type LocalGrader } from '../code-grader';
import { threadSampler } from '../thread-sampler';
import type { BenchArgs } from './args';

/** The cells of a preset: a staleness bound, and where the batches ahead sample (sampler models here, or worker threads). */
interface Variant {
  s: number;
  sampler: 'model' | 'thread';
}
const MODELS: Variant[] = [0, 1, 2].map((s) => ({ s, sampler: 'model' }));
const ARITH: Variant[] = [...MODELS, { s: 1, sampler: 'thread' }, { s: 2, sampler: 'thread' }];
const ROUNDS = 3;

interface Row {
  preset: 'grpo-arith' | 'grpo-code';
  staleness: number;
  sampler: Variant['sampler'];
  steps: number;
  stepsPerS: number;
  /** Median over the rounds of this cell's steps/s over s = 0's in the same round. */
  speedupVsSync: number;
  sessionsPerS: number;
  /** Medians over the timed steps. */
  trainerIdle: number;
  rolloutIdle: number;
  stalenessMean: number;
  rewardMean: number;
}

interface Stepper {
  next(): Promise<{ metrics: Record<string, number>; sessions: readonly unknown[] }>;
  close(): void;
}

type Cell = Omit<Row, 'speedupVsSync'>;

async function measure(preset: Row['preset'], v: Variant, timed: number, make: () => Promise<Stepper>): Promise<Cell> {
  const staleness = v.s;
  const total = 1 + timed + staleness;
  const run = await make();
  const m: Record<string, number>[] = [];
  let sessions = 0;
  let t0 = 0;
  let wall = 0;
  for (let s = 1; s <= total; s++) {
    process.stderr.write(`async ${preset} s=${staleness} (${v.sampler}): step ${s}/${total}\r`);
    const step = await run.next();
    if (s === 1) t0 = performance.now();
    else if (s <= 1 + timed) {
      m.push(step.metrics);
      sessions += step.sessions.length;
      if (s === 1 + timed) wall = (performance.now() - t0) / 1000;
    }
  }
  process.stderr.write('\n');
  run.close();
  const med = (f: (x: Record<string, number>) => number) => median(m.map(f));
  // s = 0 logs no async/* figures: the trainer waits while its batch is sampled, and nothing samples while it trains.
  const waited = (x: Record<string, number>) => x['perf/sample_ms'] / x['perf/step_ms'];
  return {
    preset,
    staleness,
    sampler: v.sampler,
    steps: timed,
    stepsPerS: timed / wall,
    sessionsPerS: sessions / wall,
    trainerIdle: med((x) => x['trainer/idle_ratio'] ?? waited(x)),
    rolloutIdle: med((x) => x['rollouter/idle_ratio'] ?? 1 - waited(x)),
    stalenessMean: med((x) => x['async/staleness_mean'] ?? 0),
    rewardMean: med((x) => x['reward/mean']),
  };
}

/** ROUNDS rounds of s = 0, 1, 2 after an untimed run; each cell's medians over the rounds. */
async function cells(
  preset: Row['preset'],
  variants: Variant[],
  timed: number,
  make: (v: Variant, steps: number) => Promise<Stepper>,
) {
  const warm = await make(variants[0], 3);
  for (let i = 0; i < 3; i++) await warm.next();
  warm.close();
  const rounds: Cell[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Cell[] = [];
    for (const v of variants) round.push(await measure(preset, v, timed, () => make(v, 1 + timed + v.s)));
    rounds.push(round);
  }
  return variants.map((v, i): Row => {
    const of = (f: (c: Cell) => number) => median(rounds.map((round) => f(round[i])));
    return {
      preset,
      staleness: v.s,
      sampler: v.sampler,
      steps: timed,
      stepsPerS: of((c) => c.stepsPerS),
      speedupVsSync: median(rounds.map((round) => round[i].stepsPerS / round[0].stepsPerS)),
      sessionsPerS: of((c) => c.sessionsPerS),
      trainerIdle: of((c) => c.trainerIdle),
      rolloutIdle: of((c) => c.rolloutIdle),
      stalenessMean: of((c) => c.stalenessMean),
      rewardMean: of((c) => c.rewardMean),
    };
  });
}

export async function benchAsync(args: BenchArgs) {
  const timed = args.runs ?? 6;
  const wasm = await cliBackend('wasm');
  const ops: Ops = wasm.ops;
  const arithBase = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
  const codeBase = importCheckpoint(readCheckpointDir('public/checkpoints/code-base'));
  const graders: LocalGrader[] = [];
  const rows: Row[] = [];
  try {
    rows.push(
      ...(await cells('grpo-arith', ARITH, timed, async (v, steps) => {
        const samplerWorker = v.sampler === 'thread';
        const config = { ...GRPO_ARITH, steps, staleness: v.s, ...(samplerWorker ? { samplerWorker } : {}) };
        return new GrpoRun(ops, config, arithBase, { remoteSampler: threadSampler });
      })),
    );
    rows.push(
      ...(await cells('grpo-code', MODELS, timed, async ({ s }, steps) => {
        // A grader of its own per run: its cache of graded programs starts empty.
        await graders.pop()?.close();
        const local = localCodeGrader();
        graders.push(local);
        // One batch a step: dynamic sampling draws 1 to 10 batches a step, a spread that would hide the overlap.
        const { filterGroups: _filter, ...options } = { ...GRPO_CODE, steps, staleness: s, evalEvery: 0 };
        return new EpisodeRun(ops, { environment: 'code', options }, codeBase, null, { codeGrader: local.grader });
      })),
    );
  } finally {
    for (const g of graders) await g.close();
  }
  const backend = describeBackend(wasm.info);
  const json = {
    bench: 'async',
    backend,
    timedSteps: timed,
    rounds: ROUNDS,
    statistic:
      `wall time over steps 2..${1 + timed} of a run of 1 + ${timed} + s steps; every figure the median over ` +
      `${ROUNDS} rounds of s = 0, 1, 2 (idle ratios, staleness and reward: medians over the timed steps first)`,
    rows,
  };
  const f = (x: number, d = 2) => x.toFixed(d);
  const table = [
    `async: staleness 0, 1, 2 on ${backend}, ${timed} timed steps a cell, medians of ${ROUNDS} rounds ` +
      '(grpo-code graded in-process)',
    '| preset | s | sampler | steps/s | sessions/s | × s = 0 | trainer idle | rollouter idle | staleness | reward |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.preset} | ${r.staleness} | ${r.sampler} | ${f(r.stepsPerS)} | ${f(r.sessionsPerS, 1)} | ${f(r.speedupVsSync)} | ` +
        `${f(r.trainerIdle)} | ${f(r.rolloutIdle)} | ${f(r.stalenessMean)} | ${f(r.rewardMean, 3)} |`,
    ),
  ].join('\n');
  return { table: `${table}\n`, json };
}
