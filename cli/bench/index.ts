/**
 * `dewpoint bench <name> [--json] [--runs N]` / `npm run bench -- <name>`: prints a table, or one
 * JSON object with `--json`. Ratios are always between variants measured in the same run: timings
 * on a software adapter drift up to 2× between runs.
 */
import { UsageError, bool, num, parseFlags, str, type CommandSpec } from '../args';
import type { BenchArgs } from './args';
import { benchAsync } from './async';
import { benchGpu } from './gpu';
import { benchGrpo } from './grpo';
import { MODEL_SHAPES } from './grpo-model';
import { benchMatmul } from './matmul';
import { benchPack } from './pack';
import { benchRollout } from './rollout';
import { benchSampler } from './sampler';
import { benchSandbox } from './sandbox';
import { benchTraces } from './traces';
import { benchTrain } from './train';

const BENCHES: Record<string, (args: BenchArgs) => Promise<{ table: string; json: unknown }>> = {
  grpo: benchGrpo,
  gpu: benchGpu,
  async: benchAsync,
  matmul: benchMatmul,
  train: benchTrain,
  rollout: benchRollout,
  pack: benchPack,
  traces: benchTraces,
  sandbox: benchSandbox,
  sampler: benchSampler,
};

export const BENCH: CommandSpec = {
  name: 'bench',
  args: '<name>',
  summary: `benchmarks, printed as a table (names: ${Object.keys(BENCHES).join(', ')})`,
  flags: {
    json: bool('print one JSON object instead of the table'),
    quick: bool('gpu: small sizes, so that a software adapter finishes in minutes'),
    runs: num('N', 'timed runs per measurement (their median), 1..100; default depends on the bench'),
    model: str(
      'SHAPE|DIR',
      `train: gpt-ref (the peer bench's GPT shape); grpo: ${Object.keys(MODEL_SHAPES).join(', ')} or a model folder; ` +
        `sampler: ${Object.keys(MODEL_SHAPES).join(', ')}`,
    ),
    lora: bool(
      'grpo --model: the LoRA training alone (rank 16, alpha 32, every projection, bf16 base), not full fine-tuning',
    ),
    threads: str(
      'LIST',
      "grpo: the wasm thread counts to measure in one run, comma-separated counts 1..64 or auto (this machine's cores); " +
        'default auto,1',
    ),
  },
};

/** `--threads 1,2,auto` → [1, 2, 'auto']; refuses anything else, naming the entry. */
function threadList(value: string): (number | 'auto')[] {
  return value.split(',').map((x) => {
    const t = x.trim();
    if (t === 'auto') return 'auto';
    const n = Number(t);
    if (!Number.isInteger(n) || n < 1 || n > 64)
      throw new UsageError(`dewpoint bench: --threads entries must be integers in 1..64 or auto, got '${t}'`);
    return n;
  });
}

export async function runBench(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const f = parseFlags(BENCH.name, rest, BENCH.flags);
  const args: BenchArgs = {
    json: f.json === true,
    runs: null,
    model: null,
    lora: f.lora === true,
    quick: f.quick === true,
    threads: null,
  };
  if (args.quick && name !== 'gpu')
    throw new UsageError(`dewpoint bench: --quick is for the gpu bench, not ${name ?? 'none'}`);
  if (args.lora && (name !== 'grpo' || f.model === undefined))
    throw new UsageError(
      `dewpoint bench: --lora is for the grpo bench with --model SHAPE|DIR (got bench ${name ?? 'none'}` +
        `${f.model === undefined ? ', no --model' : ''})`,
    );
  if (f.runs !== undefined) {
    const n = f.runs as number;
    if (!Number.isInteger(n) || n < 1 || n > 100)
      throw new UsageError(`dewpoint bench: --runs must be an integer in 1..100, got '${n}'`);
    args.runs = n;
  }
  if (f.model !== undefined) {
    const m = String(f.model);
    if (name !== 'train' && name !== 'grpo' && name !== 'sampler')
      throw new UsageError(`dewpoint bench: --model is for the train, grpo and sampler benches, not ${name ?? 'none'}`);
    if (name === 'train' && m !== 'gpt-ref')
      throw new UsageError(`dewpoint bench train: --model must be gpt-ref, got '${m}'`);
    if (name === 'sampler' && !MODEL_SHAPES[m])
      throw new UsageError(
        `dewpoint bench sampler: --model must be one of ${Object.keys(MODEL_SHAPES).join(', ')}, got '${m}'`,
      );
    args.model = m;
  }
  if (f.threads !== undefined) {
    if (name !== 'grpo' || args.model !== null)
      throw new UsageError(`dewpoint bench: --threads is for the grpo bench (without --model), not ${name ?? 'none'}`);
    args.threads = threadList(String(f.threads));
  }
  const bench = name ? BENCHES[name] : undefined;
  if (!bench) {
    process.stderr.write(
      `dewpoint bench: ${name ? `unknown bench '${name}'` : 'missing bench name'}; allowed: ${Object.keys(BENCHES).join(', ')}\n`,
    );
    return 2;
  }
  const { table, json } = await bench(args);
  process.stdout.write(args.json ? `${JSON.stringify(json)}\n` : table);
  return 0;
}
