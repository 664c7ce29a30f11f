/**
 * The `calc` environment: multi-step arithmetic with a calculator tool. A task is `a+b+c=` with
 * a, b, c two-digit integers (10..99) and answer a + b + c; the model may call the calculator on
 * two numbers at a time and ends the episode by boxing its answer:
 *
 *   <bos>47+35+19=  calc(47+35)<eos> =82  calc(82+19)<eos> =101  \boxed{101}<eos>
 *
 * Actions (the text of the sampled ids, EOS excluded):
 * - `calc(X+Y)`, `calc(X-Y)`, `calc(X*Y)` with X, Y non-negative integers (at most 6 digits):
 *   observation `=R` (the exact result, `-` for a negative one), status running.
 * - any other text starting with `calc(`: observation `=?`, running; the detail says what is wrong.
 * - `\boxed{N}`: status done, no observation, reward 1 when N is exactly the answer's text (an
 *   integer without sign or leading zeros, as `exactMatch` in worker/data/answer.ts), else 0.
 * - anything else: observation `?`, running, detail `invalid action`.
 * The environment does not count turns against `maxTurns`: the rollout ends an episode that runs
 * out of them, and `verify` scores it (the last `\boxed{}` of its transcript).
 *
 * Train/held-out split as in worker/data/arith.ts: (a, b, c) is held out when a fixed 32-bit hash
 * of it is 0 mod 10, whatever the seed. All draws come from `mulberry32`.
 */
import { mulberry32 } from '../../kernels/common/random';
import { extractBoxed } from '../data/answer';
import { fmix32 } from '../data/arith';
import { toolTokenizer } from '../data/tokenizer';
import type { EnvAction, EnvStep, EnvTask, Environment, EnvironmentKind } from './environment';
import { readTurnState, taskStream, writeTurnState } from './environment';

/** The payload of a calc task (`EnvTask.data`). */
type CalcTaskData = {
  a: number;
  b: number;
  c: number;
};

/** Operands are drawn from LO..HI (two-digit integers). */
const CALC_LO = 10;
const CALC_HI = 99;
/** Held out iff hash(a, b, c) mod CALC_HELD_OUT_MODULUS === 0 (about 10% of the 729,000 problems). */
const CALC_HELD_OUT_MODULUS = 10;
/** Calculator operands longer than this are refused (`=?`): results stay exact integers. */
const CALC_MAX_OPERAND_DIGITS = 6;
/** Fixed seed of the held-out order: never a parameter, so every run evaluates on the same tasks. */
const HELD_OUT_ORDER_SEED = 0x0ca1_c017;

const tok = toolTokenizer();

/** The fixed hash the split is defined by (a tag keeps it apart from arith's). Changing it changes every split: don't. */
function calcHash(a: number, b: number, c: number): number {
  return fmix32(fmix32(fmix32(fmix32(0xca1c) ^ a) ^ b) ^ c);
}

export function isCalcHeldOut(a: number, b: number, c: number): boolean {
  return calcHash(a, b, c) % CALC_HELD_OUT_MODULUS === 0;
}

/** The task for (a, b, c). */
export function calcTask(a: number, b: number, c: number): EnvTask {
  for (const [name, v] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    if (!Number.isInteger(v) || v < CALC_LO || v > CALC_HI)
      throw new Error(`calcTask: ${name} = ${v}; expected an integer in ${CALC_LO}..${CALC_HI}`);
  }
  const data: CalcTaskData = { a, b, c };
  return { id: `calc/${a}/${b}/${c}`, prompt: `${a}+${b}+${c}=`, answer: String(a + b + c), data };
}

/** The operands of a calc task; throws naming the field when the payload is not one. */
function calcData(task: EnvTask): CalcTaskData {
  const { a, b, c } = task.data as Partial<CalcTaskData>;
  for (const [name, v] of [
    ['a', a],
    ['b', b],
    ['c', c],
  ] as const) {
    if (typeof v !== 'number' || !Number.isInteger(v))
      throw new Error(`calc task ${task.id}: data.${name} = ${JSON.stringify(v)}; expected an integer`);
  }
  return { a: a!, b: b!, c: c! };
}

/** A seeded task stream: `take(n)` draws n, `skip(n)` draws and discards n, `position` counts both. */
interface TaskStream {
  take(n: number): EnvTask[];
  readonly position: number;
  skip(n: number): void;
}

/** Training tasks from `seed`: a, b, c uniform in 10..99, redrawn while held out. Same seed, same tasks. */
export function calcTrainTasks(seed: number): TaskStream {
  const rand = mulberry32(seed);
  const int = () => CALC_LO + Math.floor(rand() * (CALC_HI - CALC_LO + 1));
  return taskStream(() => {
    for (;;) {
      const a = int();
      const b = int();
      const c = int();
      if (!isCalcHeldOut(a, b, c)) return calcTask(a, b, c);
    }
  });
}

let heldOutList: [number, number, number][] | null = null;

/** Every held-out (a, b, c), shuffled with a fixed seed (cached; about 72,900). */
function heldOutProblems(): [number, number, number][] {
  if (!heldOutList) {
    const list: [number, number, number][] = [];
    for (let a = CALC_LO; a <= CALC_HI; a++) {
      for (let b = CALC_LO; b <= CALC_HI; b++)
        for (let c = CALC_LO; c <= CALC_HI; c++) if (isCalcHeldOut(a, b, c)) list.push([a, b, c]);
    }
    const rand = mulberry32(HELD_OUT_ORDER_SEED);
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [list[i], list[j]] = [list[j], list[i]];
    }
    heldOutList = list;
  }
  return heldOutList;
}

