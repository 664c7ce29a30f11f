/**
 * The worker's CompanionEnvironment against the real companion server, the parts the issue "Your
 * own environment" (items 2 and 3) added: a journaled guess episode in companion sessions
 * (examples/guess_env.py, which has no state operations) resumes by replay and equals the
 * uninterrupted one; a calc episode (examples/calc_env.py, which sends its state) resumes from the
 * journaled state without stepping any committed turn again; opening a session waits out a companion at capacity until a place frees; and
 * a companion kind's step deadline sits above the companion's wall, whose default the worker
 * restates.
 */
import { readdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../kernels/common/random';
import { sandboxLimitsSchema } from '../companion/protocol';
import {
  COMPANION_DEFAULT_WALL_SECONDS,
  COMPANION_SESSION_PLACES,
  CompanionClient,
} from '../worker/companion-client/client';
import { DEFAULT_SESSIONS } from '../companion/server';
import { toolTokenizer } from '../worker/data/tokenizer';
import {
  TOKEN,
  calcEnvProgram,
  calculator,
  guessBounds,
  guessEnvProgram,
  sampledAction,
  serveEnvCompanion,
} from './testing/env-companion';
import { CALC } from '../worker/episodes/calc';
import type { EnvironmentKind } from '../worker/episodes/environment';
import { DEADLINE_MARGIN_MS, companionDeadlineMs, inCompanion } from '../worker/episodes/companion-env';
import { GUESS, guessTrainTasks } from '../worker/episodes/guess';
import type { Cohort } from '../worker/episodes/journal';
import { MemoryJournal } from '../worker/episodes/journal';
import { failingAfter } from '../worker/episodes/testing/failing-journal';
import type { EpisodeRolloutOptions, EpisodeSampler } from '../worker/episodes/rollout';
import { collectEpisodes } from '../worker/episodes/rollout';

const tok = toolTokenizer();

/** A seeded stand-in for the policy: binary search on the feedback so far, sometimes a random guess. */
const guesser: EpisodeSampler = async (prompts, o) =>
  prompts.map((p, r) => {
    const rand = mulberry32(o.rowSeeds![r]);
    const { lo, hi } = guessBounds(p);
    const text = rand() < 0.7 ? String(Math.floor((lo + hi) / 2)) : String(1 + Math.floor(rand() * 63));
    return sampledAction(p, [...tok.encode(text), tok.eos]);
  });

const serve = serveEnvCompanion;
const program = guessEnvProgram;

describe('guess_env.py in companion sessions: resume by replay', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(64);
  });
  afterAll(async () => {
    await s.companion.close();
    await rm(s.root, { recursive: true, force: true });
  });

  it('an episode interrupted after committed turns resumes by replay and equals the uninterrupted one', async () => {
    const kind = inCompanion(GUESS, { client: s.client, program: await program(), tok });
    const tasks = guessTrainTasks(5).take(3);
    const options = (extra: Partial<EpisodeRolloutOptions> = {}): EpisodeRolloutOptions => ({
      kind,
      tok,
      maxContext: 64,
      sampling: { temperature: 1 },
      seed: 9,
      policyVersion: 0,
      ...extra,
    });
    const reference = await collectEpisodes(guesser, tasks, 2, options());
    const cohort: Cohort = { runId: 'r', step: 1, policyVersion: 0, samplerSeed: 9 };
    const journal = new MemoryJournal();
    const failing = failingAfter(journal, 3);
    await expect(
      collectEpisodes(guesser, tasks, 2, options({ journal: { journal: failing, cohort } })),
    ).rejects.toThrow('the tab closed');
    const eps = await collectEpisodes(guesser, tasks, 2, options({ journal: { journal, cohort } }));
    expect(eps.map((e) => e.episode)).toEqual(reference.map((e) => e.episode));
    // Episodes still running after the two committed rounds were replayed; those that had ended were not.
    const replayed = eps.filter((e) => e.resumedBy === 'replay');
    expect(replayed.length).toBeGreaterThan(0);
    for (const e of replayed) expect(e.resumed.slice(0, 2)).toEqual([true, true]);
    expect(await s.client.status()).toMatchObject({ connected: true, health: { sessions: { open: 0 } } });
    expect(await readdir(s.root)).toEqual([]);
  });
});

