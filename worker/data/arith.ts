/**
 * Arithmetic tasks with verifiable answers: addition, subtraction and multiplication of numbers
 * of up to 4 digits, as bare prompts (`47+35=`, docs/calibration.md "Task") or short word problems
 * (`what is 47 plus 35?`). The completion to learn is `\boxed{<answer>}`; the tokenizer-level
 * helper `encodeExample` appends EOS.
 *
 * The train/held-out split is a property of the problem, not of the seed or the difficulty:
 * (op, a, b) is held out when a fixed 32-bit hash of it is 0 mod 10. So no seed, format or
 * difficulty ever trains on a problem another evaluates on. Problems are ordered pairs (47+35 and
 * 35+47 are two problems). Subtraction gives negative answers unless `allowNegative: false`.
 *
 * Not a reward (see `answer.ts`) and not a dataset loader. All draws come from `mulberry32`.
 */
import { mulberry32 } from '../../kernels/common/random';
import { encodePromptCompletion, type EncodedExample, type TextTokenizer } from './tokenizer';

export type ArithOp = 'add' | 'sub' | 'mul';
export const ARITH_OPS: readonly ArithOp[] = ['add', 'sub', 'mul'];

/** What a task draws from. Operands are uniform in 0..10^digits − 1. */
export interface Difficulty {
  /** Digits of the operands, 1..4 (the first operand of every op, the second of add and sub). */
  digits: number;
  /** The operations, drawn uniformly; non-empty, no repeats. */
  ops: readonly ArithOp[];
  /** Default `digits`: digits of the second operand of a multiplication, 1..digits. */
  mulDigits?: number;
}

/**
 * Numbered levels. 1 = 2-digit addition (the headline task of docs/calibration.md "Task"); 3 = the
 * calibration's mix (add, sub, 2-digit × 1-digit multiplication).
 */
export const DIFFICULTY_LEVELS: Readonly<Record<number, Difficulty>> = Object.freeze({
  1: { digits: 2, ops: ['add'] },
  2: { digits: 2, ops: ['add', 'sub'] },
  3: { digits: 2, ops: ['add', 'sub', 'mul'], mulDigits: 1 },
  4: { digits: 2, ops: ['add', 'sub', 'mul'] },
  5: { digits: 3, ops: ['add', 'sub', 'mul'] },
  6: { digits: 4, ops: ['add', 'sub', 'mul'] },
});

type PromptFormat = 'bare' | 'words';

export interface ArithOptions {
  /** Default 1 (2-digit addition): a level of `DIFFICULTY_LEVELS` or an explicit `Difficulty`. */
  difficulty?: number | Difficulty;
  /** Default `'bare'` (`47+35=`); `'words'` uses short templates (`what is 47 plus 35?`). */
  format?: PromptFormat;
  /** Default true: subtraction includes a < b (negative answers, `\boxed{-12}`); false drops those problems. */
  allowNegative?: boolean;
  /**
   * Default: none, every training problem (about 9,000 for level 1), drawn i.i.d. N: a training
   * set of N problems, the first N distinct ones of the seed's stream, then passes over them, each
   * in a fresh seeded order (a dataset with epochs). A small set is RL's overfitting check: reward
   * on it rises within steps while held-out accuracy does not. Only `trainStream` reads it.
   */
  trainProblems?: number;
}

export interface ArithTask {
  /** `op/a/b` (bare) or `op/a/b/w<template>` (words): unique per prompt. */
  id: string;
  prompt: string;
  /** The exact integer answer as text (`-12`, `82`). */
  answer: string;
  op: ArithOp;
  a: number;
  b: number;
  /** The difficulty the task was drawn from (resolved). */
  difficulty: Difficulty;
}

/** Held out iff hash(op, a, b) mod HELD_OUT_MODULUS === 0 (about 10% of every problem space). */
const HELD_OUT_MODULUS = 10;
/** Spaces up to this many problems are enumerated for `heldOut` (exact sizes, every problem reachable). */
const ENUMERATE_LIMIT = 4_000_000;
/** Fixed seed of the held-out order: never a parameter, so every run evaluates on the same tasks. */
const HELD_OUT_ORDER_SEED = 0x0de3_9017;

const OP_CODE: Record<ArithOp, number> = { add: 1, sub: 2, mul: 3 };
const OP_SYMBOL: Record<ArithOp, string> = { add: '+', sub: '-', mul: '*' };

/** murmur3's 32-bit finaliser: a bijection on uint32 that mixes every input bit into every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The fixed hash the split is defined by. Changing it changes every split: don't. */
export function problemHash(op: ArithOp, a: number, b: number): number {
  return fmix32(fmix32(fmix32(OP_CODE[op]) ^ a) ^ b);
}

