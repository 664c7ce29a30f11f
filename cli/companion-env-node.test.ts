/**
 * The environment protocol is language-free: examples/guess_env.mjs (plain Node) and
 * examples/guess_env.py (plain Python), each run in sessions of a real companion, give the same
 * seeded guess episodes, with identical observations, statuses, rewards and details per turn, and
 * refuse a bad task with the same error detail.
 */
import { readdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolTokenizer } from '../worker/data/tokenizer';
import { inCompanion } from '../worker/episodes/companion-env';
import type { EnvTask, EnvironmentKind } from '../worker/episodes/environment';
import { GUESS, GUESS_PROMPT, guessTrainTasks } from '../worker/episodes/guess';
import type { EpisodeRolloutOptions } from '../worker/episodes/rollout';
import { collectEpisodes } from '../worker/episodes/rollout';
import type { EnvLog } from './testing/env-companion';
import { guessEnvNodeProgram, guessEnvProgram, guesser, logged, serveEnvCompanion } from './testing/env-companion';

const tok = toolTokenizer();

const options = (kind: EnvironmentKind): EpisodeRolloutOptions => ({
  kind,
  tok,
  maxContext: 64,
  sampling: { temperature: 1 },
  seed: 5,
  policyVersion: 0,
  stepTimeoutMs: 20_000,
});

describe('examples/guess_env.mjs (Node) and examples/guess_env.py (Python) through a real companion', () => {
  let s: Awaited<ReturnType<typeof serveEnvCompanion>>;
  let python: EnvironmentKind;
  let node: EnvironmentKind;
  beforeAll(async () => {
    s = await serveEnvCompanion();
    python = inCompanion(GUESS, { client: s.client, program: await guessEnvProgram(), tok });
    node = inCompanion(GUESS, { client: s.client, program: await guessEnvNodeProgram(), tok });
  });
  afterAll(async () => {
    await s.companion.close();
    await rm(s.root, { recursive: true, force: true });
  });

  it('same seeded episodes: identical observations, statuses, rewards and details per turn, and identical episodes', async () => {
    const tasks = guessTrainTasks(11).take(8);
    const [pyLog, jsLog]: EnvLog[][] = [[], []];
    const viaPython = await collectEpisodes(guesser, tasks, 3, options(logged(python, pyLog)));
    const viaNode = await collectEpisodes(guesser, tasks, 3, options(logged(node, jsLog)));

    expect(jsLog).toEqual(pyLog);
    expect(viaNode.map((e) => e.episode)).toEqual(viaPython.map((e) => e.episode));
    expect(viaNode.map((e) => e.transcript)).toEqual(viaPython.map((e) => e.transcript));
    // The run covers every path of the environment, and no episode failed.
    const steps = pyLog.flatMap((l) => l.steps);
    expect(steps.filter((t) => t.detail === 'invalid action').length, 'invalid actions').toBeGreaterThan(0);
    expect(steps.filter((t) => /lower/.test(t.detail ?? '')).length, '< answers').toBeGreaterThan(0);
    expect(steps.filter((t) => /higher/.test(t.detail ?? '')).length, '> answers').toBeGreaterThan(0);
    expect(steps.filter((t) => t.status === 'done' && t.reward === 1).length, 'correct guesses').toBeGreaterThan(0);
    expect(viaPython.filter((e) => e.episode.status === 'error').map((e) => e.episode.detail)).toEqual([]);
    // Every session was closed: no process, no job directory.
    expect(await s.client.status()).toMatchObject({ connected: true, health: { sessions: { open: 0 } } });
    expect(await readdir(s.root)).toEqual([]);
  });

  it('a bad task (data.secret out of range): the same reset error detail from both programs', async () => {
    const bad: EnvTask = { id: 'guess/64', prompt: GUESS_PROMPT, answer: '64', data: { secret: 64 } };
    const [fromPython] = await collectEpisodes(guesser, [bad], 1, options(python));
    const [fromNode] = await collectEpisodes(guesser, [bad], 1, options(node));

    for (const e of [fromPython, fromNode]) {
      expect([e.episode.status, e.episode.termination, e.episode.reward]).toEqual(['error', 'env_error', null]);
      expect(e.episode.detail).toContain('ValueError: task guess/64: data.secret = 64; expected an integer in 1..63');
    }
    expect(fromNode.episode.detail).toBe(fromPython.episode.detail);
    expect(await readdir(s.root)).toEqual([]);
  });
});
