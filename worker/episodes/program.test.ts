/**
 * A person's environment files (program.ts): every bad task line is refused naming its line and
 * field, nothing loaded; the program's hash, command and held-out split; the kind's training
 * stream (seeded passes over the training tasks), held-out tasks (disjoint by prompt), verifier,
 * and what an episode does without a companion.
 */
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../data/sha256';
import { EXAMPLE_ENVIRONMENT } from './program-example';
import {
  NO_COMPANION,
  defaultArgv,
  loadEnvironment,
  parseEnvTasks,
  programKind,
  splitTasks,
  verifyProgramTask,
} from './program';

const program = { name: 'env.py', text: 'print(1)\n' };
const lines = (...rows: unknown[]) => rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n');

describe('parseEnvTasks', () => {
  it('reads id, prompt, answer and data, with an integer id as text and the optional fields defaulted', () => {
    const r = parseEnvTasks(
      't.jsonl',
      lines({ id: 7, prompt: '1+2=' }, '', { id: 'b', prompt: 'p', answer: 3, data: { k: [1] } }),
    );
    expect(r).toEqual({
      ok: true,
      records: [
        { id: '7', prompt: '1+2=', answer: '', data: {} },
        { id: 'b', prompt: 'p', answer: '3', data: { k: [1] } },
      ],
    });
  });

  it.each([
    [lines('{"id": 1, "prompt": '), 1, null, /is not JSON/],
    [lines([1, 2]), 1, null, /is \[1,2\]/],
    [lines({ id: 'a', prompt: 'p', secret: 1 }), 1, 'secret', /is not one/],
    [lines({ prompt: 'p' }), 1, 'id', /is missing/],
    [lines({ id: 1.5, prompt: 'p' }), 1, 'id', /is 1.5/],
    [lines({ id: 'a', prompt: 'p' }, { id: 'a', prompt: 'q' }), 2, 'id', /as on line 1/],
    [lines({ id: 'a' }), 1, 'prompt', /is missing/],
    [lines({ id: 'a', prompt: 'p', answer: [1] }), 1, 'answer', /is \[1\]/],
    [lines({ id: 'a', prompt: 'p', data: 3 }), 1, 'data', /is 3/],
  ])('refuses %j at its line and field', (text, line, field, got) => {
    const r = parseEnvTasks('t.jsonl', text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problem).toMatchObject({ file: 't.jsonl', line, field });
    expect(r.problem.got).toMatch(got);
  });

  it('says what a line should be in words: one JSON object per line', () => {
    const [notJson, notObject] = [lines('{"id": 1, "prompt": '), lines([1, 2])].map((t) => parseEnvTasks('t.jsonl', t));
    expect(notJson.ok || notJson.problem.expected).toBe('one JSON object per line, a task');
    expect(notObject.ok || notObject.problem.expected).toBe('one JSON object per line: {id, prompt, answer?, data?}');
  });

  it('refuses a file without a task', () => {
    const r = parseEnvTasks('t.jsonl', '\n\n');
    expect(r.ok || r.problem).toMatchObject({ line: null, got: 'has none' });
  });
});

