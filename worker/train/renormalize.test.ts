import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { OUTSIDE_SUPPORT, supportBias } from '../model/packing';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { updateOnBatch } from './update';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
// Top-k 3 at T = 1: the behavior log-probs are renormalised over 3 ids, the raw ones over all 25.
const SMALL = { ...GRPO_ARITH, prompts: 4, group: 2, topK: 3, renormalize: true, evalN: 4 };

describe('training renormalised over the sampler support', () => {
  it('supportBias leaves the kept ids at 0 and the rest at −1e9, on the position that predicts each id', () => {
    // One row of width 3, one chain: ids at t = 1 and t = 2 have supports {0, 2} and {1}; V = 3.
    const bias = supportBias(
      { offsets: Int32Array.from([0, 0, 2, 3]), ids: Int32Array.from([0, 2, 1]) },
      [1, 1, 1],
      3,
      3,
      [0],
    );
    const X = OUTSIDE_SUPPORT;
    expect(Array.from(bias)).toEqual([0, X, 0, X, 0, X, 0, 0, 0]);
  });

  it("the renormalised training log-probs equal the sampler's behavior log-probs on the same weights; the full softmax gives the raw ones", async () => {
    const run = new GrpoRun(createCpuOps(), SMALL, base);
    // The weights that sampled batch 1, before its update.
    const model = new Model(createCpuOps(), base.config);
    model.setWeights(base.weights);
    const s = await run.next();
    const p = s.packed;
    expect(p.support).not.toBeNull();
    const all = Array.from({ length: p.rows }, (_, r) => r);
    const renormalised = await model.score(p, supportBias(p.support!, p.segmentIds, p.width, base.config.vocab, all));
    const full = await model.score(p);
    let sampled = 0;
    let differs = 0;
    for (let i = 0; i < p.rows * p.width; i++) {
      if (!p.responseMask[i]) continue;
      sampled++;
      expect(renormalised.logp[i]).toBeCloseTo(p.behaviorLogProbs[i], 5);
      expect(full.logp[i]).toBeCloseTo(p.oldLogProbs![i], 5);
      if (Math.abs(p.behaviorLogProbs[i] - p.oldLogProbs![i]) > 1e-3) differs++;
    }
    expect(sampled).toBeGreaterThan(20);
    // Top-k 3 moved some log-probs: the test would pass trivially if renormalising changed nothing.
    expect(differs).toBeGreaterThan(0);
  });

  it('a renormalised step trains with ratio 1 against its own forward; without the support recorded it refuses', async () => {
    const s = await new GrpoRun(createCpuOps(), SMALL, base).next();
    expect(s.metrics['rl/ppo_kl']).toBeCloseTo(0, 12);
    const unrecorded = new GrpoRun(createCpuOps(), { ...SMALL, renormalize: false }, base);
    const packed = (await unrecorded.next()).packed;
    expect(packed.support).toBeNull();
    await expect(
      updateOnBatch({ model: unrecorded.model, reference: null, config: SMALL, step: 2, onProgress: null }, packed),
    ).rejects.toThrow(/renormalize needs the sampler's support/);
  });
});
