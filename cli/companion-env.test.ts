/**
 * The worker's CompanionEnvironment against the real companion server (here, in cli/, because
 * only a Node test may import both sides): the same seeded guess episodes run once with the
 * built-in TypeScript environment and once with examples/guess_env.py in companion sessions give
 * identical observations, statuses and rewards per turn, and identical episodes; a full companion
 * or the environment's own error or exit ends the episode as an error (masked from training),
 * never a reward 0; and a companion that stops answering (unreachable, gone mid-episode) stops the
 * collection before the round under way is committed (EnvironmentUnavailable).
 */
import { readdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  EnvResetReply,
  EnvResetRequest,
  EnvSessionOpened,
  EnvSetStateReply,
  EnvSetStateRequest,
  EnvSessionRequest,
  EnvStepReply,
  EnvStepRequest,
} from '../companion/protocol';
import type {
  SessionOpened,
  SessionRequest,
  SessionResetReply,
  SessionResetRequest,
  SessionSetStateReply,
  SessionSetStateRequest,
  SessionStepReply,
  SessionStepRequest,
} from '../worker/companion-client/client';

import { toolTokenizer } from '../worker/data/tokenizer';
import type { EnvLog } from './testing/env-companion';
import { guessEnvProgram, guesser, logged, serveEnvCompanion } from './testing/env-companion';
import { inCompanion } from '../worker/episodes/companion-env';
import type { EnvironmentKind } from '../worker/episodes/environment';
import { EnvironmentUnavailable } from '../worker/episodes/environment';
import { MemoryJournal } from '../worker/episodes/journal';
import { GUESS, guessTrainTasks } from '../worker/episodes/guess';
import type { CollectedEpisode, EpisodeRolloutOptions, EpisodeSampler } from '../worker/episodes/rollout';
import { collectEpisodes } from '../worker/episodes/rollout';

/** The worker restates the session wire types (its project cannot compile the companion's); this fails to compile when they drift. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const AGREE: [
  Same<EnvSessionRequest, SessionRequest>,
  Same<EnvSessionOpened, SessionOpened>,
  Same<EnvResetRequest, SessionResetRequest>,
  Same<EnvStepRequest, SessionStepRequest>,
  Same<EnvResetReply, SessionResetReply>,
  Same<EnvStepReply, SessionStepReply>,
  Same<EnvSetStateRequest, SessionSetStateRequest>,
  Same<EnvSetStateReply, SessionSetStateReply>,
] = [true, true, true, true, true, true, true, true];

const tok = toolTokenizer();

const options = (kind: EnvironmentKind, extra: Partial<EpisodeRolloutOptions> = {}): EpisodeRolloutOptions => ({
  kind,
  tok,
  maxContext: 64,
  sampling: { temperature: 1 },
  seed: 5,
  policyVersion: 0,
  stepTimeoutMs: 20_000,
  ...extra,
});

const serve = serveEnvCompanion;

/** A Python environment from a source text, run as `python3 -I -S env.py`. */
const python = (source: string) => ({
  files: { 'env.py': source },
  argv: ['python3', '-I', '-S', 'env.py'],
  limits: { wallSeconds: 10 },
});

const failed = (e: CollectedEpisode) => [e.episode.status, e.episode.termination, e.episode.reward, e.groupAborted];