export function isHeldOut(op: ArithOp, a: number, b: number): boolean {
  return problemHash(op, a, b) % HELD_OUT_MODULUS === 0;
}

/** The level or explicit difficulty, checked and filled in; throws naming the field and the allowed range. */
export function resolveDifficulty(d: number | Difficulty = 1): Difficulty {
  if (typeof d === 'number') {
    const level = DIFFICULTY_LEVELS[d];
    if (!level)
      throw new Error(
        `difficulty = ${d}; expected a level in 1..${Object.keys(DIFFICULTY_LEVELS).length} or { digits, ops }`,
      );
    d = level;
  }
  const { digits, ops } = d;
  if (!Number.isInteger(digits) || digits < 1 || digits > 4)
    throw new Error(`difficulty.digits = ${digits}; expected an integer in 1..4`);
  if (!Array.isArray(ops) || ops.length === 0)
    throw new Error(`difficulty.ops = ${JSON.stringify(ops)}; expected a non-empty list of "add", "sub", "mul"`);
  for (const op of ops) {
    if (!ARITH_OPS.includes(op))
      throw new Error(`difficulty.ops contains ${JSON.stringify(op)}; expected "add", "sub" or "mul"`);
  }
  if (new Set(ops).size !== ops.length) throw new Error(`difficulty.ops = ${JSON.stringify(ops)} repeats an op`);
  const mulDigits = d.mulDigits ?? digits;
  if (!Number.isInteger(mulDigits) || mulDigits < 1 || mulDigits > digits) {
    throw new Error(`difficulty.mulDigits = ${mulDigits}; expected an integer in 1..${digits} (difficulty.digits)`);
  }
  return Object.freeze({ digits, ops: Object.freeze([...ops]), mulDigits });
}

/** Exclusive upper bounds of (a, b) for `op`. */
function bounds(d: Difficulty, op: ArithOp): [number, number] {
  return [10 ** d.digits, 10 ** (op === 'mul' ? (d.mulDigits ?? d.digits) : d.digits)];
}

function allowed(op: ArithOp, a: number, b: number, allowNegative: boolean): boolean {
  return allowNegative || op !== 'sub' || a >= b;
}

/** The answer of (op, a, b) as an integer string (exact: every product is below 2^53). */
export function answerOf(op: ArithOp, a: number, b: number): string {
  return String(op === 'add' ? a + b : op === 'sub' ? a - b : a * b);
}

interface Template {
  text: (a: number, b: number) => string;
  /** A story that reads wrong with a negative answer. */
  nonNegative?: boolean;
}

/** Word-problem templates: only characters of the `words` vocabulary (lowercase, digits, ` ? , .`). */
export const WORD_TEMPLATES: Readonly<Record<ArithOp, readonly Template[]>> = {
  add: [
    { text: (a, b) => `what is ${a} plus ${b}?` },
    { text: (a, b) => `add ${a} and ${b}.` },
    { text: (a, b) => `what is the sum of ${a} and ${b}?` },
    { text: (a, b) => `tom has ${a} apples and gets ${b} more. how many apples does he have?` },
  ],
  sub: [
    { text: (a, b) => `what is ${a} minus ${b}?` },
    { text: (a, b) => `subtract ${b} from ${a}.` },
    { text: (a, b) => `what is ${a} take away ${b}?` },
    { text: (a, b) => `sam has ${a} coins and spends ${b}. how many coins are left?`, nonNegative: true },
  ],
  mul: [
    { text: (a, b) => `what is ${a} times ${b}?` },
    { text: (a, b) => `multiply ${a} by ${b}.` },
    { text: (a, b) => `what is the product of ${a} and ${b}?` },
    { text: (a, b) => `a shelf has ${a} boxes with ${b} pens in each. how many pens are there?` },
  ],
};

/** Indices of the templates usable for (op, a, b). */
function templatesFor(op: ArithOp, a: number, b: number): number[] {
  const out: number[] = [];
  WORD_TEMPLATES[op].forEach((t, i) => {
    if (!t.nonNegative || a >= b) out.push(i);
  });
  return out;
}

/** The task for (op, a, b); in `words`, `pick(k)` chooses one of k usable templates. */
function makeTask(
  op: ArithOp,
  a: number,
  b: number,
  difficulty: Difficulty,
  format: PromptFormat,
  pick: (k: number) => number,
): ArithTask {
  const answer = answerOf(op, a, b);
  if (format === 'bare')
    return { id: `${op}/${a}/${b}`, prompt: `${a}${OP_SYMBOL[op]}${b}=`, answer, op, a, b, difficulty };
  const usable = templatesFor(op, a, b);
  const t = usable[pick(usable.length)];
  return { id: `${op}/${a}/${b}/w${t}`, prompt: WORD_TEMPLATES[op][t].text(a, b), answer, op, a, b, difficulty };
}

