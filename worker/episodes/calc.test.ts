import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import { CALC, calcHeldOut, calcTask, calcTrainTasks, evaluateCalc, isCalcHeldOut } from './calc';
import type { EnvAction, EnvStep, Environment } from './environment';

const tok = toolTokenizer();
const act = (text: string): EnvAction => ({ ids: tok.encode(text), text, terminated: true });
const ids = (s: string) => Array.from(tok.encode(s));
const seen = (r: EnvStep) => ({
  observation: Array.from(r.observation),
  status: r.status,
  reward: r.reward,
  detail: r.detail,
});

/** Runs `actions` through `env` (after reset); the steps' answers. */
async function drive(env: Environment, actions: string[]): Promise<EnvStep[]> {
  await env.reset();
  const out: EnvStep[] = [];
  for (const a of actions) out.push(await env.step(act(a)));
  return out;
}

describe('calc environment', () => {
  const task = calcTask(47, 35, 19);

  it('tasks: a+b+c= with answer a+b+c', () => {
    expect(task).toEqual({ id: 'calc/47/35/19', prompt: '47+35+19=', answer: '101', data: { a: 47, b: 35, c: 19 } });
    expect(() => calcTask(9, 35, 19)).toThrow(/a = 9; expected an integer in 10..99/);
  });

  it('reset gives BOS + the prompt ids', () => {
    const env = CALC.create(task);
    expect(Array.from(env.reset() as Int32Array)).toEqual([tok.bos, ...ids('47+35+19=')]);
  });

  it('calc(X op Y) answers =result, running, for + - * (negative results with -)', async () => {
    const r = await drive(CALC.create(task), ['calc(47+35)', 'calc(10-35)', 'calc(12*34)', 'calc(0+0)']);
    expect(seen(r[0])).toEqual({
      observation: ids('=82'),
      status: 'running',
      reward: undefined,
      detail: 'calc(47+35) = 82',
    });
    expect(seen(r[1])).toMatchObject({ observation: ids('=-25'), status: 'running', detail: 'calc(10-35) = -25' });
    expect(seen(r[2])).toMatchObject({ observation: ids('=408'), status: 'running' });
    expect(seen(r[3])).toMatchObject({ observation: ids('=0'), status: 'running' });
  });

  it('a malformed calc answers =?, running, and says why', async () => {
    const cases = ['calc(47+)', 'calc(47+35', 'calc()', 'calc(4+5+6)', 'calc(-4+5)', 'calc(1234567+1)', 'calc(47+35))'];
    const r = await drive(CALC.create(task), cases);
    for (const [i, step] of r.entries()) {
      expect(seen(step), cases[i]).toMatchObject({ observation: ids('=?'), status: 'running', reward: undefined });
      expect(step.detail, cases[i]).toMatch(/malformed/);
    }
    expect(r[1].detail).toMatch(/unclosed/);
    expect(r[5].detail).toMatch(/at most 6 digits/);
    expect(evaluateCalc('123456*999999')).toEqual({ ok: true, expr: '123456*999999', result: 123456 * 999999 });
  });

  it('\\boxed{N} ends the episode: reward 1 on the answer, 0 otherwise, no observation', async () => {
    const [right] = await drive(CALC.create(task), ['\\boxed{101}']);
    expect(seen(right)).toEqual({ observation: [], status: 'done', reward: 1, detail: '\\boxed{101}: correct' });
    for (const wrong of ['\\boxed{100}', '\\boxed{0101}', '\\boxed{}', '\\boxed{cab}', '\\boxed{-101}']) {
      const [r] = await drive(CALC.create(task), [wrong]);
      expect(seen(r), wrong).toMatchObject({
        observation: [],
        status: 'done',
        reward: 0,
        detail: expect.stringMatching(/incorrect \(answer 101\)/),
      });
    }
  });

  it('anything else answers ?, running, invalid action', async () => {
    const r = await drive(CALC.create(task), [
      '101',
      '',
      'cal(1+2)',
      '\\boxed{101',
      'calc(1+2)\\boxed{3}'.slice(0, 14),
      '?',
    ]);
    for (const step of r.slice(0, 4))
      expect(seen(step)).toEqual({
        observation: ids('?'),
        status: 'running',
        reward: undefined,
        detail: 'invalid action',
      });
    // Text starting with calc( is a (malformed) call, whatever follows.
    expect(seen(r[4])).toMatchObject({ observation: ids('=?') });
    expect(seen(r[5])).toMatchObject({ observation: ids('?'), detail: 'invalid action' });
  });

  it('refuses a step after the episode ended', async () => {
    const env = CALC.create(task);
    await drive(env, ['\\boxed{1}']);
    expect(() => env.step(act('\\boxed{101}'))).toThrow(/step after the episode ended/);
  });

  it('state round trip: setState on a fresh instance continues identically', async () => {
    const rest = ['calc(82+19)', 'calc(1', '\\boxed{101}'];
    const a = CALC.create(task);
    await drive(a, ['calc(47+35)', 'cab']);
    const state = a.getState!()!;
    expect(JSON.parse(state)).toEqual({ task: task.id, turns: 2, results: [82], done: false });
    const b = CALC.create(task);
    await b.reset();
    b.setState!(state);
    expect(b.getState!()!).toBe(state);
    for (const x of rest) {
      const [ra, rb] = [await a.step(act(x)), await b.step(act(x))];
      expect(seen(rb)).toEqual(seen(ra));
      expect(b.getState!()!).toBe(a.getState!()!);
    }
    expect(JSON.parse(b.getState!()!)).toEqual({ task: task.id, turns: 5, results: [82, 101], done: true });
    const c = CALC.create(calcTask(10, 10, 10));
    expect(() => c.setState!(state)).toThrow(/snapshot is of task "calc\/47\/35\/19"/);
    expect(() => CALC.create(task).setState!('{"task":"calc/47/35/19","turns":-1,"results":[],"done":false}')).toThrow(
      /turns = -1/,
    );
  });

  it('verify: the last \\boxed{} of the transcript is the answer', () => {
    expect(CALC.verify(task, '47+35+19=calc(47+35)=82calc(82+19)=101\\boxed{101}')).toBe(1);
    expect(CALC.verify(task, '<bos>47+35+19=\\boxed{101}<eos>')).toBe(1);
    expect(CALC.verify(task, 'calc(47+35)=82\ncalc(82+19)=101\n\\boxed{101}')).toBe(1);
    expect(CALC.verify(task, '\\boxed{101}calc(1+1)=2\\boxed{2}')).toBe(0);
    expect(CALC.verify(task, 'calc(82+19)=101')).toBe(0);
    expect(CALC.verify(task, '\\boxed{101')).toBe(0);
  });

  it('the demonstration solves every held-out task it is given, in 3 turns and within the action budget', async () => {
    const tasks = calcHeldOut(300);
    expect(CALC.demonstrate(task)).toEqual(['calc(47+35)', 'calc(82+19)', '\\boxed{101}']);
    for (const t of tasks) {
      const actions = CALC.demonstrate(t);
      expect(actions.length).toBeLessThanOrEqual(CALC.maxTurns);
      for (const a of actions) expect(tok.encode(a).length + 1).toBeLessThanOrEqual(CALC.maxActionTokens);
      const steps = await drive(CALC.create(t), actions);
      expect(steps.slice(0, -1).every((s) => s.status === 'running')).toBe(true);
      expect(steps.at(-1)).toMatchObject({ status: 'done', reward: 1 });
    }
  });
});

