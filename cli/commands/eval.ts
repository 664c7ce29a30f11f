/**
 * `dewpoint eval --checkpoint DIR --task arith [--n 500] [--backend ...] [--json]`: held-out
 * exact-match accuracy with greedy decoding and mean completion length, on the task options the
 * checkpoint was trained with (dewpoint.json), or the defaults.
 */
import type { ArithOptions } from '../../worker/data/arith';
import { heldOut } from '../../worker/data/arith';
import { importCheckpoint } from '../../worker/model/checkpoint';
import { Model } from '../../worker/model/model';
import { evaluateArith } from '../../worker/train/evaluate';
import { UsageError, bool, num, parseFlags, str, type CommandSpec } from '../args';
import { cliBackend, describeBackend } from '../backend';
import { readCheckpointDir } from '../../worker/model/node-checkpoint-dir';

export const EVAL: CommandSpec = {
  name: 'eval',
  args: '--checkpoint DIR',
  summary: 'held-out exact-match accuracy (greedy) and mean completion length of a checkpoint folder',
  flags: {
    checkpoint: str('DIR', 'the checkpoint folder (required)'),
    task: str('arith', 'the task; arith only'),
    n: num('N', 'held-out tasks; default 500'),
    backend: str('auto|webgpu|wasm|cpu', 'where the kernels run; default auto'),
    json: bool('print the report as JSON'),
  },
};

export async function evalCommand(argv: string[]): Promise<number> {
  const f = parseFlags(EVAL.name, argv, EVAL.flags);
  if (!f.checkpoint) throw new UsageError('dewpoint eval: --checkpoint DIR is required');
  const task = f.task ?? 'arith';
  if (task !== 'arith') throw new UsageError(`dewpoint eval: --task must be 'arith', got '${String(task)}'`);
  const n = (f.n as number | undefined) ?? 500;
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`dewpoint eval: --n must be a positive integer, got ${n}`);
  const ck = importCheckpoint(readCheckpointDir(f.checkpoint as string));
  const { ops, info } = await cliBackend(f.backend);
  const model = new Model(ops, ck.config, { frozen: true });
  model.setWeights(ck.weights);
  const taskOptions = ((ck.info.sft as { task?: ArithOptions } | undefined)?.task ?? {}) as ArithOptions;
  const t0 = performance.now();
  const result = await evaluateArith(model, ck.tokenizer, heldOut(n, taskOptions));
  const out = {
    checkpoint: f.checkpoint,
    task,
    split: 'held-out',
    n: result.n,
    accuracy: result.accuracy,
    meanLength: result.meanLength,
    backend: describeBackend(info),
    seconds: (performance.now() - t0) / 1000,
    samples: result.samples.slice(0, 4),
  };
  if (f.json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else {
    process.stdout.write(
      `held-out accuracy ${(result.accuracy * 100).toFixed(1)}% on ${result.n} ${task} tasks, mean ` +
        `completion length ${result.meanLength.toFixed(2)} ids (${out.backend}, ${out.seconds.toFixed(1)} s)\n`,
    );
    for (const s of out.samples)
      process.stdout.write(`  ${s.prompt} -> ${s.completion}  ${s.correct ? 'correct' : `(expected ${s.answer})`}\n`);
  }
  return 0;
}
