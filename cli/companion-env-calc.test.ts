/**
 * examples/calc_env.py is worker/episodes/calc.ts written as a program (its docstring and the
 * README say it gives the same episodes, turn for turn): the same seeded calc episodes run once
 * with the built-in CALC kind and once with calc_env.py in sessions of a real companion give
 * identical observations, statuses, rewards and details per turn, and identical episodes. The
 * seeded actions cover every path of the environment (a correct and a wrong box, valid and
 * malformed calls, invalid actions) and a truncated action, so the comparison means something.
 */
import { readdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolTokenizer } from '../worker/data/tokenizer';
import { CALC } from '../worker/episodes/calc';
import { inCompanion } from '../worker/episodes/companion-env';
import type { EnvironmentKind } from '../worker/episodes/environment';
import type { EpisodeRolloutOptions } from '../worker/episodes/rollout';
import { collectEpisodes } from '../worker/episodes/rollout';
import type { EnvLog, Turn } from './testing/env-companion';
import { calcEnvProgram, calculator, logged, serveEnvCompanion } from './testing/env-companion';

const tok = toolTokenizer();

const options = (kind: EnvironmentKind): EpisodeRolloutOptions => ({
  kind,
  tok,
  // The prompt (10 ids) and 4 turns of an action (at most 16 ids) and its observation (at most 9).
  maxContext: 128,
  sampling: { temperature: 1 },
  seed: 7,
  policyVersion: 0,
  stepTimeoutMs: 20_000,
});

const count = (steps: Turn[], pred: (t: Turn) => boolean) => steps.filter(pred).length;

describe('examples/calc_env.py through a real companion equals the built-in calc environment', () => {
  let s: Awaited<ReturnType<typeof serveEnvCompanion>>;
  beforeAll(async () => {
    s = await serveEnvCompanion();
  });
  afterAll(async () => {
    await s.companion.close();
    await rm(s.root, { recursive: true, force: true });
  });

  /** The same seeded episodes of `kind` built in and through the companion: their logs and episodes must agree. */
  async function compare(kind: EnvironmentKind) {
    const py = inCompanion(kind, { client: s.client, program: await calcEnvProgram(), tok });
    const tasks = kind.trainTasks(3).take(6);
    const [tsLog, pyLog]: EnvLog[][] = [[], []];
    const builtIn = await collectEpisodes(calculator, tasks, 4, options(logged(kind, tsLog)));
    const viaCompanion = await collectEpisodes(calculator, tasks, 4, options(logged(py, pyLog)));

    expect(builtIn.filter((e) => e.episode.status === 'error').map((e) => e.episode.detail)).toEqual([]);
    expect(pyLog).toEqual(tsLog);
    expect(viaCompanion.map((e) => e.episode)).toEqual(builtIn.map((e) => e.episode));
    expect(viaCompanion.map((e) => e.transcript)).toEqual(builtIn.map((e) => e.transcript));
    // Every session was closed: no process, no job directory.
    expect(await s.client.status()).toMatchObject({ connected: true, health: { sessions: { open: 0 } } });
    expect(await readdir(s.root)).toEqual([]);
    return { steps: tsLog.flatMap((l) => l.steps), builtIn };
  }

  it("CALC's own limits (4 turns, 14 ids an action): identical observations, statuses, rewards and details per turn, and identical episodes", async () => {
    expect([CALC.maxTurns, CALC.maxActionTokens]).toEqual([4, 14]);
    const { steps, builtIn } = await compare(CALC);
    // The seeded actions took every path of the environment and of the rollout's endings.
    expect(
      count(steps, (t) => t.status === 'done' && t.reward === 1),
      'correct boxes',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => t.status === 'done' && t.reward === 0),
      'wrong boxes',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => /^calc\(\d+\+\d+\) = \d+$/.test(t.detail ?? '')),
      'expert calls',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => / = -\d+$/.test(t.detail ?? '')),
      'negative results',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => /^calc\(\d+\*\d+\) = /.test(t.detail ?? '')),
      'products',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => /: malformed, unclosed/.test(t.detail ?? '')),
      'unclosed calls',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => /: malformed, expected two/.test(t.detail ?? '')),
      'malformed calls',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => t.detail === 'invalid action'),
      'invalid actions',
    ).toBeGreaterThan(0);
    const endings = new Set(builtIn.map((e) => e.episode.termination));
    for (const t of ['env_done', 'max_turns', 'max_response_length']) expect(endings, t).toContain(t);
  });

  it('16 ids an action, so calls with 7-digit operands fit: those are refused the same way too', async () => {
    const { steps } = await compare({ ...CALC, maxActionTokens: 16 });
    expect(count(steps, (t) => /: malformed, operands may have at most 6 digits/.test(t.detail ?? ''))).toBeGreaterThan(
      0,
    );
    expect(
      count(steps, (t) => t.status === 'done' && t.reward === 1),
      'correct boxes',
    ).toBeGreaterThan(0);
    expect(
      count(steps, (t) => t.detail === 'invalid action'),
      'invalid actions',
    ).toBeGreaterThan(0);
  });
});
