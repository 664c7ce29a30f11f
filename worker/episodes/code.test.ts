import { describe, expect, it } from 'vitest';
import { codeTokenizer } from '../data/tokenizer';
import { GraderUnavailable, cachedGrader, type CodeGrader, type CodeRewardResult } from '../rewards/code-grader';
import {
  CODE_INPUTS,
  CODE_STEPS,
  CodeEnvironment,
  NO_COMPANION,
  codeExpression,
  codeHash,
  codeHeldOut,
  codeKind,
  codeSolution,
  codeTask,
  codeTrainTasks,
  codeValue,
  type CodeStep,
} from './code';
import { resolveKind } from './kinds';
import { MemoryJournal } from './journal';
import type { EpisodeSampler } from './rollout';
import { collectEpisodes } from './rollout';
import { sessionOf } from '../rl/session-of';

const add = (n: number): CodeStep => ({ op: 'add', n });
const sub = (n: number): CodeStep => ({ op: 'sub', n });
const mul = (n: number): CodeStep => ({ op: 'mul', n });
const sq: CodeStep = { op: 'sq' };

/** Evaluates an expression of x with Python's precedence for + − * ** (no division): a tiny parser, not eval. */
function evalPython(expr: string, x: bigint): bigint {
  let i = 0;
  const atom = (): bigint => {
    if (expr[i] === '(') {
      i++;
      const v = sum();
      i++;
      return v;
    }
    if (expr[i] === 'x') {
      i++;
      return x;
    }
    let j = i;
    while (/\d/.test(expr[j] ?? '')) j++;
    const v = BigInt(expr.slice(i, j));
    i = j;
    return v;
  };
  const power = (): bigint => {
    const b = atom();
    if (expr.startsWith('**', i)) {
      i += 2;
      return b ** power();
    }
    return b;
  };
  const product = (): bigint => {
    let v = power();
    while (expr[i] === '*' && expr[i + 1] !== '*') {
      i++;
      v *= power();
    }
    return v;
  };
  const sum = (): bigint => {
    let v = product();
    while (expr[i] === '+' || expr[i] === '-') v = expr[i++] === '+' ? v + product() : v - product();
    return v;
  };
  return sum();
}

