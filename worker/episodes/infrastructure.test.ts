/**
 * What a program writes to stderr travels with its episode (kept by the rollout, journaled with
 * each turn, read back from the journal), and a batch whose episodes fail for the infrastructure
 * stops the run past its limit, naming the first failure, its stderr and the episode to open.
 */
import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import type { GenerateOptions, Generated } from '../rollout/generate';
import { EPISODE_STDERR_CHARS, appendStderr, type EnvTask, type EnvironmentKind } from './environment';
import { EnvironmentBroken, checkInfrastructure, commonestFailure, infraFailures } from './infrastructure';
import { MemoryJournal } from './journal';
import { collectEpisodes, readJournal, type CollectedEpisode } from './rollout';

const tok = toolTokenizer();

/** A fake policy: one id then EOS per action. */
const sampler = async (prompts: readonly ArrayLike<number>[], o: GenerateOptions): Promise<Generated[]> =>
  prompts.map((p) => ({
    promptIds: Int32Array.from(p),
    sampledIds: Int32Array.from([3, o.eos!]),
    behaviorLogProbs: Float64Array.from([-0.1, -0.2]),
    rawLogProbs: Float64Array.from([-0.1, -0.2]),
    finishReason: 'stop',
  }));

/**
 * A fake program environment: writes a line to stderr at reset and at each step; tasks whose id is
 * in `failing` answer their first step with an error (after writing why to stderr), the others end.
 */
function programLike(failing: Set<string>): EnvironmentKind {
  return {
    name: 'fake-program',
    title: 'fake program',
    maxTurns: 2,
    maxActionTokens: 4,
    trainTasks: () => ({ take: () => [], position: 0, skip: () => {} }),
    heldOut: () => [],
    verify: () => 1,
    demonstrate: () => [],
    create(task) {
      let stderr = `reset ${task.id}\n`;
      const take = () => {
        const s = stderr;
        stderr = '';
        return s || undefined;
      };
      return {
        reset: () => Int32Array.from([tok.bos, 3]),
        step: () => {
          if (failing.has(task.id)) {
            stderr += `Traceback: ${task.id} broke\n`;
            return { observation: [], status: 'error', detail: 'exited: the environment exited (exit code 1)' };
          }
          stderr += 'stepped\n';
          return { observation: [], status: 'done', reward: 1 };
        },
        takeStderr: take,
      };
    },
  };
}

const tasks: EnvTask[] = ['a', 'b', 'c', 'd'].map((id) => ({ id, prompt: id, answer: '1', data: {} }));

async function collect(failing: string[], journal?: MemoryJournal): Promise<CollectedEpisode[]> {
  return collectEpisodes(sampler, tasks, 2, {
    kind: programLike(new Set(failing)),
    tok,
    maxContext: 64,
    sampling: { temperature: 1 },
    seed: 1,
    policyVersion: 0,
    ...(journal
      ? { journal: { journal, cohort: { runId: 'r', step: 3, policyVersion: 0, samplerSeed: 1 } }, writer: 'w' }
      : {}),
  });
}

describe("an episode's stderr", () => {
  it('is kept by the rollout, journaled with its reset and turns, and read back from the journal alike', async () => {
    const journal = new MemoryJournal();
    const episodes = await collect(['b'], journal);
    expect(episodes[0].stderr).toBe('reset a\nstepped\n');
    expect(episodes[2].stderr).toBe('reset b\nTraceback: b broke\n');
    const records = await journal.load('r', 3);
    const back = await readJournal(records, programLike(new Set(['b'])), tok, 2);
    expect(back.map((e) => e.stderr)).toEqual(episodes.map((e) => e.stderr));
  });

  it('keeps its last EPISODE_STDERR_CHARS characters', () => {
    const long = appendStderr('x'.repeat(EPISODE_STDERR_CHARS), 'the end\n');
    expect(long).toHaveLength(EPISODE_STDERR_CHARS);
    expect(long.endsWith('xxthe end\n')).toBe(true);
    expect(appendStderr('kept', undefined)).toBe('kept');
  });
});

describe('checkInfrastructure', () => {
  it('lets a batch below the limit through and stops one at it, naming the first failure, its stderr and episode', async () => {
    const episodes = await collect(['b', 'c']); // 4 of 8 episodes fail
    expect(infraFailures(episodes)).toMatchObject({ failed: 4, total: 8 });
    expect(() => checkInfrastructure(episodes, 0.6, 'step 3', 3)).not.toThrow();
    let thrown: unknown;
    try {
      checkInfrastructure(episodes, 0.5, 'step 3', 3);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(EnvironmentBroken);
    const e = thrown as EnvironmentBroken;
    expect(e.name).toBe('EnvironmentBroken');
    expect(e.message).toBe(
      'the environment failed on 4 of 8 episodes of step 3 (at least 50% of a batch stops the run: the option ' +
        'envErrorLimit). The first, episode 2 (task b): the environment reported an error: exited: the environment ' +
        "exited (exit code 1)\nthe program's stderr:\n  reset b\n  Traceback: b broke",
    );
    expect(e.episode).toEqual({ step: 3, index: 2 });
    // Not journaled (an evaluation): no episode to link to.
    expect(() => checkInfrastructure(episodes, 0.5, 'the held-out evaluation', null)).toThrow(
      expect.objectContaining({ episode: null }),
    );
  });

  it('at limit 1 stops only when every episode failed', async () => {
    expect(() => checkInfrastructure([], 1, 'step 1', 1)).not.toThrow();
    const most = await collect(['a', 'b', 'c']);
    expect(() => checkInfrastructure(most, 1, 'step 1', 1)).not.toThrow();
    const all = await collect(['a', 'b', 'c', 'd']);
    expect(() => checkInfrastructure(all, 1, 'step 1', 1)).toThrow(
      /^the environment failed on all 8 episodes of step 1\. /,
    );
  });
});

describe('commonestFailure', () => {
  it('counts one fault on different tasks and steps as one', () => {
    expect(
      commonestFailure([
        { task: 'x/1', detail: 'could not start task x/1: deadline' },
        { task: 'y/2', detail: 'could not start task y/2: deadline' },
        { task: 'z', detail: 'step 2 failed: exited' },
      ]),
    ).toEqual({ detail: 'could not start a task: deadline', count: 2 });
    expect(commonestFailure([])).toBeNull();
  });
});
