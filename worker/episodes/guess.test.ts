import { describe, expect, it } from 'vitest';
import { toolTokenizer } from '../data/tokenizer';
import type { EnvAction, EnvStep, Environment } from './environment';
import { GUESS, GUESS_MAX, guessHeldOut, guessTask, guessTrainTasks } from './guess';

const tok = toolTokenizer();
const act = (text: string): EnvAction => ({ ids: tok.encode(text), text, terminated: true });
const ids = (s: string) => Array.from(tok.encode(s));
const seen = (r: EnvStep) => ({
  observation: Array.from(r.observation),
  status: r.status,
  reward: r.reward,
  detail: r.detail,
});

async function drive(env: Environment, actions: string[]): Promise<EnvStep[]> {
  await env.reset();
  const out: EnvStep[] = [];
  for (const a of actions) out.push(await env.step(act(a)));
  return out;
}

describe('guess environment', () => {
  const task = guessTask(20);

  it('tasks: prompt 1-63?, the secret as the answer', () => {
    expect(task).toEqual({ id: 'guess/20', prompt: '1-63?', answer: '20', data: { secret: 20 } });
    expect(() => guessTask(0)).toThrow(/expected an integer in 1..63/);
    expect(() => guessTask(64)).toThrow(/expected an integer in 1..63/);
  });

  it('reset gives BOS + 1-63?', () => {
    expect(Array.from(GUESS.create(task).reset() as Int32Array)).toEqual([tok.bos, ...ids('1-63?')]);
  });

  it('a guess above the secret answers <, below answers >, running; the secret ends it with reward 1', async () => {
    const r = await drive(GUESS.create(task), ['32', '16', '99', '0', '020']);
    expect(seen(r[0])).toEqual({
      observation: ids('<'),
      status: 'running',
      reward: undefined,
      detail: '32: the secret is lower',
    });
    expect(seen(r[1])).toEqual({
      observation: ids('>'),
      status: 'running',
      reward: undefined,
      detail: '16: the secret is higher',
    });
    expect(seen(r[2])).toMatchObject({ observation: ids('<'), status: 'running' });
    expect(seen(r[3])).toMatchObject({ observation: ids('>'), status: 'running' });
    expect(seen(r[4])).toEqual({ observation: [], status: 'done', reward: 1, detail: '020: correct' });
  });

  it('anything but an integer answers ?, running, invalid action', async () => {
    const r = await drive(GUESS.create(task), ['', '-3', '2a', '<', '\\boxed{20}', 'calc(1+2)']);
    for (const step of r)
      expect(seen(step)).toEqual({
        observation: ids('?'),
        status: 'running',
        reward: undefined,
        detail: 'invalid action',
      });
  });

  it('refuses a step after the episode ended', async () => {
    const env = GUESS.create(task);
    await drive(env, ['20']);
    expect(() => env.step(act('20'))).toThrow(/step after the episode ended/);
  });

  it('state round trip: setState on a fresh instance continues identically', async () => {
    const a = GUESS.create(task);
    await drive(a, ['32', 'x', '16']);
    const state = a.getState!()!;
    expect(JSON.parse(state)).toEqual({ task: 'guess/20', turns: 3, guesses: [32, 16], done: false });
    const b = GUESS.create(task);
    await b.reset();
    b.setState!(state);
    for (const x of ['24', '?', '20']) {
      const [ra, rb] = [await a.step(act(x)), await b.step(act(x))];
      expect(seen(rb)).toEqual(seen(ra));
      expect(b.getState!()!).toBe(a.getState!()!);
    }
    expect(JSON.parse(b.getState!()!)).toMatchObject({ turns: 6, guesses: [32, 16, 24, 20], done: true });
    expect(() => GUESS.create(guessTask(3)).setState!(state)).toThrow(/snapshot is of task "guess\/20"/);
    expect(() => GUESS.create(task).setState!('{"task":"guess/20","turns":1,"guesses":["7"],"done":false}')).toThrow(
      /guesses = \["7"\]/,
    );
  });

  it('verify: 1 only when the transcript ends with an action that is the secret', () => {
    expect(GUESS.verify(task, '1-63?32<16>20')).toBe(1);
    // As rollout.ts writes it: one line per turn, the action then the observation.
    expect(GUESS.verify(task, '32<\n16>\n24<\n20')).toBe(1);
    expect(GUESS.verify(task, '32<\n16>\n24<\n21>\n')).toBe(0);
    expect(GUESS.verify(task, '<bos>1-63?32<eos><16<eos>>20<eos>')).toBe(1);
    expect(GUESS.verify(task, '1-63?32<16>24<')).toBe(0);
    expect(GUESS.verify(task, '1-63?20?')).toBe(0);
    expect(GUESS.verify(task, '1-63?32<16>21')).toBe(0);
    expect(GUESS.verify(task, '1-63?')).toBe(0);
  });

  it('the demonstration is binary search and solves every secret within 6 turns and the action budget', async () => {
    expect(GUESS.demonstrate(task)).toEqual(['32', '16', '24', '20']);
    expect(GUESS.demonstrate(guessTask(32))).toEqual(['32']);
    expect(GUESS.demonstrate(guessTask(1))).toEqual(['32', '16', '8', '4', '2', '1']);
    let longest = 0;
    for (const t of guessHeldOut(GUESS_MAX)) {
      const actions = GUESS.demonstrate(t);
      longest = Math.max(longest, actions.length);
      for (const a of actions) expect(tok.encode(a).length + 1).toBeLessThanOrEqual(GUESS.maxActionTokens);
      const steps = await drive(GUESS.create(t), actions);
      expect(steps.slice(0, -1).every((s) => s.status === 'running')).toBe(true);
      expect(steps.at(-1)).toMatchObject({ status: 'done', reward: 1 });
    }
    expect(longest).toBe(6);
    expect(longest).toBeLessThan(GUESS.maxTurns);
  });
});

describe('guess tasks', () => {
  it('heldOut(n) is the secrets 1..min(n, 63) in order', () => {
    expect(guessHeldOut(3).map((t) => t.answer)).toEqual(['1', '2', '3']);
    expect(guessHeldOut(500).map((t) => t.data.secret)).toEqual(Array.from({ length: 63 }, (_, i) => i + 1));
    expect(GUESS.heldOut(0)).toEqual([]);
  });

  it('the stream draws every secret in 1..63, deterministically for a seed', () => {
    const a = guessTrainTasks(4).take(2000);
    expect(new Set(a.map((t) => t.data.secret)).size).toBe(63);
    expect(guessTrainTasks(4).take(2000)).toEqual(a);
    expect(guessTrainTasks(5).take(50)).not.toEqual(a.slice(0, 50));
    const s = GUESS.trainTasks(4);
    s.skip(100);
    expect(s.position).toBe(100);
    expect(s.take(10)).toEqual(a.slice(100, 110));
    expect(s.position).toBe(110);
  });
});
