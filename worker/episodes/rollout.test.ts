import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import { pack } from '../rl/pack';
import { sessionOf } from '../rl/session-of';
import type { GenerateOptions, Generated } from '../rollout/generate';
import type { EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import type { Cohort } from './journal';
import { failingAfter } from './testing/failing-journal';
import { MemoryJournal } from './journal';
import type { EpisodeRolloutOptions, EpisodeSampler } from './rollout';
import { collectEpisodes, readJournal } from './rollout';

const tok = toolTokenizer();
const EOS = tok.eos;

/**
 * A fake policy for unit tests: each action is `length` ids derived from the row's seed, then EOS
 * (or no EOS when `noEos`). Deterministic in the seed alone, like the real per-turn samplers.
 */
function fakeSampler(length = 2, noEos = false): EpisodeSampler & { calls: number } {
  const f = async (prompts: readonly ArrayLike<number>[], o: GenerateOptions): Promise<Generated[]> => {
    f.calls++;
    return prompts.map((p, r) => {
      const seed = o.rowSeeds![r];
      const ids = Array.from({ length: Math.min(length, o.maxNew) }, (_, k) => 3 + ((seed >>> (3 * k)) % 10));
      if (!noEos && ids.length < o.maxNew) ids.push(EOS);
      return {
        promptIds: Int32Array.from(p),
        sampledIds: Int32Array.from(ids),
        behaviorLogProbs: Float64Array.from(ids, (_, k) => -0.1 * (k + 1)),
        rawLogProbs: Float64Array.from(ids, (_, k) => -0.2 * (k + 1)),
        finishReason: ids.at(-1) === EOS ? 'stop' : 'length',
      };
    });
  };
  f.calls = 0;
  return f;
}

type Behaviour = (turn: number, task: EnvTask) => EnvStep | Promise<EnvStep>;

/** A test environment that counts every step it executes, per (task, sample-agnostic) key, across instances. */
function countingKind(
  behaviour: Behaviour,
  executions: Map<string, number>,
  over: Partial<EnvironmentKind> = {},
): EnvironmentKind {
  return {
    name: 'test',
    title: 'test',
    maxTurns: 5,
    maxActionTokens: 4,
    trainTasks: () => ({ take: () => [], position: 0, skip: () => {} }),
    heldOut: () => [],
    verify: () => 0.5,
    demonstrate: () => [],
    create(task): Environment {
      let turn = 0;
      return {
        reset: () => Int32Array.from([tok.bos, 3]),
        step: (action) => {
          turn++;
          const key = `${task.id}/${turn}/${action.text}`;
          executions.set(key, (executions.get(key) ?? 0) + 1);
          return behaviour(turn, task);
        },
        getState: () => JSON.stringify({ turn }),
        setState: (s) => void (turn = (JSON.parse(s) as { turn: number }).turn),
      };
    },
    ...over,
  };
}

const tasks: EnvTask[] = [0, 1].map((i) => ({ id: `t${i}`, prompt: `t${i}`, answer: '1', data: {} }));
const obs = (ids: number[], status: EnvStep['status'] = 'running', reward?: number): EnvStep => ({
  observation: Int32Array.from(ids),
  status,
  ...(reward !== undefined ? { reward } : {}),
});
const options = (kind: EnvironmentKind, extra: Partial<EpisodeRolloutOptions> = {}): EpisodeRolloutOptions => ({
  kind,
  tok,
  maxContext: 64,
  sampling: { temperature: 1 },
  seed: 7,
  policyVersion: 3,
  ...extra,
});

describe('collectEpisodes: terminations', () => {
  it("env_done after three turns: completed, the environment's reward, contexts extend turn by turn", async () => {
    const ex = new Map<string, number>();
    const kind = countingKind((turn) => (turn < 3 ? obs([13, 14]) : obs([], 'done', 1)), ex);
    const eps = await collectEpisodes(fakeSampler(), tasks, 2, options(kind));
    expect(eps.map((e) => [e.index, e.group, e.sample])).toEqual([
      [0, 't0', 0],
      [1, 't0', 1],
      [2, 't1', 0],
      [3, 't1', 1],
    ]);
    for (const e of eps) {
      expect(e.episode.status).toBe('completed');
      expect(e.episode.termination).toBe('env_done');
      expect(e.episode.reward).toBe(1);
      expect(e.episode.transitions).toHaveLength(3);
      const [t1, t2] = e.episode.transitions;
      expect(Array.from(t2.action.context)).toEqual([
        ...Array.from(t1.action.context),
        ...Array.from(t1.action.tokens),
        13,
        14,
      ]);
      expect(t1.action.policyStep).toBe(3);
      expect(e.traces[1].parentTraceId).toBe(e.traces[0].traceId);
      expect(e.traces[1].promptDeltaIds).toEqual([13, 14]);
    }
  });

  it('max_turns, max_prompt_length and max_response_length end as truncated and are scored by the verifier', async () => {
    const ex = new Map<string, number>();
    const forever = countingKind(() => obs([13]), ex, { maxTurns: 2 });
    const a = await collectEpisodes(fakeSampler(), tasks.slice(0, 1), 1, options(forever));
    expect([
      a[0].episode.status,
      a[0].episode.termination,
      a[0].episode.reward,
      a[0].episode.transitions.length,
    ]).toEqual(['truncated', 'max_turns', 0.5, 2]);
    const long = countingKind(() => obs(Array(20).fill(13)), ex, { maxTurns: 10 });
    const b = await collectEpisodes(fakeSampler(), tasks.slice(0, 1), 1, options(long, { maxContext: 40 }));
    expect([b[0].episode.status, b[0].episode.termination]).toEqual(['truncated', 'max_prompt_length']);
    const c = await collectEpisodes(fakeSampler(4, true), tasks.slice(0, 1), 1, options(forever));
    expect([c[0].episode.status, c[0].episode.termination, c[0].episode.transitions.length]).toEqual([
      'truncated',
      'max_response_length',
      1,
    ]);
    expect(ex.size).toBeGreaterThan(0);
  });

  it('an environment that throws, hangs, answers ids outside the vocabulary or an oversized observation fails its episode (env_error) and aborts its group, not the run', async () => {
    const faults: Record<string, Behaviour> = {
      throws: () => {
        throw new Error('boom');
      },
      hangs: () => new Promise<EnvStep>(() => {}),
      outside: () => obs([tok.size + 5]),
      oversized: () => obs(Array(100).fill(13)),
    };
    for (const [name, fault] of Object.entries(faults)) {
      const kind = countingKind(
        (turn, task) =>
          task.id === 't0' && turn === 2 ? fault(turn, task) : turn < 3 ? obs([13]) : obs([], 'done', 1),
        new Map(),
      );
      const eps = await collectEpisodes(fakeSampler(), tasks, 2, options(kind, { stepTimeoutMs: 50 }));
      const failed = eps.filter((e) => e.group === 't0');
      for (const e of failed) {
        expect(e.episode.status, name).toBe('error');
        expect(e.episode.termination, name).toBe('env_error');
        expect(e.episode.reward, name).toBeNull();
        expect(e.groupAborted).toBe(true);
        expect(e.episode.transitions, `${name}: the partial episode is kept`).toHaveLength(2);
      }
      expect(failed[0].episode.detail, name).toMatch(
        {
          throws: /boom/,
          hangs: /did not answer within 50 ms/,
          outside: /not an id of the vocabulary/,
          oversized: /at most 64/,
        }[name]!,
      );
      for (const e of eps.filter((x) => x.group === 't1'))
        expect([e.episode.status, e.groupAborted], name).toEqual(['completed', false]);
    }
  });

  it('cancellation before a turn cancels the running episodes, keeps what they did, aborts their groups', async () => {
    let rounds = 0;
    const kind = countingKind(() => obs([13]), new Map());
    const eps = await collectEpisodes(fakeSampler(), tasks, 1, options(kind, { shouldCancel: () => rounds++ >= 2 }));
    for (const e of eps)
      expect([e.episode.status, e.episode.transitions.length, e.groupAborted, e.episode.reward]).toEqual([
        'cancelled',
        2,
        true,
        null,
      ]);
  });
});

describe('collectEpisodes: progress', () => {
  it("tells each round's environment steps: 0 of n before the first, then one report per step answered, and each episode as it ends", async () => {
    const ex = new Map<string, number>();
    const kind = countingKind((turn) => (turn < 2 ? obs([13]) : obs([], 'done', 1)), ex);
    const told: [string, number, number][] = [];
    await collectEpisodes(
      fakeSampler(),
      tasks,
      2,
      options(kind, {
        onEnvSteps: (answered, steps) => told.push(['env', answered, steps]),
        onProgress: (round, finished) => told.push(['round', round, finished]),
      }),
    );
    // Round 1 ends no episode; in round 2 each step that ends one is told as it answers, then the round.
    const env = (k: number): [string, number, number] => ['env', k, 4];
    expect(told).toEqual([
      ...[0, 1, 2, 3, 4].map(env),
      ['round', 1, 0],
      env(0),
      ...[1, 2, 3, 4].flatMap((k): [string, number, number][] => [env(k), ['round', 2, k]]),
      ['round', 2, 4],
    ]);
  });

  it('an action that ran out of ids takes no environment step, so none is told', async () => {
    const told: number[][] = [];
    await collectEpisodes(
      fakeSampler(8, true),
      tasks,
      2,
      options(
        countingKind(() => obs([13]), new Map()),
        { onEnvSteps: (a, n) => told.push([a, n]) },
      ),
    );
    expect(told).toEqual([]);
  });
});

describe('sessionOf an episode: observations are context, actions carry loss', () => {
  it('packs one chain per episode with responseMask on sampled ids only', async () => {
    const kind = countingKind((turn) => (turn < 3 ? obs([13, 14, 15]) : obs([], 'done', turn)), new Map());
    const [e] = await collectEpisodes(fakeSampler(), tasks.slice(0, 1), 1, options(kind));
    const session = sessionOf(e.episode, e.group, e.task.id);
    expect(session.calls).toHaveLength(3);
    const packed = pack([session, { ...session, sample: 1, reward: 0 }], 64, { estimator: 'grpo' });
    if (!packed.ok) throw new Error(packed.message);
    const row = Array.from(packed.inputIds.subarray(0, 64));
    const mask = Array.from(packed.responseMask.subarray(0, 64));
    const last = e.episode.transitions[2];
    const full = [...Array.from(last.action.context), ...Array.from(last.action.tokens)];
    expect(row.slice(0, full.length)).toEqual(full);
    // Every sampled id (EOS included) carries loss; the reset context and the observations do not.
    const expected = new Array(full.length).fill(0);
    let at = 2;
    for (const t of e.episode.transitions) {
      for (let k = 0; k < t.action.tokens.length; k++) expected[at + k] = 1;
      at += t.action.tokens.length + 3;
    }
    expect(mask.slice(0, full.length)).toEqual(expected);
    expect(packed.segmentIds.subarray(0, full.length).every((s) => s === packed.segmentIds[0])).toBe(true);
  });
});

describe('collectEpisodes with a journal', () => {
  const cohort: Cohort = { runId: 'r', step: 4, policyVersion: 3, samplerSeed: 7 };

  it('recovery after a crash resumes from the last committed turn: no committed turn executes twice, the result equals an uninterrupted run', async () => {
    const behaviour: Behaviour = (turn) => (turn < 4 ? obs([13, 12 + turn]) : obs([], 'done', 1));
    const reference = await collectEpisodes(fakeSampler(), tasks, 2, options(countingKind(behaviour, new Map())));
    for (const crashAt of [1, 2, 3]) {
      const journal = new MemoryJournal();
      const executions = new Map<string, number>();
      const kind = countingKind(behaviour, executions);
      await expect(
        collectEpisodes(
          fakeSampler(),
          tasks,
          2,
          options(kind, { journal: { journal: failingAfter(journal, crashAt), cohort } }),
        ),
      ).rejects.toThrow('the tab closed');
      const committedTurns = (await journal.load('r', 4)).filter((r) => r.turn > 0).length;
      expect(committedTurns).toBe(4 * (crashAt - 1));
      const eps = await collectEpisodes(fakeSampler(), tasks, 2, options(kind, { journal: { journal, cohort } }));
      // Each step of a committed turn ran once; the turn under way at the crash ran again (it was never committed).
      for (const [key, n] of executions) {
        const turn = Number(key.split('/')[1]);
        expect(n, key).toBe(turn === crashAt - 1 + 1 ? 2 : 1);
      }
      expect(eps.map((e) => e.resumed.filter(Boolean).length)).toEqual(Array(4).fill(crashAt - 1));
      expect(eps.map((e) => e.episode)).toEqual(reference.map((e) => e.episode));
      // Running it again executes nothing: every turn is committed.
      const before = [...executions.values()].reduce((a, b) => a + b, 0);
      const again = await collectEpisodes(fakeSampler(), tasks, 2, options(kind, { journal: { journal, cohort } }));
      expect([...executions.values()].reduce((a, b) => a + b, 0)).toBe(before);
      expect(again.map((e) => e.episode)).toEqual(reference.map((e) => e.episode));
    }
  });

  it('a record that fails its checksum makes its episode corrupt: not continued, not scored, its group aborted', async () => {
    const journal = new MemoryJournal();
    const kind = countingKind((turn) => (turn < 3 ? obs([13]) : obs([], 'done', 1)), new Map());
    await collectEpisodes(fakeSampler(), tasks, 2, options(kind, { journal: { journal, cohort } }));
    const rec = journal.raw('r', 4, 1, 2)!;
    (rec as { sampleMs: number }).sampleMs += 1; // one field changed after the commit
    const executions = new Map<string, number>();
    const eps = await collectEpisodes(
      fakeSampler(),
      tasks,
      2,
      options(
        countingKind((turn) => (turn < 3 ? obs([13]) : obs([], 'done', 1)), executions),
        { journal: { journal, cohort } },
      ),
    );
    expect(executions.size).toBe(0);
    expect([eps[1].corrupt, eps[1].episode.status, eps[1].episode.reward, eps[1].episode.transitions.length]).toEqual([
      true,
      'error',
      null,
      1,
    ]);
    expect(eps[1].episode.detail).toMatch(/step 4, episode 1, turn 2 failed its checksum/);
    expect(eps[0].groupAborted).toBe(true);
    expect([eps[2].corrupt, eps[2].groupAborted, eps[2].episode.status]).toEqual([false, false, 'completed']);
  });

  it('a first context with no room for an action ends the episode in its start record; the journal reads it back as ended, not running', async () => {
    const journal = new MemoryJournal();
    const kind = countingKind(() => obs([], 'done', 1), new Map());
    const cramped = {
      ...kind,
      create: (task: EnvTask) => ({
        ...kind.create(task),
        reset: () => Int32Array.from([tok.bos, ...Array(61).fill(3)]),
      }),
    };
    const sampler = fakeSampler();
    const eps = await collectEpisodes(
      sampler,
      tasks.slice(0, 1),
      2,
      options(cramped, { journal: { journal, cohort } }),
    );
    expect(sampler.calls).toBe(0);
    expect(eps.map((e) => [e.episode.status, e.episode.termination, e.episode.transitions.length])).toEqual([
      ['truncated', 'max_prompt_length', 0],
      ['truncated', 'max_prompt_length', 0],
    ]);
    const records = await journal.load('r', 4);
    expect(records.map((r) => [r.kind, r.kind === 'start' ? r.ended?.termination : null])).toEqual([
      ['start', 'max_prompt_length'],
      ['start', 'max_prompt_length'],
    ]);
    const read = await readJournal(records, cramped, tok, 2);
    expect(read.map((e) => [e.episode.status, e.episode.termination, e.episode.reward])).toEqual(
      eps.map((e) => [e.episode.status, e.episode.termination, e.episode.reward]),
    );
  });

  it('refuses a journal written by another cohort', async () => {
    const journal = new MemoryJournal();
    const kind = countingKind(() => obs([], 'done', 1), new Map());
    await collectEpisodes(fakeSampler(), tasks, 1, options(kind, { journal: { journal, cohort } }));
    await expect(
      collectEpisodes(
        fakeSampler(),
        tasks,
        1,
        options(kind, { journal: { journal, cohort: { ...cohort, policyVersion: 9 } } }),
      ),
    ).rejects.toThrow(/written by cohort/);
  });
});
