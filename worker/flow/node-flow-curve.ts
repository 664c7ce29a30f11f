/**
 * The long measurement of the 2-D Flow-GRPO run, in Node: pretrain the base (flow matching), then
 * `steps` batches of FlowGrpoRun, printing every `every` batches the means of the batch metrics
 * over that window and the ODE preview's scores. Not a test (tests never time anything) and not the
 * CLI; `flowCurve` is what a CLI command would call.
 *
 *   npx tsx worker/flow/node-flow-curve.ts [steps = 300] [every = 25] [--cpu] [--json out.json]
 */
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { Ops } from '../../kernels/ops';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { PretrainOptions } from './pretrain';
import { PRETRAIN_DEFAULTS, pretrainBase } from './pretrain';
import type { FlowGrpoConfig } from './run';
import { FLOW_GRPO_2D, FlowGrpoRun } from './run';

const KEYS = [
  'reward/mean',
  'reward/inside_frac',
  'rl/clipfrac',
  'rl/approx_kl',
  'loss/policy',
  'opt/grad_norm',
  'rl/frac_reward_zero_std',
];

interface CurveRow {
  step: number;
  /** Means over the window's batches. */
  means: Record<string, number>;
  /** The ODE preview at the window's end. */
  evalReward: number;
  evalInside: number;
  seconds: number;
}

async function flowCurve(
  ops: Ops,
  o: { steps: number; every: number; config?: Partial<FlowGrpoConfig>; pretrain?: Partial<PretrainOptions> },
  print = console.log,
): Promise<{ pretrainSeconds: number; rows: CurveRow[] }> {
  const config = { ...FLOW_GRPO_2D, evalEvery: o.every, ...o.config };
  const t0 = performance.now();
  const { weights, losses } = await pretrainBase(ops, config.model, { ...PRETRAIN_DEFAULTS, ...o.pretrain });
  const pretrainSeconds = (performance.now() - t0) / 1000;
  print(
    `pretrain: ${losses.length} steps, loss ${losses[0].toFixed(3)} → ${losses[losses.length - 1].toFixed(3)}, ${pretrainSeconds.toFixed(1)} s`,
  );
  const run = new FlowGrpoRun(ops, config, weights);
  const rows: CurveRow[] = [];
  const t1 = performance.now();
  let sums: Record<string, number> = {};
  for (let s = 1; s <= o.steps; s++) {
    const m = (await run.next()).metrics;
    for (const k of KEYS) sums[k] = (sums[k] ?? 0) + m[k];
    if (s % o.every === 0) {
      const row: CurveRow = {
        step: s,
        means: Object.fromEntries(KEYS.map((k) => [k, sums[k] / o.every])),
        evalReward: m['eval/reward_mean'],
        evalInside: m['eval/inside_frac'],
        seconds: (performance.now() - t1) / 1000,
      };
      rows.push(row);
      print(
        `step ${String(s).padStart(4)}  ${KEYS.map((k) => `${k} ${row.means[k].toPrecision(3)}`).join('  ')} ` +
          ` eval/reward ${row.evalReward.toFixed(3)}  eval/inside ${row.evalInside.toFixed(3)}  ` +
          `${row.seconds.toFixed(1)} s`,
      );
      sums = {};
    }
  }
  return { pretrainSeconds, rows };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const json = args.includes('--json') ? args[args.indexOf('--json') + 1] : null;
  const [steps = 300, every = 25] = args.filter((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--json').map(Number);
  const ops = args.includes('--cpu') ? createCpuOps() : await nodeWasmOps(1);
  const out = await flowCurve(ops, { steps, every });
  if (json) await writeFile(json, JSON.stringify(out, null, 2));
}
