/**
 * Resume by replay (rollout.ts `restoreSlot`): an environment without state operations (a
 * companion program) is brought back to its journaled turns by reset and the journaled actions
 * in order, each answer checked against the journal. Fakes for unit tests: a seeded fake policy
 * and fake environments (deterministic, or answering differently on replay); the real companion's
 * replay is cli/companion-env-resume.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import type { GenerateOptions, Generated } from '../rollout/generate';
import type { EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import type { Cohort } from './journal';
import { failingAfter } from './testing/failing-journal';
import { MemoryJournal } from './journal';
import type { EpisodeRolloutOptions, EpisodeSampler } from './rollout';
import { collectEpisodes } from './rollout';

const tok = toolTokenizer();

/** A fake policy: each action is two ids from the row's seed, then EOS (deterministic in the seed, like the real samplers). */
const fakeSampler: EpisodeSampler = async (prompts: readonly ArrayLike<number>[], o: GenerateOptions) =>
  prompts.map((p, r): Generated => {
    const seed = o.rowSeeds![r];
    const ids = [3 + (seed % 10), 3 + ((seed >>> 3) % 10), tok.eos];
    return {
      promptIds: Int32Array.from(p),
      sampledIds: Int32Array.from(ids),
      behaviorLogProbs: Float64Array.from(ids, (_, k) => -0.1 * (k + 1)),
      rawLogProbs: Float64Array.from(ids, (_, k) => -0.2 * (k + 1)),
      finishReason: 'stop',
    };
  });

/**
 * A fake environment kind with no getState/setState. Its answer to a step is a function of the
 * task and the actions so far (deterministic), plus `drift()` (0 unless a test makes it differ on
 * replay). Every step it executes is logged.
 */
function fakeStatelessKind(log: string[], drift: () => number = () => 0): EnvironmentKind {
  return {
    name: 'fake-stateless',
    title: 'fake',
    maxTurns: 4,
    maxActionTokens: 4,
    trainTasks: () => ({ take: () => [], position: 0, skip: () => {} }),
    heldOut: () => [],
    verify: (_task, transcript) => transcript.length / 100,
    demonstrate: () => [],
    create(task): Environment {
      let sum = task.id.length;
      let turn = 0;
      return {
        reset: () => Int32Array.from([tok.bos, 3 + (sum % 10)]),
        step: async (action): Promise<EnvStep> => {
          turn++;
          log.push(`${task.id}/${turn}/${action.text}`);
          for (const id of Array.from(action.ids)) sum += id;
          if (turn === 3) return { observation: [], status: 'done', reward: (sum % 7) / 7 };
          return {
            observation: Int32Array.from([3 + ((sum + drift()) % 10)]),
            status: 'running',
            detail: `sum ${sum}`,
          };
        },
      };
    },
  };
}

const tasks: EnvTask[] = ['a', 'bb'].map((id) => ({ id, prompt: id, answer: '', data: {} }));
const cohort: Cohort = { runId: 'r', step: 1, policyVersion: 0, samplerSeed: 11 };
const options = (kind: EnvironmentKind, extra: Partial<EpisodeRolloutOptions> = {}): EpisodeRolloutOptions => ({
  kind,
  tok,
  maxContext: 64,
  sampling: { temperature: 1 },
  seed: 11,
  policyVersion: 0,
  ...extra,
});

describe('resume by replay (an environment without state operations)', () => {
  it('an episode restored by replay on a deterministic environment equals the uninterrupted one', async () => {
    const reference = await collectEpisodes(fakeSampler, tasks, 2, options(fakeStatelessKind([])));
    expect(reference.every((e) => e.episode.status === 'completed' && e.resumedBy === undefined)).toBe(true);
    for (const crashAt of [2, 3]) {
      const journal = new MemoryJournal();
      const log: string[] = [];
      const kind = fakeStatelessKind(log);
      await expect(
        collectEpisodes(
          fakeSampler,
          tasks,
          2,
          options(kind, { journal: { journal: failingAfter(journal, crashAt), cohort } }),
        ),
      ).rejects.toThrow('the tab closed');
      const committed = crashAt - 1; // the starts, then one round of turns per commit
      const eps = await collectEpisodes(fakeSampler, tasks, 2, options(kind, { journal: { journal, cohort } }));
      expect(eps.map((e) => e.episode)).toEqual(reference.map((e) => e.episode));
      expect(eps.map((e) => e.transcript)).toEqual(reference.map((e) => e.transcript));
      expect(eps.map((e) => e.resumedBy)).toEqual(Array(4).fill('replay'));
      expect(eps.map((e) => e.resumed.filter(Boolean).length)).toEqual(Array(4).fill(committed));
      // Every committed turn's action was sent once more, to a fresh environment (the replay).
      const sent = new Map<string, number>();
      for (const k of log) sent.set(k, (sent.get(k) ?? 0) + 1);
      for (const [k, n] of sent) expect(n, k).toBe(Number(k.split('/')[1]) <= committed + 1 ? 2 : 1);
    }
  });

  it('a non-deterministic environment (an observation differs on replay) ends as an infrastructure error, its group aborted, never reward 0', async () => {
    const journal = new MemoryJournal();
    let replaying = false;
    const kind = fakeStatelessKind([], () => (replaying ? 1 : 0));
    await expect(
      collectEpisodes(fakeSampler, tasks, 2, options(kind, { journal: { journal: failingAfter(journal, 3), cohort } })),
    ).rejects.toThrow('the tab closed');
    replaying = true;
    const eps = await collectEpisodes(fakeSampler, tasks, 2, options(kind, { journal: { journal, cohort } }));
    for (const e of eps) {
      expect([e.episode.status, e.episode.termination, e.episode.reward, e.groupAborted, e.resumedBy]).toEqual([
        'error',
        'env_error',
        null,
        true,
        'replay',
      ]);
      expect(e.episode.detail).toMatch(
        /environment 'fake-stateless' could not be replayed to its journaled turns: turn 1: /,
      );
      expect(e.episode.detail).toMatch(
        /the environment answered the ids \[\d+\] where the journal has the ids \[\d+\]: it is not deterministic/,
      );
      // The committed turns are kept for inspection; nothing was sampled after them.
      expect(e.episode.transitions).toHaveLength(2);
      expect(e.resumed).toEqual([true, true]);
    }
  });

  it('an environment with state operations resumes from its snapshot (resumedBy state), not by replay', async () => {
    const log: string[] = [];
    const stateless = fakeStatelessKind(log);
    const kind: EnvironmentKind = {
      ...stateless,
      create(task) {
        let sum = task.id.length;
        const env = stateless.create(task);
        return {
          reset: env.reset,
          step: async (a) => {
            for (const id of Array.from(a.ids)) sum += id;
            return env.step(a);
          },
          getState: () => JSON.stringify({ sum }),
          setState: () => {
            throw new Error('not needed here: a snapshot that cannot be restored ends the episode');
          },
        };
      },
    };
    const journal = new MemoryJournal();
    await expect(
      collectEpisodes(fakeSampler, tasks, 1, options(kind, { journal: { journal: failingAfter(journal, 2), cohort } })),
    ).rejects.toThrow('the tab closed');
    const before = log.length;
    const eps = await collectEpisodes(fakeSampler, tasks, 1, options(kind, { journal: { journal, cohort } }));
    expect(log.length).toBe(before); // no step sent: the snapshot path replays nothing
    for (const e of eps) {
      expect(e.resumedBy).toBe('state');
      expect(e.episode.detail).toMatch(/could not be restored to its journaled turns: not needed here/);
    }
  });
});
