import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { rowPerSequence } from '../model/packing';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { validateSessions } from '../rl/validate';
import { DPO_ARITH, DpoRun } from '../train/dpo';
import { pairRecords, pairSessions } from './groups';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const tok = base.tokenizer;

describe('a DPO step as groups and sessions (shipped base, CPU)', () => {
  it('each pair is a group of two, chosen then rejected, with the implicit rewards behind rewards/*; its sessions carry the base sampler’s log-probs', async () => {
    const run = new DpoRun(createCpuOps(), { ...DPO_ARITH, pairs: 3, evalN: 1 }, base);
    await run.next();
    const s = await run.next(); // the policy has moved: implicit rewards are not all 0
    const groups = pairRecords(s, tok);
    expect(groups).toHaveLength(3);
    groups.forEach((g, i) => {
      expect(g).toMatchObject({ kind: 'dpo-pair', group: `pair ${i + 1}: ${s.pairs[i].task.id}`, prompt: s.pairs[i].task.prompt, answer: s.pairs[i].task.answer, rewardMean: 0.5, zeroStd: false });
      expect(g.samples.map((x) => [x.sample, x.status, x.reward])).toEqual([[0, 'chosen', 1], [1, 'rejected', 0]]);
      expect(g.samples[0].completion).toBe(`\\boxed{${s.pairs[i].task.answer}}`);
    });
    const chosen = groups.map((g) => g.samples[0].advantage);
    const rejected = groups.map((g) => g.samples[1].advantage);
    expect(chosen.some((r) => r !== 0)).toBe(true);
    expect(chosen.reduce((a, b) => a + b, 0) / 3).toBeCloseTo(s.metrics['rewards/chosen'], 12);
    expect(rejected.reduce((a, b) => a + b, 0) / 3).toBeCloseTo(s.metrics['rewards/rejected'], 12);

    const sessions = pairSessions(s, tok);
    expect(() => validateSessions(sessions)).not.toThrow();
    expect(sessions.map((x) => [x.group, x.sample, x.reward])).toEqual(groups.flatMap((g) => [[g.group, 0, 1], [g.group, 1, 0]]));
    // The stored raw log-probs are the frozen base's: a fresh base model rescoring the same ids agrees.
    const ref = new Model(createCpuOps(), base.config);
    ref.setWeights(base.weights);
    for (const x of sessions) {
      const call = x.calls[0];
      expect(call.version).toBe(0);
      const batch = rowPerSequence([[...Array.from(call.promptIds), ...Array.from(call.sampledIds)]]);
      const { logp } = await ref.score(batch);
      Array.from(call.sampledIds).forEach((_, t) => expect(call.rawLogProbs![t]).toBeCloseTo(logp[call.promptIds.length + t], 4));
    }
  });

  it('pairs a checkpoint kept without their sampler calls still show as groups but give no sessions', async () => {
    const run = new DpoRun(createCpuOps(), { ...DPO_ARITH, pairs: 2, evalN: 1 }, base);
    const s = await run.next();
    const bare = { ...s, pairs: s.pairs.map(({ calls: _calls, ...p }) => p) };
    expect(pairRecords(bare, tok)).toHaveLength(2);
    expect(pairSessions(bare, tok)).toEqual([]);
  });
});