describe('examples/guess_env.py through a real companion equals the built-in guess environment', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s.companion.close();
    await rm(s.root, { recursive: true, force: true });
  });

  it('the session wire types agree on both sides', () => {
    expect(AGREE.every(Boolean)).toBe(true);
  });

  it('same seeded episodes: identical observations, statuses, rewards and details per turn, and identical episodes', async () => {
    const py = inCompanion(GUESS, { client: s.client, program: await guessEnvProgram(), tok });
    const tasks = guessTrainTasks(11).take(8);
    const [tsLog, pyLog]: EnvLog[][] = [[], []];
    const builtIn = await collectEpisodes(guesser, tasks, 3, options(logged(GUESS, tsLog)));
    const viaCompanion = await collectEpisodes(guesser, tasks, 3, options(logged(py, pyLog)));

    expect(pyLog).toEqual(tsLog);
    expect(viaCompanion.map((e) => e.episode)).toEqual(builtIn.map((e) => e.episode));
    expect(viaCompanion.map((e) => e.transcript)).toEqual(builtIn.map((e) => e.transcript));
    // The run covers every path of the environment and of the rollout's endings.
    const steps = tsLog.flatMap((l) => l.steps);
    expect(steps.filter((t) => t.detail === 'invalid action').length, 'invalid actions').toBeGreaterThan(0);
    expect(steps.filter((t) => /lower/.test(t.detail ?? '')).length, '< answers').toBeGreaterThan(0);
    expect(steps.filter((t) => /higher/.test(t.detail ?? '')).length, '> answers').toBeGreaterThan(0);
    const endings = new Set(builtIn.map((e) => e.episode.termination));
    for (const t of ['env_done', 'max_turns', 'max_response_length']) expect(endings, t).toContain(t);
    expect(builtIn.some((e) => e.episode.reward === 1) && builtIn.some((e) => e.episode.reward === 0)).toBe(true);
    // Every session was closed: no process, no job directory.
    expect(await s.client.status()).toMatchObject({ connected: true, health: { sessions: { open: 0 } } });
    expect(await readdir(s.root)).toEqual([]);
  });

  it("the environment's own error and its exit mid-episode fail the episode (env_error), never a reward 0", async () => {
    const exits = python(`
import json, sys
for n, line in enumerate(sys.stdin):
    req = json.loads(line)
    if req["op"] == "reset":
        if req["task"]["id"] == "guess/1":
            print(json.dumps({"status": "error", "detail": "task guess/1 is not available"}), flush=True)
        else:
            print(json.dumps({"context": [1, 3]}), flush=True)
    elif n >= 2:
        sys.exit(3)
    elif req["op"] == "step":
        print(json.dumps({"observation": [32], "status": "running"}), flush=True)
`);
    const kind = inCompanion(GUESS, { client: s.client, program: exits, tok });
    const eps = await collectEpisodes(guesser, guessTrainTasks(11).take(1).concat(GUESS.heldOut(1)), 1, options(kind));
    const [exited, refused] = eps;
    expect(failed(exited)).toEqual(['error', 'env_error', null, true]);
    // The companion names the failure's kind (companion/protocol.ts ENV_ERROR_KINDS) before its detail.
    expect(exited.episode.detail).toMatch(
      /the environment reported an error: exited: the environment exited \(exit code 3\) before answering step/,
    );
    expect(failed(refused)).toEqual(['error', 'env_error', null, true]);
    expect(refused.episode.detail).toMatch(
      /failed to start: the environment could not start task guess\/1: environment: task guess\/1 is not available/,
    );
    expect(await readdir(s.root)).toEqual([]);
  });
});

describe('a companion that fails: the episode is an infrastructure failure, never a reward 0', () => {
  const program = guessEnvProgram;

  it('unreachable: the collection stops with EnvironmentUnavailable naming the companion, no episode scored', async () => {
    const { companion, client, root } = await serve();
    await companion.close();
    const kind = inCompanion(GUESS, { client, program: await program(), tok });
    const collecting = collectEpisodes(guesser, guessTrainTasks(3).take(2), 2, options(kind));
    await expect(collecting).rejects.toThrow(EnvironmentUnavailable);
    await expect(collecting).rejects.toThrow(
      new RegExp(
        'the companion at http://127\\.0\\.0\\.1:\\d+ stopped answering \\(no companion answers at .*\\): ' +
          'start one with npx dewpoint companion, connect it in System, then Continue',
      ),
    );
    await rm(root, { recursive: true, force: true });
  });

  it('full (503): past its capacity wait the episode without a session fails and aborts its group; the others run', async () => {
    const { companion, client, root } = await serve(1);
    try {
      // A short wait (the default waits up to 10 s for a place): the only session stays open all episode.
      const capacityWait = { totalMs: 300, defaultMs: 100, maxEachMs: 100 };
      const kind = inCompanion(GUESS, { client, program: await program(), tok, capacityWait });
      const [first, second] = await collectEpisodes(guesser, guessTrainTasks(3).take(1), 2, options(kind));
      expect(first.episode.status).not.toBe('error');
      expect(failed(second)).toEqual(['error', 'env_error', null, true]);
      expect(second.episode.detail).toMatch(/at capacity.*HTTP 503: all 1 environment sessions are open/);
      expect(first.groupAborted).toBe(true);
    } finally {
      await companion.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('gone mid-episode: the collection stops before committing the round under way; the committed turns stay in the journal', async () => {
    const { companion, client, root } = await serve();
    let calls = 0;
    // The companion stops between the first and the second action.
    const stopping: EpisodeSampler = async (prompts, o) => {
      if (++calls === 2) await companion.close();
      return guesser(prompts, { ...o, rowSeeds: o.rowSeeds!.map(() => 0) });
    };
    const kind = inCompanion(GUESS, { client, program: await program(), tok });
    const journal = new MemoryJournal();
    const cohort = { runId: 'r', step: 1, policyVersion: 0, samplerSeed: 5 };
    await expect(
      collectEpisodes(stopping, [GUESS.heldOut(1)[0]], 1, options(kind, { journal: { journal, cohort } })),
    ).rejects.toThrow(EnvironmentUnavailable);
    // The start and turn 1 were committed; turn 2, whose step the companion never answered, was not.
    expect((await journal.load('r', 1)).map((r) => [r.kind, r.turn])).toEqual([
      ['start', 0],
      ['turn', 1],
    ]);
    expect(await readdir(root)).toEqual([]);
    await rm(root, { recursive: true, force: true });
  });
});
