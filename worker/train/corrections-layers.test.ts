import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { batchRecord } from '../presets/records';
import { GRPO_ARITH, GrpoRun } from './grpo';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));

describe('the corrections the objective applied, per packed id', () => {
  it('are kept for the Batch view when importance or rejection is on, and absent otherwise', async () => {
    // Top-k 3 makes the sampler's log-probs differ from the trainer's: TIS weights ≠ 1 and a k1 rejection band that binds.
    const config = {
      ...GRPO_ARITH,
      prompts: 4,
      group: 2,
      topK: 3,
      importance: { kind: 'tis' as const, level: 'token' as const, cap: 1.5, batchNormalize: false },
      rejection: { token_k1: 1.2 },
    };
    const s = await new GrpoRun(createCpuOps(), config, base).next();
    const b = batchRecord(s, base.tokenizer);
    const p = s.packed;
    const w = b.layers.isWeight!;
    const keep = b.layers.keep!;
    let sampled = 0;
    for (let i = 0; i < p.rows * p.width; i++) {
      if (!p.responseMask[i]) {
        expect([w[i], keep[i]]).toEqual([0, 0]);
        continue;
      }
      sampled++;
      // TIS: min(exp(old − behavior), cap), old = the raw log-prob with one update per batch.
      expect(w[i]).toBeCloseTo(Math.min(Math.exp(p.oldLogProbs![i] - p.behaviorLogProbs[i]), 1.5), 5);
      const ratio = Math.exp(p.oldLogProbs![i] - p.behaviorLogProbs[i]);
      expect(keep[i]).toBe(ratio >= 1 / 1.2 && ratio <= 1.2 ? 1 : 0);
    }
    expect(sampled).toBeGreaterThan(0);
    expect(Array.from(keep).some((k, i) => p.responseMask[i] && k === 0)).toBe(true);
    const plain = batchRecord(
      await new GrpoRun(createCpuOps(), { ...GRPO_ARITH, prompts: 4, group: 2 }, base).next(),
      base.tokenizer,
    );
    expect(plain.layers.isWeight).toBeUndefined();
  });
});
