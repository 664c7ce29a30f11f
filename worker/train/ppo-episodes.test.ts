import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import { episodeRunConfigOf } from '../presets/table';
import { gae } from '../rl/index';
import { EpisodeRun, PPO_CALC } from './grpo-episodes';

const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));

describe('ppo-calc: PPO with a critic on multi-turn episodes', () => {
  it("gives every action id of an episode a value, a return and a GAE advantage, and none to the environment's ids", async () => {
    const run = new EpisodeRun(
      createCpuOps(),
      { environment: 'calc', options: { ...PPO_CALC, prompts: 2, group: 2 } },
      base,
    );
    const s = await run.next();
    const p = s.packed;
    expect(s.values).toBeDefined();
    expect(s.metrics).toHaveProperty('critic/vf_explained_var');
    expect(s.metrics['loss/value']).toBeGreaterThanOrEqual(0);
    for (const [k, session] of s.sessions.entries()) {
      if (!p.counts.trained) break;
      const actionIds = session.calls.reduce((n, c) => n + c.sampledIds.length, 0);
      const onMask = Array.from(p.sessionIds.keys()).filter(
        (i) => p.sessionIds[i] === k + 1 && p.responseMask[i] === 1,
      ).length;
      // A trained episode: one critic figure per action id (observations are context, off the mask).
      if (onMask > 0) expect(session.critic!.advantages).toHaveLength(actionIds);
    }
    // The packed advantages are GAE's over the values the run scored (per session, calls in order).
    const again = gae(
      {
        rewards: p.tokenRewards,
        values: s.values!,
        mask: p.responseMask,
        rows: p.rows,
        width: p.width,
        sessionIds: p.sessionIds,
        callIndex: p.callIndex,
      },
      { gamma: 1, lam: 0.95, whiten: true },
    );
    expect(Array.from(p.advantages)).toEqual(Array.from(again.advantages));
    expect(Array.from(s.returns!)).toEqual(Array.from(again.returns));
    expect(episodeRunConfigOf(PPO_CALC)).toEqual({ environment: 'calc', options: PPO_CALC });
  });
});
