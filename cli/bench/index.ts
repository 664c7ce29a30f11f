/**
 * `dewpoint bench <name> [--json] [--runs N]` / `npm run bench -- <name>`: prints a table, or one
 * JSON object with `--json`. Ratios are always between variants measured in the same run: timings
 * on a software adapter drift up to 2× between runs.
 */
import type { BenchArgs } from './args';
import { benchAsync } from './async';
import { benchGrpo } from './grpo';
import { MODEL_SHAPES } from './grpo-model';
import { benchMatmul } from './matmul';
import { benchPack } from './pack';
import { benchRollout } from './rollout';
import { benchSandbox } from './sandbox';
import { benchTraces } from './traces';
import { benchTrain } from './train';

export const BENCHES: Record<string, (args: BenchArgs) => Promise<{ table: string; json: unknown }>> = {
  grpo: benchGrpo,
  async: benchAsync,
  matmul: benchMatmul,
  train: benchTrain,
  rollout: benchRollout,
  pack: benchPack,
  traces: benchTraces,
  sandbox: benchSandbox,
};

const MODEL_FLAG: Record<string, string> = { train: ', --model gpt-ref', grpo: ', --model SHAPE|DIR' };

export async function runBench(argv: string[]): Promise<number> {
  const [name, ...flags] = argv;
  const args: BenchArgs = { json: false, runs: null, model: null };
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i];
    if (f === '--json') args.json = true;
    else if (f === '--runs') {
      const n = Number(flags[++i]);
      if (!Number.isInteger(n) || n < 1 || n > 100) {
        process.stderr.write(`dewpoint bench: --runs must be an integer in 1..100, got '${flags[i]}'\n`);
        return 2;
      }
      args.runs = n;
    } else if (f === '--model' && name === 'train') {
      const m = flags[++i];
      if (m !== 'gpt-ref') {
        process.stderr.write(`dewpoint bench train: --model must be gpt-ref, got '${m ?? ''}'\n`);
        return 2;
      }
      args.model = m;
    } else if (f === '--model' && name === 'grpo') {
      const m = flags[++i];
      if (m === undefined || m.startsWith('--')) {
        process.stderr.write(
          `dewpoint bench grpo: --model needs ${Object.keys(MODEL_SHAPES).join(', ')} or a folder\n`,
        );
        return 2;
      }
      args.model = m;
    } else {
      process.stderr.write(`dewpoint bench: unknown flag '${f}'; allowed: --json, --runs N${MODEL_FLAG[name] ?? ''}\n`);
      return 2;
    }
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