/** The SFT target: `\boxed{<answer>}` (EOS is appended by `encodeExample`). */
export function completionFor(task: ArithTask): string {
  return `\\boxed{${task.answer}}`;
}

/** `{ promptIds: BOS + prompt, completionIds: \boxed{answer} + EOS }`. */
export function encodeExample(tok: TextTokenizer, task: ArithTask): EncodedExample {
  return encodePromptCompletion(tok, task.prompt, completionFor(task));
}

function resolve(opts: ArithOptions) {
  const format = opts.format ?? 'bare';
  if (format !== 'bare' && format !== 'words')
    throw new Error(`format = ${JSON.stringify(format)}; expected "bare" or "words"`);
  return { difficulty: resolveDifficulty(opts.difficulty ?? 1), format, allowNegative: opts.allowNegative ?? true };
}

/** Number of problems (both splits) of a difficulty: 10,000 for level 1. */
export function problemSpaceSize(opts: ArithOptions = {}): number {
  const { difficulty, allowNegative } = resolve(opts);
  let n = 0;
  for (const op of difficulty.ops) {
    const [na, nb] = bounds(difficulty, op);
    // With a ≥ b required: pairs with a ≥ b in 0..na−1 × 0..nb−1 (nb ≤ na).
    n += op === 'sub' && !allowNegative ? na * nb - (nb * (nb - 1)) / 2 : na * nb;
  }
  return n;
}

/** Every problem of a difficulty, in (op, a, b) order; both splits. */
export function* enumerateProblems(opts: ArithOptions = {}): Generator<[ArithOp, number, number]> {
  const { difficulty, allowNegative } = resolve(opts);
  for (const op of difficulty.ops) {
    const [na, nb] = bounds(difficulty, op);
    for (let a = 0; a < na; a++) for (let b = 0; b < nb; b++) if (allowed(op, a, b, allowNegative)) yield [op, a, b];
  }
}

/** A seeded, infinite stream of training tasks (never a held-out problem); draws are i.i.d. */
export interface TrainStream extends Iterable<ArithTask> {
  /** The next training task. */
  next(): ArithTask;
  /** The next `n` training tasks. */
  take(n: number): ArithTask[];
  /** How many tasks were drawn so far (from creation, including `skip`). */
  readonly position: number;
}

/**
 * Training tasks from `seed`: op uniform over `difficulty.ops`, then a and b uniform, redrawn while
 * the problem is held out (or negative when not allowed). Same seed and options, same tasks in the
 * same order. With `trainProblems` = N, the first N distinct problems of that stream form the
 * training set and the stream is passes over it, each shuffled with a generator of its own. `skip`
 * (default 0) draws and discards that many tasks first, to resume a run.
 */
