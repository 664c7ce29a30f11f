import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { VALUE_HEAD } from '../model/model';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { gae } from '../rl/index';
import { batchRecord, groupRecords } from '../presets/records';
import { decodeSessions, encodeSessions } from '../store/sessions-codec';
import { criticMetrics } from './critic';
import { PPO_ARITH, PpoRun } from './ppo';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
// A small batch: 4 prompts × 2 completions, 2 epochs × 2 mini-batches as the preset.
const SMALL = { ...PPO_ARITH, prompts: 4, group: 2, evalN: 4 };

describe('criticMetrics', () => {
  it('explained variance, means and ranges over the action tokens only', () => {
    // Tokens 0–3 on the mask: R = [1, 0, 1, 0] (Var 0.25), V = [0.5, 0.5, 0.5, 0.5] → R − V = ±0.5 (Var 0.25): EV = 1 − 0.25/(0.25 + 1e-5).
    const m = criticMetrics([1, 1, 1, 1, 0], [0.5, 0.5, 0.5, 0.5, 9], [1, 0, 1, 0, 9], [1, -1, 1, -1, 9]);
    expect(m['critic/vf_explained_var']).toBeCloseTo(1 - 0.25 / (0.25 + 1e-5), 12);
    // V = R exactly: EV = 1 − 0/(0.25 + 1e-5) = 1.
    expect(criticMetrics([1, 1, 1, 1], [1, 0, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0])['critic/vf_explained_var']).toBe(1);
    expect(m).toMatchObject({
      'critic/values/mean': 0.5,
      'critic/returns/mean': 0.5,
      'critic/returns/max': 1,
      'critic/advantages/min': -1,
      'critic/advantages/std': 1,
    });
    expect(criticMetrics([0, 0], [1, 2], [1, 2], [1, 2])).toEqual({});
  });
});

describe('PpoRun', () => {
  it('trains the value head with the policy on GAE advantages computed from the values it scored before the update', async () => {
    const run = new PpoRun(createCpuOps(), SMALL, base);
    expect(Array.from((await run.model.getValueHead())!).every((w) => w === 0)).toBe(true);
    const s = await run.next();
    const p = s.packed;
    // Zero-initialised head: every old value is 0, so GAE's returns are the reward-to-go (γ = 1) on every action token.
    expect(s.values.every((v) => v === 0)).toBe(true);
    const again = gae(
      {
        rewards: p.tokenRewards,
        values: s.values,
        mask: p.responseMask,
        rows: p.rows,
        width: p.width,
        sessionIds: p.sessionIds,
        callIndex: p.callIndex,
      },
      { gamma: 1, lam: 0.95, whiten: true },
    );
    expect(Array.from(p.advantages)).toEqual(Array.from(again.advantages));
    expect(Array.from(s.returns)).toEqual(Array.from(again.returns));
    // Every session trains (no zero-advantage masking under a critic), one packed row holds two.
    expect(p.counts.trained).toBe(8);
    expect(s.updates).toHaveLength(4);
    expect(s.metrics).toHaveProperty('critic/vf_explained_var');
    expect(s.metrics['loss/value']).toBeGreaterThan(0);
    const head = (await run.model.getValueHead())!;
    expect(head.some((w) => w !== 0)).toBe(true);
    // Each session carries its sampled ids' critic figures, in order: the Groups, Batch and session views read them.
    for (const [k, session] of s.sessions.entries()) {
      const n = session.calls[0].sampledIds.length;
      expect(session.critic!.advantages).toHaveLength(n);
      const at = Array.from(p.sessionIds.keys()).filter((i) => p.sessionIds[i] === k + 1 && p.responseMask[i] === 1);
      expect(session.critic!.returns).toEqual(at.map((i) => s.returns[i]));
      expect(session.critic!.advantages).toEqual(at.map((i) => p.advantages[i]));
    }
    const groups = groupRecords(s, run.tokenizer);
    const first = groups[0].samples[0];
    expect(groups[0].estimate).toBeUndefined();
    expect(first.critic!.return).toBe(s.sessions[0].critic!.returns[0]);
    expect(first.advantage).toBeCloseTo(
      s.sessions[0].critic!.advantages.reduce((a, b) => a + b) / s.sessions[0].critic!.advantages.length,
      12,
    );
    const batch = batchRecord(s, run.tokenizer);
    expect(Array.from(batch.layers.return!)).toEqual(
      Array.from(s.returns, (r, i) => (p.responseMask[i] ? Math.fround(r) : 0)),
    );
    const [stored] = decodeSessions(encodeSessions(s.sessions.slice(0, 1)));
    expect(stored.critic).toEqual(s.sessions[0].critic);
    // The second batch is scored by the trained head.
    const s2 = await run.next();
    expect(s2.values.some((v, i) => s2.packed.responseMask[i] === 1 && v !== 0)).toBe(true);
  });

  it('continues exactly from a stored position, the value head and its AdamW moments included', async () => {
    const a = new PpoRun(createCpuOps(), SMALL, base);
    await a.next();
    const weights = await a.model.getWeights();
    expect(weights.has(VALUE_HEAD)).toBe(true);
    const at1 = { position: structuredClone(a.position()), weights, optimizer: await a.model.getOptimizerState() };
    const next = await a.next();
    const b = new PpoRun(createCpuOps(), SMALL, base);
    b.resumeAt(at1);
    const resumed = await b.next();
    expect(resumed.metrics['loss/total']).toBe(next.metrics['loss/total']);
    expect(Array.from(resumed.values)).toEqual(Array.from(next.values));
  });
});