/** The first `n` held-out tasks in a fixed order (`calcHeldOut(n)` is a prefix of `calcHeldOut(m)` for n ≤ m). */
export function calcHeldOut(n: number): EnvTask[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`heldOut: n = ${n}; expected a non-negative integer`);
  const list = heldOutProblems();
  if (n > list.length) throw new Error(`heldOut: n = ${n}, but calc has only ${list.length} held-out problems`);
  return list.slice(0, n).map(([a, b, c]) => calcTask(a, b, c));
}

type CalcAnswer = { ok: true; result: number; expr: string } | { ok: false; why: string };

/** Evaluates the inside of `calc(...)`: two non-negative integers joined by `+`, `-` or `*`. */
export function evaluateCalc(expr: string): CalcAnswer {
  const m = /^(\d+)([+\-*])(\d+)$/.exec(expr);
  if (!m) return { ok: false, why: 'expected two non-negative integers joined by +, - or *' };
  const [, xs, op, ys] = m;
  if (xs.length > CALC_MAX_OPERAND_DIGITS || ys.length > CALC_MAX_OPERAND_DIGITS) {
    return { ok: false, why: `operands may have at most ${CALC_MAX_OPERAND_DIGITS} digits` };
  }
  const x = Number(xs);
  const y = Number(ys);
  return { ok: true, expr, result: op === '+' ? x + y : op === '-' ? x - y : x * y };
}

const BOXED = /^\\boxed\{(.*)\}$/;

class CalcEnvironment implements Environment {
  private readonly answer: string;
  private turns = 0;
  private results: number[] = [];
  private done = false;

  constructor(readonly task: EnvTask) {
    const { a, b, c } = calcData(task);
    this.answer = String(a + b + c);
  }

  reset(): Int32Array {
    return Int32Array.from([tok.bos, ...tok.encode(this.task.prompt)]);
  }

  step(action: EnvAction): EnvStep {
    if (this.done)
      throw new Error(
        `calc: step after the episode ended (task ${this.task.id}, turn ${this.turns + 1}); the rollout stops at status done`,
      );
    this.turns++;
    const text = action.text;
    const boxed = BOXED.exec(text);
    if (boxed) {
      this.done = true;
      const correct = boxed[1] === this.answer;
      return {
        observation: new Int32Array(0),
        status: 'done',
        reward: correct ? 1 : 0,
        detail: `${text}: ${correct ? 'correct' : `incorrect (answer ${this.answer})`}`,
      };
    }
    if (text.startsWith('calc(')) {
      const closed = text.endsWith(')');
      const r = closed
        ? evaluateCalc(text.slice(5, -1))
        : ({ ok: false, why: 'unclosed: expected calc(X+Y)' } as const);
      if (!r.ok) return { observation: tok.encode('=?'), status: 'running', detail: `${text}: malformed, ${r.why}` };
      this.results.push(r.result);
      return { observation: tok.encode(`=${r.result}`), status: 'running', detail: `${text} = ${r.result}` };
    }
    return { observation: tok.encode('?'), status: 'running', detail: 'invalid action' };
  }

  getState(): string {
    return writeTurnState('results', { task: this.task.id, turns: this.turns, values: this.results, done: this.done });
  }

  setState(state: string): void {
    const s = readTurnState('calc', 'results', state, this.task.id);
    this.turns = s.turns;
    this.results = s.values;
    this.done = s.done;
  }
}

/**
 * Reward of an episode the environment did not score (truncated): 1 when the last `\boxed{}` of
 * `transcript` (the episode's decoded text; with or without special names) is exactly the answer.
 */
function verifyCalc(task: EnvTask, transcript: string): number {
  return extractBoxed(transcript) === task.answer ? 1 : 0;
}

/**
 * The reward a calc episode got, read back from its turns (each an action's text and its
 * observation's, as the transcript holds them) and how its last action ended: an action ended by
 * EOS that is a box (`BOXED`, anchored: `\boxed{1}}` boxes `1}`) was scored by `step`; any other
 * episode (out of turns) by `verifyCalc`, the last `\boxed{}` of the transcript. A box is the only
 * action `step` ends an episode on, and it has no observation, so the last turn is that action.
 * What a bundle's reward.py (worker/interop/reward_twin.py `calc_reward`) reproduces.
 */
export function calcTranscriptReward(turns: readonly string[], answer: string, lastFinish: 'stop' | 'length'): number {
  const boxed = lastFinish === 'stop' ? BOXED.exec(turns.at(-1) ?? '') : null;
  if (boxed) return boxed[1] === answer ? 1 : 0;
  return verifyCalc({ id: 'transcript', prompt: '', answer, data: {} }, turns.join('\n'));
}

/** The expert: add the first two numbers, then the third, then box the sum. */
function demonstrateCalc(task: EnvTask): string[] {
  const { a, b, c } = calcData(task);
  return [`calc(${a}+${b})`, `calc(${a + b}+${c})`, `\\boxed{${a + b + c}}`];
}

export const CALC: EnvironmentKind = {
  name: 'calc',
  title: 'Sum three two-digit numbers with a calculator tool',
  trainTasks: calcTrainTasks,
  heldOut: calcHeldOut,
  create: (task) => new CalcEnvironment(task),
  verify: verifyCalc,
  maxTurns: 4,
  // `calc(123+456)` + EOS: the longest useful action.
  maxActionTokens: 14,
  demonstrate: demonstrateCalc,
};