describe('loadEnvironment', () => {
  const tasks = {
    name: 't.jsonl',
    text: lines(...Array.from({ length: 20 }, (_, i) => ({ id: i, prompt: `${i}+1=` }))),
  };

  it("records the program's SHA-256, its command by extension, and holds out a tenth of the tasks", () => {
    const r = loadEnvironment({ program, tasks });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.environment.program).toEqual({
      ...program,
      sha256: sha256Hex(program.text),
      argv: ['python3', '-I', 'env.py'],
    });
    expect(r.environment.tasks).toMatchObject({ name: 't.jsonl', heldOut: 2 });
    expect(r.environment.tasks.records).toHaveLength(20);
  });

  it('takes a command and a held-out count', () => {
    const r = loadEnvironment({ program: { name: 'env', text: 'x' }, tasks, argv: ['./env', '--fast'], heldOut: 0 });
    expect(r.ok && [r.environment.program.argv, r.environment.tasks.heldOut]).toEqual([['./env', '--fast'], 0]);
  });

  it('names what is wrong with either file, loading nothing', () => {
    const cases: [Parameters<typeof loadEnvironment>[0], RegExp][] = [
      [{ program: { name: 'my env.py', text: 'x' }, tasks }, /my env.py: has other characters/],
      [{ program: { name: 'env.py', text: '  \n' }, tasks }, /env.py: is empty/],
      [{ program: { name: 'env.rb', text: 'x' }, tasks }, /env.rb: has no known extension \(expected a .py, .js/],
      [{ program, tasks, heldOut: 20 }, /t.jsonl: asks 20 \(expected held-out tasks in 0..19/],
      [{ program, tasks: { name: 'bad.jsonl', text: '{"id":1}' } }, /bad.jsonl line 1: 'prompt' is missing/],
    ];
    for (const [files, message] of cases) {
      const r = loadEnvironment(files);
      expect(r.ok, String(message)).toBe(false);
      if (!r.ok) expect(r.message).toMatch(message);
    }
  });

  it("splits tasks that share a prompt by their data (guess's secrets), and refuses a file whose every task is held out", () => {
    const guess = lines(...Array.from({ length: 30 }, (_, i) => ({ id: i, prompt: '1-63?', data: { secret: i + 1 } })));
    const r = loadEnvironment({ program, tasks: { name: 'g.jsonl', text: guess } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const split = splitTasks(r.environment.tasks.records, r.environment.tasks.heldOut);
    expect([split.train.length, split.heldOut.length]).toEqual([27, 3]);
    const same = lines(...Array.from({ length: 5 }, (_, i) => ({ id: i, prompt: '1-63?', data: { secret: 7 } })));
    const refused = loadEnvironment({ program, tasks: { name: 's.jsonl', text: same }, heldOut: 1 });
    expect(refused.ok || refused.message).toBe(
      's.jsonl: has every task equal to a held-out one (expected a task to train on that is not held out)',
    );
  });

  it('starts node without its JIT for .js and .mjs files, sh for .sh', () => {
    expect([defaultArgv('e.mjs'), defaultArgv('e.js'), defaultArgv('e.sh'), defaultArgv('e')]).toEqual([
      ['node', '--jitless', 'e.mjs'],
      ['node', '--jitless', 'e.js'],
      ['sh', 'e.sh'],
      null,
    ]);
  });
});

describe('programKind', () => {
  const config = { ...EXAMPLE_ENVIRONMENT, stepSeconds: 10 };
  const kind = programKind(config, null);

  it('holds out the example’s 200 tasks apart from the 1800 it trains on, by prompt', () => {
    const held = kind.heldOut(1000);
    expect(held).toHaveLength(200);
    const heldPrompts = new Set(held.map((t) => t.prompt));
    const train = kind.trainTasks(1).take(1800);
    expect(new Set(train.map((t) => t.id)).size).toBe(1800); // one pass: every training task once
    expect(train.filter((t) => heldPrompts.has(t.prompt))).toEqual([]);
    expect(kind.heldOut(5)).toEqual(held.slice(0, 5));
  });

  it('draws the same training tasks for the same seed, others for another', () => {
    const a = kind.trainTasks(3).take(20);
    expect(kind.trainTasks(3).take(20)).toEqual(a);
    expect(kind.trainTasks(4).take(20)).not.toEqual(a);
    const s = kind.trainTasks(3);
    s.skip(10);
    expect(s.take(10)).toEqual(a.slice(10));
  });

  it('scores an episode the program did not score by its last \\boxed{} against the answer, never an empty one', () => {
    const task = { id: 'a', prompt: '1+2=', answer: '3', data: {} };
    expect(verifyProgramTask(task, 'calc(1+2)=3\n\\boxed{3}')).toBe(1);
    expect(verifyProgramTask(task, '\\boxed{3}\n\\boxed{4}')).toBe(0);
    expect(verifyProgramTask({ ...task, answer: '' }, '\\boxed{}')).toBe(0);
  });

  it('without a companion, fails every episode at reset saying how to connect one', async () => {
    const env = kind.create(kind.heldOut(1)[0]);
    await expect(async () => env.reset()).rejects.toThrow(NO_COMPANION);
    expect(kind.stepTimeoutMs).toBeGreaterThan(10_000);
  });
});