export function trainStream(seed: number, opts: ArithOptions = {}, skip = 0): TrainStream {
  const { difficulty, format, allowNegative } = resolve(opts);
  if (!Number.isInteger(skip) || skip < 0) throw new Error(`skip = ${skip}; expected a non-negative integer`);
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const ops = difficulty.ops;
  const draw = (): ArithTask => {
    for (;;) {
      const op = ops[int(ops.length)];
      const [na, nb] = bounds(difficulty, op);
      const a = int(na);
      const b = int(nb);
      if (!allowed(op, a, b, allowNegative) || isHeldOut(op, a, b)) continue;
      return makeTask(op, a, b, difficulty, format, int);
    }
  };
  const set = opts.trainProblems === undefined ? null : trainingSet(opts, draw);
  const passRand = mulberry32((seed ^ 0x5bd1e995) >>> 0);
  let order: number[] = [];
  let position = 0;
  const next = (): ArithTask => {
    position++;
    if (!set) return draw();
    if (order.length === 0) {
      order = Array.from(set.keys());
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(passRand() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
    }
    return set[order.pop() as number];
  };
  for (let k = 0; k < skip; k++) next();
  return {
    next,
    take: (n) => Array.from({ length: n }, next),
    get position() {
      return position;
    },
    *[Symbol.iterator]() {
      for (;;) yield next();
    },
  };
}

/** The first `opts.trainProblems` distinct problems `draw` gives; throws when the split has fewer. */
function trainingSet(opts: ArithOptions, draw: () => ArithTask): ArithTask[] {
  const n = opts.trainProblems as number;
  const size = problemSpaceSize(opts);
  const available = size <= ENUMERATE_LIMIT ? size - heldOutProblems(opts).length : Infinity;
  if (!Number.isInteger(n) || n < 1 || n > available) {
    throw new Error(
      `trainProblems = ${n}; expected an integer in 1..${available} (the training problems of this difficulty)`,
    );
  }
  const seen = new Set<string>();
  const set: ArithTask[] = [];
  while (set.length < n) {
    const t = draw();
    const key = `${t.op}/${t.a}/${t.b}`;
    if (seen.has(key)) continue;
    seen.add(key);
    set.push(t);
  }
  return set;
}

/** The word template of a held-out task: fixed by the problem's hash, so evaluation never varies. */
const heldOutPick = (op: ArithOp, a: number, b: number) => (k: number) => (problemHash(op, a, b) >>> 8) % k;

const heldOutCache = new Map<string, [ArithOp, number, number][]>();

/**
 * All held-out problems of an enumerable space, in a fixed order (cached): each op's problems
 * shuffled with a fixed seed, then taken in turn from each op (round robin), so that any prefix
 * has the ops in equal shares, as `trainStream` draws them, until the smaller ones run out.
 */
function heldOutProblems(opts: ArithOptions): [ArithOp, number, number][] {
  const { difficulty, allowNegative } = resolve(opts);
  const key = JSON.stringify([difficulty, allowNegative]);
  let list = heldOutCache.get(key);
  if (!list) {
    const perOp = difficulty.ops.map((op) => {
      const [na, nb] = bounds(difficulty, op);
      const own: [ArithOp, number, number][] = [];
      for (let a = 0; a < na; a++)
        for (let b = 0; b < nb; b++) if (allowed(op, a, b, allowNegative) && isHeldOut(op, a, b)) own.push([op, a, b]);
      const rand = mulberry32(HELD_OUT_ORDER_SEED + OP_CODE[op]);
      for (let i = own.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [own[i], own[j]] = [own[j], own[i]];
      }
      return own;
    });
    list = [];
    const longest = Math.max(...perOp.map((own) => own.length));
    for (let i = 0; i < longest; i++) for (const own of perOp) if (i < own.length) list.push(own[i]);
    heldOutCache.set(key, list);
  }
  return list;
}

/** Number of held-out problems of a difficulty (null when the space is too large to enumerate). */
export function heldOutCount(opts: ArithOptions = {}): number | null {
  return problemSpaceSize(opts) <= ENUMERATE_LIMIT ? heldOutProblems(opts).length : null;
}

/**
 * The first `n` held-out tasks in a fixed order (independent of any seed; `heldOut(n)` is a prefix
 * of `heldOut(m)` for n ≤ m), distinct problems. Spaces of up to `ENUMERATE_LIMIT` problems are
 * enumerated (see `heldOutProblems`), so `n` may be up to `heldOutCount` (1,000-odd for level 1);
 * larger spaces are sampled like `trainStream` (op uniform, then a and b) from a fixed seed,
 * skipping repeats. Throws when `n` exceeds the held-out problems.
 */
export function heldOut(n: number, opts: ArithOptions = {}): ArithTask[] {
  const { difficulty, format, allowNegative } = resolve(opts);
  if (!Number.isInteger(n) || n < 0) throw new Error(`heldOut: n = ${n}; expected a non-negative integer`);
  const task = ([op, a, b]: [ArithOp, number, number]) => makeTask(op, a, b, difficulty, format, heldOutPick(op, a, b));
  if (problemSpaceSize(opts) <= ENUMERATE_LIMIT) {
    const list = heldOutProblems(opts);
    if (n > list.length)
      throw new Error(`heldOut: n = ${n}, but this difficulty has only ${list.length} held-out problems`);
    return list.slice(0, n).map(task);
  }
  // At least 4-digit operands: ≥ 10^8 problems, ~10^7 held out, so repeats are rare for any sane n.
  if (n > problemSpaceSize(opts) / (2 * HELD_OUT_MODULUS))
    throw new Error(`heldOut: n = ${n} is too many to sample from this difficulty`);
  const rand = mulberry32(HELD_OUT_ORDER_SEED);
  const int = (k: number) => Math.floor(rand() * k);
  const seen = new Set<string>();
  const out: ArithTask[] = [];
  while (out.length < n) {
    const op = difficulty.ops[int(difficulty.ops.length)];
    const [na, nb] = bounds(difficulty, op);
    const a = int(na);
    const b = int(nb);
    const key = `${op}/${a}/${b}`;
    if (!allowed(op, a, b, allowNegative) || !isHeldOut(op, a, b) || seen.has(key)) continue;
    seen.add(key);
    out.push(task([op, a, b]));
  }
  return out;
}