describe('calc_env.py in companion sessions: resume from the journaled state', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve(64);
  });
  afterAll(async () => {
    await s.companion.close();
    await rm(s.root, { recursive: true, force: true });
  });

  it('an interrupted episode is restored by set_state: no committed turn is stepped again, and it equals the uninterrupted one', async () => {
    const base = inCompanion(CALC, { client: s.client, program: await calcEnvProgram(), tok });
    let steps = 0;
    // The kind's environments, counting the steps sent to the program (state calls pass through).
    const counted: EnvironmentKind = {
      ...base,
      create(task) {
        const env = base.create(task);
        return {
          reset: () => env.reset(),
          step: (a) => {
            steps++;
            return env.step(a);
          },
          getState: () => env.getState?.(),
          setState: (state) => env.setState!(state),
          close: () => env.close?.(),
        };
      },
    };
    const tasks = CALC.trainTasks(4).take(3);
    const options = (extra: Partial<EpisodeRolloutOptions> = {}): EpisodeRolloutOptions => ({
      kind: counted,
      tok,
      maxContext: 128,
      sampling: { temperature: 1 },
      seed: 9,
      policyVersion: 0,
      ...extra,
    });
    const reference = await collectEpisodes(calculator, tasks, 2, options());
    const cohort: Cohort = { runId: 'r', step: 1, policyVersion: 0, samplerSeed: 9 };
    const journal = new MemoryJournal();
    await expect(
      collectEpisodes(calculator, tasks, 2, options({ journal: { journal: failingAfter(journal, 3), cohort } })),
    ).rejects.toThrow('the tab closed');
    steps = 0;
    const eps = await collectEpisodes(calculator, tasks, 2, options({ journal: { journal, cohort } }));
    expect(eps.map((e) => e.episode)).toEqual(reference.map((e) => e.episode));
    const restored = eps.filter((e) => e.resumedBy === 'state');
    expect(restored.length).toBeGreaterThan(0);
    expect(eps.filter((e) => e.resumedBy === 'replay')).toEqual([]);
    // Only the turns not restored from the journal were sent to the program (an action without EOS sends none).
    const fresh = eps.flatMap((e) => e.episode.transitions.filter((t, i) => !e.resumed[i] && t.action.terminated));
    expect(steps).toBe(fresh.length);
    expect(eps.some((e) => e.resumed.some(Boolean) && e.resumed.some((r) => !r))).toBe(true);
    expect(await s.client.status()).toMatchObject({ connected: true, health: { sessions: { open: 0 } } });
    expect(await readdir(s.root)).toEqual([]);
  });
});

describe('a companion at capacity, and the step deadline', () => {
  it('opening a session waits out the 503 + Retry-After until a place frees', async () => {
    const { companion, client, root } = await serve(1);
    try {
      const p = await program();
      const held = await client.openSession(p);
      setTimeout(() => void client.closeSession(held.id), 1500);
      const t0 = performance.now();
      const opened = await client.openSession(p);
      expect(performance.now() - t0).toBeGreaterThan(900);
      await client.closeSession(opened.id);
    } finally {
      await companion.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it("a companion kind's deadline sits above the companion's wall, whose default the worker restates", async () => {
    expect(sandboxLimitsSchema.parse({}).wallSeconds).toBe(COMPANION_DEFAULT_WALL_SECONDS);
    expect(DEFAULT_SESSIONS.max).toBe(COMPANION_SESSION_PLACES);
    const client = new CompanionClient('http://127.0.0.1:9', TOKEN);
    const p = await program();
    const kind = inCompanion(GUESS, { client, program: p, tok });
    expect(kind.stepTimeoutMs).toBe(companionDeadlineMs({ program: p }));
    expect(kind.stepTimeoutMs).toBeGreaterThanOrEqual(10_000 + DEADLINE_MARGIN_MS);
    const { limits: _none, ...noLimits } = p;
    expect(companionDeadlineMs({ program: noLimits })).toBeGreaterThan(COMPANION_DEFAULT_WALL_SECONDS * 1000);
  });
});
