/**
 * On-policy by construction, in a whole run: grpo-arith on the shipped base trains to the same
 * numbers bit for bit whatever its pass split (`idsPerPass`) and, on wasm, its thread count. Each
 * weight gradient is summed token by token in order, going on from the previous pass's sum (the
 * matmul's accumulate, the norms' and the embedding's backward; a tied embedding's lookup gradient
 * kept apart from the LM head's until the step), so a batch in passes sums as in one; the sampler
 * scores as the trainer does, so `mismatch/kl` reads 0 on every step.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import type { Ops } from '../../kernels/ops';
import { nodeWasmOps } from '../../kernels/wasm/node-wasm';
import type { GrpoRunOptions } from '../contract/options';
import { importCheckpoint } from '../model/checkpoint';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { GRPO_ARITH, GrpoRun } from './grpo';

const CONFIG: GrpoRunOptions = { ...GRPO_ARITH, prompts: 4, group: 4, miniBatches: 2, evalEvery: 0, lr: 3e-4 };
const base = importCheckpoint(readCheckpointDir('public/checkpoints/arith-base'));
const timeless = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('perf/')));

async function train(ops: Ops, idsPerPass?: number) {
  const run = new GrpoRun(ops, idsPerPass ? { ...CONFIG, idsPerPass } : CONFIG, base);
  const steps: Record<string, number>[] = [];
  for (let i = 0; i < 3; i++) steps.push(timeless((await run.next()).metrics));
  return { steps, weights: await run.model.getWeights() };
}

describe('grpo-arith, 3 steps of two mini-batches each', () => {
  it.each([
    ['cpu', () => createCpuOps(), () => createCpuOps()],
    ['wasm, 1 thread against 2', () => nodeWasmOps(1), () => nodeWasmOps(2)],
  ] as const)(
    'on %s: one pass and passes of one row give the same metrics and weights, and mismatch/kl 0',
    async (_name, a, b) => {
      const whole = await train(await a());
      const passes = await train(await b(), 40); // rows are 2 × (prompt + 16) ids: one row a pass
      for (const s of whole.steps) {
        expect(s['mismatch/kl'], `step ${s.step}`).toBe(0);
        expect(s['reward/frac_reward_zero_std'], 'a batch that trains nothing would prove nothing').toBeLessThan(1);
      }
      expect(passes.steps).toEqual(whole.steps);
      for (const [name, w] of whole.weights) expect(passes.weights.get(name), name).toEqual(w);
    },
  );
});