describe('code tasks', () => {
  it('writes the fewest parentheses that keep the steps in order', () => {
    expect(codeExpression([add(3), mul(5)])).toBe('(x+3)*5');
    expect(codeExpression([mul(5), add(3)])).toBe('x*5+3');
    expect(codeExpression([sub(2), sq])).toBe('(x-2)**2');
    expect(codeExpression([sq, mul(4)])).toBe('x**2*4');
    expect(codeExpression([mul(2), sq])).toBe('(x*2)**2');
    expect(codeExpression([sq])).toBe('x**2');
  });

  it('every task expression computes its steps, on the graded inputs, under Python precedence', () => {
    const all = [...CODE_STEPS.map((s) => [s]), ...CODE_STEPS.flatMap((a) => CODE_STEPS.map((b) => [a, b]))];
    expect(all).toHaveLength(756);
    for (const steps of all) {
      const e = codeExpression(steps);
      for (const x of CODE_INPUTS) expect(evalPython(e, BigInt(x)), `${e} at ${x}`).toBe(codeValue(steps, x));
    }
  });

  it('cases are the inputs and the exact values', () => {
    const t = codeTask([add(3), mul(5)]);
    expect(t.id).toBe('code/add3,mul5');
    expect(t.prompt).toBe('add 3, mul 5:');
    expect((t.data as { cases: unknown }).cases).toEqual([
      { stdin: '-3\n', stdout: '0\n' },
      { stdin: '2\n', stdout: '25\n' },
      { stdin: '11\n', stdout: '70\n' },
    ]);
    expect(() => codeTask([])).toThrow(/one or two of add 1/);
    expect(() => codeTask([mul(1)])).toThrow(/expected one or two/);
  });

  it('splits held-out from training by the hash, disjointly, and draws the same tasks for the same seed', () => {
    const held = codeHeldOut(1000);
    expect(held.length).toBeGreaterThan(50);
    expect(held.length).toBeLessThan(110);
    const heldIds = new Set(held.map((t) => t.id));
    const train = codeTrainTasks(7).take(2000);
    expect(train.some((t) => heldIds.has(t.id))).toBe(false);
    expect(
      codeTrainTasks(7)
        .take(50)
        .map((t) => t.id),
    ).toEqual(train.slice(0, 50).map((t) => t.id));
    expect(
      codeTrainTasks(8)
        .take(50)
        .map((t) => t.id),
    ).not.toEqual(train.slice(0, 50).map((t) => t.id));
    const stream = codeTrainTasks(7);
    stream.skip(10);
    expect(stream.take(1)[0].id).toBe(train[10].id);
    expect(codeHash([add(1)])).not.toBe(codeHash([add(2)]));
  });

  it('every prompt and solution encodes with the code tokenizer, within the action budget', () => {
    const tok = codeTokenizer();
    const kind = resolveKind('code');
    for (const t of [...codeHeldOut(1000), ...codeTrainTasks(1).take(300)]) {
      tok.encode(t.prompt);
      const [action] = kind.demonstrate(t);
      expect(tok.encode(action).length + 1).toBeLessThanOrEqual(kind.maxActionTokens);
      expect(1 + t.prompt.length + kind.maxActionTokens).toBeLessThanOrEqual(64);
    }
    expect(codeSolution([add(3), mul(5)])).toBe('```\nx=int(input())\nx=x+3\nx=x*5\nprint(x)\n```');
    expect(codeSolution([sq])).toBe('```\nx=int(input())\nx=x*x\nprint(x)\n```');
  });
});

const result = (reward: number, passed: boolean[]): CodeRewardResult => ({
  reward,
  program: 'print(1)',
  cases: passed.map((p) => ({
    verdict: 'COMPLETED',
    passed: p,
    stdout: p ? 'ok\n' : 'no\n',
    stderr: '',
    detail: p ? 'output matches' : 'output differs',
  })),
});

describe('CodeEnvironment', () => {
  const task = codeTask([add(3), mul(5)]);
  const action = { ids: [], text: codeSolution([add(3), mul(5)]), terminated: true };

  it('without a grader, fails as a sandbox_error that says how to start a companion', async () => {
    const env = new CodeEnvironment(task, null);
    expect(Array.from(env.reset())).toEqual([1, ...codeTokenizer().encode('add 3, mul 5:')]);
    expect(await env.step(action)).toMatchObject({ status: 'error', failure: 'sandbox_error', detail: NO_COMPANION });
  });

  it('ends the episode with the grader reward and every case; an unavailable grader is a sandbox_error, a bug propagates', async () => {
    const seen: unknown[] = [];
    const grader: CodeGrader = async (r) => {
      seen.push(r);
      return result(2 / 3, [true, true, false]);
    };
    const env = codeKind(grader).create(task);
    env.reset();
    const r = await env.step(action);
    expect(r).toMatchObject({ status: 'done', reward: 2 / 3, detail: '2 of 3 cases pass' });
    expect(r.cases).toHaveLength(3);
    expect(seen).toEqual([{ completion: action.text, cases: (task.data as { cases: unknown }).cases }]);
    await expect(async () => env.step(action)).rejects.toThrow(/one turn/);

    const down = codeKind(async () => {
      throw new GraderUnavailable('no companion answers at http://127.0.0.1:9');
    }).create(task);
    expect(await down.step(action)).toMatchObject({
      status: 'error',
      failure: 'sandbox_error',
      detail: 'no companion answers at http://127.0.0.1:9',
    });
    const bug = codeKind(async () => {
      throw new TypeError('boom');
    }).create(task);
    await expect(bug.step(action)).rejects.toThrow('boom');
  });
});

