/**
 * DAPO's dynamic sampling (issue 22 item 2): the group filter on constructed batches, then through
 * a multi-turn run on the shipped calc base, journaled, and resumed from its journal.
 */
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { MemoryJournal } from '../episodes/journal';
import { importCheckpoint } from '../model/checkpoint';
import { readCheckpointDir } from '../model/node-checkpoint-dir';
import type { Session } from '../rl/types';
import { fillBatch, groupVaries } from './dynamic-sampling';
import { GRPO_CALC, EpisodeRun } from './grpo-episodes';

/** A group of `task` whose members have these rewards (null: an aborted member); `scores` the rewards before shaping. */
function group(task: string, rewards: (number | null)[], scores?: number[]): Session[] {
  return rewards.map((reward, sample) => ({
    task,
    group: task,
    sample,
    attempt: 0,
    calls: [],
    status: reward === null ? 'cancelled' : 'completed',
    reward,
    ...(scores ? { components: { score: scores[sample], overlong: reward! - scores[sample] } } : {}),
  }));
}

describe('groupVaries', () => {
  it('success looks through the overlong penalty; score does not; an aborted member drops the group', () => {
    const allFail = group('a', [-0.25, -0.5], [0, 0]);
    expect(groupVaries(allFail, 'success')).toBe(false);
    expect(groupVaries(allFail, 'score')).toBe(true);
    const mixed = group('b', [0.75, 0], [1, 0]);
    expect(groupVaries(mixed, 'success')).toBe(true);
    expect(groupVaries(group('c', [1, null]), 'score')).toBe(false);
    expect(groupVaries(group('d', [0]), 'success')).toBe(true); // a group of one is kept, as verl's
  });
});

describe('fillBatch', () => {
  const batches = [
    [...group('a', [1, 0]), ...group('b', [0, 0]), ...group('c', [1, 1])],
    [...group('d', [0, 1]), ...group('a', [0, 1]), ...group('e', [1, 0])],
  ];
  it('samples until P groups vary, keeps the first P in sampled order, and skips a task drawn again', async () => {
    const drawn: number[] = [];
    const r = await fillBatch(3, { metric: 'success', maxGenBatches: 5 }, async (k) => (drawn.push(k), batches[k]));
    expect(drawn).toEqual([0, 1]);
    expect(r.sessions.map((s) => s.task)).toEqual(['a', 'a', 'd', 'd', 'e', 'e']);
    // Before the filter: five groups drawn (a's second group skipped), half the rewards 1, b and c alike.
    expect(r.metrics).toEqual({
      'filter/gen_batches': 2,
      'filter/groups_drawn': 5,
      'filter/kept_groups': 3,
      'filter/lost_groups': 0,
      'filter/short': 0,
      'filter/reward_mean_before': 0.5,
      'filter/frac_zero_std_before': 0.4,
    });
  });

  it('a group lost to the infrastructure is not replaced by another batch', async () => {
    // b lost an episode to an environment error: with a and b, P = 2 is reached, so no second batch is drawn.
    const failing = [[...group('a', [1, 0]), ...group('b', [0, null]), ...group('c', [1, 1])], batches[1]];
    const drawn: number[] = [];
    const r = await fillBatch(2, { metric: 'success', maxGenBatches: 5 }, async (k) => (drawn.push(k), failing[k]));
    expect(drawn).toEqual([0]);
    expect(r.sessions.map((s) => s.task)).toEqual(['a', 'a', 'b', 'b']);
    expect(r.metrics).toMatchObject({ 'filter/kept_groups': 1, 'filter/lost_groups': 1, 'filter/short': 0 });
    // The lost member has no reward: the mean before the filter is over the five that have one.
    expect(r.metrics['filter/reward_mean_before']).toBeCloseTo(3 / 5, 12);
  });

  it('at maxGenBatches short of P: the kept groups, then the first rejected ones', async () => {
    const r = await fillBatch(3, { metric: 'success', maxGenBatches: 1 }, async (k) => batches[k]);
    expect(r.sessions.map((s) => s.task)).toEqual(['a', 'a', 'b', 'b', 'c', 'c']);
    expect(r.metrics).toMatchObject({ 'filter/gen_batches': 1, 'filter/kept_groups': 1, 'filter/short': 1 });
    expect(r.metrics['filter/frac_zero_std_before']).toBeCloseTo(2 / 3, 12);
    await expect(fillBatch(3, { metric: 'success', maxGenBatches: 0 }, async () => [])).rejects.toThrow(
      /maxGenBatches = 0/,
    );
  });
});

describe('dynamic sampling in a calc run (CPU, the shipped calc base)', () => {
  const base = importCheckpoint(readCheckpointDir('public/checkpoints/calc-base'));
  const config = {
    ...GRPO_CALC,
    prompts: 2,
    group: 8,
    // At T = 1 the base solves ~1% of samples (pass@8 9%): groups with a success are rare; at 0.5, pass@8 is ~45%.
    temperature: 0.5,
    filterGroups: 'success' as const,
    maxGenBatches: 8,
  };

  it('trains on groups that vary, numbers each batch apart in the journal, and resumes the step from it', async () => {
    const journal = new MemoryJournal();
    const run = new EpisodeRun(createCpuOps(), { environment: 'calc', options: config }, base, {
      journal,
      runId: 'r',
      writer: 'first',
    });
    const s = await run.next();
    const batches = s.metrics['filter/gen_batches'];
    // This seed's first batch holds fewer than two groups with a success (a precondition of what follows).
    expect(batches).toBeGreaterThan(1);
    expect(s.metrics['filter/short']).toBe(0);
    expect(s.sessions).toHaveLength(16);
    for (const t of new Set(s.sessions.map((x) => x.task)))
      expect(
        groupVaries(
          s.sessions.filter((x) => x.task === t),
          'success',
        ),
      ).toBe(true);
    expect(run.position().tasksDrawn).toBe(2 * batches);
    // Each batch's 16 episodes journaled under their own indices.
    const records = await journal.load('r', 1);
    const starts = records.filter((r) => r.turn === 0).map((r) => r.episode);
    expect(new Set(starts)).toEqual(new Set(Array.from({ length: 16 * batches }, (_, i) => i)));
    // The step's episodes are the trained sessions' own, from any of its batches.
    expect(s.episodes.map((e) => [e.task.id, e.episode.reward])).toEqual(s.sessions.map((x) => [x.task, x.reward]));
    // A fresh run of the same step over the journal restores every turn and trains on the same groups.
    const again = await new EpisodeRun(createCpuOps(), { environment: 'calc', options: config }, base, {
      journal,
      runId: 'r',
      writer: 'second',
    }).next();
    expect(again.metrics['episodes/resumed_turns']).toBe(
      records.filter((r) => r.turn > 0 && s.episodes.some((e) => e.index === r.episode)).length,
    );
    expect(again.sessions.map((x) => [x.task, x.reward])).toEqual(s.sessions.map((x) => [x.task, x.reward]));
    expect(again.metrics['loss/total']).toBe(s.metrics['loss/total']);
  });
});