describe('calc tasks', () => {
  const key = (t: { data: Readonly<Record<string, unknown>> }) => `${t.data.a}/${t.data.b}/${t.data.c}`;

  it('train and held-out tasks are disjoint, by the hash of (a, b, c)', () => {
    const held = calcHeldOut(2000);
    const train = calcTrainTasks(3).take(5000);
    for (const t of held) expect(isCalcHeldOut(t.data.a as number, t.data.b as number, t.data.c as number)).toBe(true);
    for (const t of train)
      expect(isCalcHeldOut(t.data.a as number, t.data.b as number, t.data.c as number)).toBe(false);
    const heldKeys = new Set(held.map(key));
    expect(heldKeys.size).toBe(held.length);
    expect(train.some((t) => heldKeys.has(key(t)))).toBe(false);
    // About 10% of the 90^3 problems are held out.
    let count = 0;
    for (let a = 10; a <= 99; a++)
      for (let b = 10; b <= 99; b++) for (let c = 10; c <= 99; c++) count += isCalcHeldOut(a, b, c) ? 1 : 0;
    expect(count / 90 ** 3).toBeCloseTo(0.1, 2);
    expect(calcHeldOut(0)).toEqual([]);
    expect(() => calcHeldOut(80_000)).toThrow(/only \d+ held-out problems/);
  });

  it('operands are two-digit and cover the range', () => {
    const train = calcTrainTasks(5).take(3000);
    const values = train.flatMap((t) => [t.data.a as number, t.data.b as number, t.data.c as number]);
    expect(Math.min(...values)).toBe(10);
    expect(Math.max(...values)).toBe(99);
    for (const t of train)
      expect(t.answer).toBe(String((t.data.a as number) + (t.data.b as number) + (t.data.c as number)));
  });

  it('the stream is deterministic for a seed; skip(n) then take equals take(n) then take', () => {
    const a = calcTrainTasks(11).take(50);
    expect(calcTrainTasks(11).take(50)).toEqual(a);
    expect(calcTrainTasks(12).take(50)).not.toEqual(a);
    const s = calcTrainTasks(11);
    s.skip(20);
    expect(s.position).toBe(20);
    expect(s.take(30)).toEqual(a.slice(20));
    expect(s.position).toBe(50);
  });

  it('heldOut is a fixed order: a prefix property, independent of anything else', () => {
    expect(calcHeldOut(100)).toEqual(calcHeldOut(300).slice(0, 100));
    expect(CALC.heldOut(5)).toEqual(calcHeldOut(5));
  });
});