describe('cachedGrader', () => {
  it('grades each distinct request once, evicts the least recently used, and does not keep failures', async () => {
    let calls = 0;
    let fail = true;
    const g = cachedGrader(async (r) => {
      calls++;
      if (r.completion === 'flaky' && fail) throw new GraderUnavailable('down');
      return result(1, [true]);
    }, 2);
    const cases = [{ stdin: '', stdout: '' }];
    await g({ completion: 'a', cases });
    await g({ completion: 'a', cases });
    expect([calls, g.hits, g.misses]).toEqual([1, 1, 1]);
    await g({ completion: 'a', cases, allOrNothing: true });
    expect(calls).toBe(2);
    await g({ completion: 'b', cases }); // evicts 'a' (allOrNothing false), the least recently used
    await g({ completion: 'a', cases });
    expect(calls).toBe(4);
    await expect(g({ completion: 'flaky', cases })).rejects.toThrow('down');
    fail = false;
    await expect(g({ completion: 'flaky', cases })).resolves.toMatchObject({ reward: 1 });
    expect(calls).toBe(6);
  });
});

describe('code episodes through the rollout', () => {
  /** A fake policy for unit tests: every row answers the same completion's ids, then EOS. */
  const answering =
    (text: string): EpisodeSampler =>
    async (prompts, o) =>
      prompts.map((p) => {
        const ids = [
          ...codeTokenizer()
            .encode(text)
            .slice(0, o.maxNew - 1),
          codeTokenizer().eos,
        ];
        return {
          promptIds: Int32Array.from(p),
          sampledIds: Int32Array.from(ids),
          behaviorLogProbs: new Float64Array(ids.length).fill(-0.5),
          rawLogProbs: new Float64Array(ids.length).fill(-0.5),
          finishReason: 'stop' as const,
        };
      });
  const task = codeTask([add(3), mul(5)]);
  const options = (kind: ReturnType<typeof codeKind>, journal?: MemoryJournal) => ({
    kind,
    tok: codeTokenizer(),
    maxContext: 64,
    sampling: { temperature: 1 },
    seed: 1,
    policyVersion: 0,
    ...(journal ? { journal: { journal, cohort: { runId: 'r', step: 1, policyVersion: 0, samplerSeed: 1 } } } : {}),
  });

  it('a graded episode is completed with the reward, and its cases are on the turn and in the journal', async () => {
    const journal = new MemoryJournal();
    const kind = codeKind(async () => result(1 / 3, [true, false, false]));
    const [e] = await collectEpisodes(answering(codeSolution([add(3), mul(5)])), [task], 1, options(kind, journal));
    expect(e.episode).toMatchObject({ status: 'completed', reward: 1 / 3 });
    expect(e.episode.transitions[0].observation.cases?.map((c) => c.passed)).toEqual([true, false, false]);
    const [turn] = (await journal.load('r', 1)).filter((r) => r.kind === 'turn');
    expect(turn.kind === 'turn' && turn.observation.cases?.map((c) => c.stdout)).toEqual(['ok\n', 'no\n', 'no\n']);
    expect(sessionOf(e.episode, e.group, e.task.id)).toMatchObject({ status: 'completed', reward: 1 / 3 });
  });

  it('an unreachable companion fails the episode as sandbox_error: a failed session, masked, never reward 0', async () => {
    const kind = codeKind(async () => {
      throw new GraderUnavailable('no companion answers at http://127.0.0.1:9 (ECONNREFUSED)');
    });
    const eps = await collectEpisodes(answering('```\nprint(1)\n```'), [task], 2, options(kind));
    for (const e of eps) {
      expect(e.episode).toMatchObject({ status: 'error', termination: 'sandbox_error', reward: null });
      expect(sessionOf(e.episode, e.group, e.task.id)).toMatchObject({
        status: 'failed',
        termination: 'sandbox_error',
        reward: null,
      });
    }
  });
});
