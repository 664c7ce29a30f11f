/**
 * The stabilisers of GRPO/PPO runs (issue 22): verl's learning-rate schedule per sampled batch and
 * DAPO's soft overlong punishment, on hand values, on sessions, through a tiny run, and the
 * options' checks.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { tinySftBase } from './testing/tiny-base';
import { overlongPenalty } from '../rewards/overlong';
import type { Session } from '../rl/types';
import { checkRunOptions, findPreset } from '../presets/table';
import { GRPO_ARITH, GrpoRun } from './grpo';
import { punishOverlong, responseLength } from './grpo-family';
import { rlLrAt } from './schedule';

describe('rlLrAt: verl get_{constant,cosine}_schedule_with_warmup under LambdaLR, one step per batch', () => {
  it('no schedule: the constant lr', () => {
    expect([1, 2, 50].map((b) => rlLrAt(b, 0.01, 50, undefined))).toEqual([0.01, 0.01, 0.01]);
  });

  it('constant with warmup 4: batch k trains at lr · min(1, (k − 1) / 4), so the first at 0', () => {
    const s = { style: 'constant', warmup: 4, minLrRatio: 0 } as const;
    expect([1, 2, 3, 4, 5, 9].map((b) => rlLrAt(b, 1, 10, s))).toEqual([0, 0.25, 0.5, 0.75, 1, 1]);
  });

  it('cosine with warmup 3 over 10 batches to a floor of 0.1: hand values of verl’s lambda', () => {
    const s = { style: 'cosine', warmup: 3, minLrRatio: 0.1 } as const;
    // s = k − 1; after the warmup factor = cos(π (s − 3) / 7) · 0.45 + 0.55.
    const want = [0, 1 / 3, 2 / 3, 1, ...[1, 2, 3, 4, 5, 6].map((d) => Math.cos((Math.PI * d) / 7) * 0.45 + 0.55)];
    want.forEach((w, i) => expect(rlLrAt(i + 1, 2, 10, s)).toBeCloseTo(2 * w, 12));
    // Past the last batch the cosine has reached its floor (progress 1: cos π · 0.45 + 0.55 = 0.1).
    expect(rlLrAt(11, 2, 10, s)).toBeCloseTo(0.2, 12);
  });
});

describe("overlongPenalty: DAPO's soft punishment as verl's DAPO reward manager adds it", () => {
  const o = { buffer: 4, penaltyFactor: 0.5 };
  it('0 up to maxLength − buffer, then linear down to −penaltyFactor at maxLength', () => {
    expect([8, 12, 13, 14, 16].map((L) => overlongPenalty(L, 16, o))).toEqual([0, 0, -0.125, -0.25, -0.5]);
    expect(overlongPenalty(12, 16, { buffer: 4, penaltyFactor: 1 })).toBe(0);
    expect(() => overlongPenalty(3, 16, { buffer: 0, penaltyFactor: 1 })).toThrow(/buffer = 0/);
  });
});

/** A session of calls of (prompt length, sampled length), each call's prompt extending the last. */
function session(calls: [number, number][], reward: number | null): Session {
  return {
    task: 't',
    group: 'g',
    sample: 0,
    attempt: 0,
    status: reward === null ? 'failed' : 'completed',
    reward,
    calls: calls.map(([p, n]) => ({
      promptIds: new Int32Array(p),
      sampledIds: new Int32Array(n),
      behaviorLogProbs: new Float64Array(n),
      version: 0,
      finishReason: 'stop',
    })) as unknown as Session['calls'],
  };
}

describe('punishOverlong on sessions', () => {
  it("counts every id after the first prompt (an episode's observations too) and keeps the score and the penalty", () => {
    const one = session([[7, 14]], 1);
    const episode = session(
      [
        [7, 5],
        [15, 6],
      ],
      1,
    ); // 5 action ids, 3 observation ids, 6 action ids
    expect(responseLength(one)).toBe(14);
    expect(responseLength(episode)).toBe(14);
    const [a, b, failed] = punishOverlong(
      [one, episode, session([[7, 16]], null)],
      { overlongBuffer: 4, overlongPenalty: 1 },
      16,
    );
    expect(a.reward).toBeCloseTo(0.5, 12);
    expect(a.components).toEqual({ score: 1, overlong: -0.5 });
    expect(b.reward).toBeCloseTo(0.5, 12);
    expect(failed.reward).toBeNull();
    expect(punishOverlong([one], {}, 16)[0]).toBe(one);
  });
});

describe('the stabilisers through a GRPO run (CPU, tiny model)', () => {
  const CONFIG = {
    ...GRPO_ARITH,
    prompts: 2,
    group: 4,
    maxNew: 8,
    lr: 1e-2,
    maskZeroAdvantage: false,
    truncation: 'score' as const,
  };

  it('a warmup trains the first batch at lr 0 (the weights do not move) and the second at lr / warmup', async () => {
    const base = await tinySftBase(2);
    const run = new GrpoRun(createCpuOps(), { ...CONFIG, steps: 4, lrSchedule: 'constant', lrWarmup: 2 }, base);
    const name = 'model.layers.0.mlp.down_proj.weight';
    const s1 = await run.next();
    expect(s1.metrics['opt/lr']).toBe(0);
    expect(Array.from((await run.model.getWeights()).get(name)!)).toEqual(Array.from(base.weights.get(name)!));
    const s2 = await run.next();
    expect(s2.metrics['opt/lr']).toBe(0.005);
  });

  it('the overlong penalty lands in the rewards the advantages come from, and in the metrics', async () => {
    const base = await tinySftBase(2);
    // Budget 8, buffer 8: every completion of L ids loses L / 8 · 0.5.
    const s = await new GrpoRun(createCpuOps(), { ...CONFIG, overlongBuffer: 8, overlongPenalty: 0.5 }, base).next();
    for (const x of s.sessions) {
      const L = x.calls[0].sampledIds.length;
      expect(x.components?.overlong).toBeCloseTo((-L / 8) * 0.5, 12);
      expect(x.reward).toBeCloseTo((x.components?.score ?? NaN) - (L / 8) * 0.5, 12);
    }
    expect(s.metrics['reward/overlong_frac']).toBe(1);
    const mean = s.sessions.reduce((a, x) => a + (x.components?.overlong ?? 0), 0) / s.sessions.length;
    expect(s.metrics['reward/overlong_penalty']).toBeCloseTo(mean, 12);
  });
});

describe('the options and their checks', () => {
  it('name the field and the rule; an option read only with another is left alone without it', () => {
    const defaults = findPreset('grpo-calc')!.defaults;
    const msg = (x: Record<string, unknown>) => checkRunOptions({ ...defaults, ...x }).map((p) => p.message);
    expect(msg({ lrSchedule: 'cosine', lrWarmup: 5, minLrRatio: 0.1, overlongBuffer: 8 })).toEqual([]);
    // Clearing a schedule or a buffer leaves its companion field valid (and unread).
    expect(msg({ minLrRatio: 0.1, overlongPenalty: 0.5, filterGroups: undefined, maxGenBatches: 3 })).toEqual([]);
    // grpo-calc's budget is 14 ids × 4 turns.
    expect(msg({ overlongBuffer: 57 }).join()).toMatch(/at most the response budget .* = 56, got 57/);
  });
});
