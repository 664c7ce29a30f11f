import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { mathReward } from '../rewards/math-reward';
import { importCheckpoint } from '../model/checkpoint';
import { DPO_ARITH, DpoRun } from './dpo';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));

describe('DpoRun from the shipped base checkpoint (CPU)', () => {
  it('builds correct/incorrect pairs from the base model and starts at the DPO loss log 2', async () => {
    const run = new DpoRun(createCpuOps(), { ...DPO_ARITH, pairs: 4, samplesPerPrompt: 8, evalN: 4 }, base);
    const { metrics, pairs } = await run.next();
    expect(pairs).toHaveLength(4);
    const tok = base.tokenizer;
    for (const p of pairs) {
      expect(mathReward(tok.decode(p.chosen), p.task.answer).score).toBe(1);
      expect(mathReward(tok.decode(p.rejected), p.task.answer).score).toBe(0);
    }
    // Policy = reference at the first step: every margin is 0 and sigmoid DPO is log 2.
    expect(metrics['loss/dpo']).toBeCloseTo(Math.log(2), 6);
    expect(metrics['rewards/margins']).toBeCloseTo(0, 6);
    expect(metrics['loss/nll_chosen']).toBeGreaterThan(0);
    expect(metrics['loss/total']).toBeCloseTo(metrics['loss/dpo'] + metrics['loss/nll_chosen'], 10);
    // Throughput as GRPO reports it: ids generated plus ids scored, per second of the step.
    expect(metrics['perf/tokens_per_s']).toBeGreaterThan(0);
    expect(Number.isFinite(metrics['perf/tokens_per_s'])).toBe(true);
    // The second step trains on a moved policy; the loss stays finite.
    const second = await run.next();
    expect(Number.isFinite(second.metrics['loss/total'])).toBe(true);
  });
});
