import { describe, expect, it } from 'vitest';
import {
  ARITH_OPS,
  answerOf,
  completionFor,
  DIFFICULTY_LEVELS,
  encodeExample,
  enumerateProblems,
  heldOut,
  heldOutCount,
  isHeldOut,
  problemHash,
  problemSpaceSize,
  resolveDifficulty,
  trainStream,
  WORD_TEMPLATES,
  type ArithOp,
  type ArithOptions,
  type Difficulty,
} from './arith';
import { arithTokenizer, BOS_ID, EOS_ID } from './tokenizer';
import { exactMatch } from './answer';

const key = (t: { op: ArithOp; a: number; b: number }) => `${t.op}/${t.a}/${t.b}`;

describe('tasks', () => {
  it('bare prompt and completion match docs/calibration.md', () => {
    const [t] = trainStream(1).take(1);
    expect(t.prompt).toBe(`${t.a}+${t.b}=`);
    expect(t.op).toBe('add');
    expect(t.answer).toBe(String(t.a + t.b));
    expect(completionFor(t)).toBe(`\\boxed{${t.a + t.b}}`);
    expect(t.id).toBe(`add/${t.a}/${t.b}`);
    expect(t.difficulty).toEqual({ digits: 2, ops: ['add'], mulDigits: 2 });
  });

  it('answers are exact integers, negative for a < b in subtraction', () => {
    expect(answerOf('add', 47, 35)).toBe('82');
    expect(answerOf('sub', 12, 40)).toBe('-28');
    expect(answerOf('sub', 0, 0)).toBe('0');
    expect(answerOf('mul', 9999, 9999)).toBe('99980001');
  });

  it('encodeExample: BOS + prompt, \\boxed{answer} + EOS', () => {
    const tok = arithTokenizer('bare');
    const task = {
      id: 'sub/5/12',
      prompt: '5-12=',
      answer: '-7',
      op: 'sub' as const,
      a: 5,
      b: 12,
      difficulty: resolveDifficulty(2),
    };
    const { promptIds, completionIds } = encodeExample(tok, task);
    expect(tok.decode(promptIds, { specials: true })).toBe('<bos>5-12=');
    expect(tok.decode(completionIds, { specials: true })).toBe('\\boxed{-7}<eos>');
    expect(promptIds[0]).toBe(BOS_ID);
    expect(completionIds[completionIds.length - 1]).toBe(EOS_ID);
    expect(exactMatch(tok.decode(completionIds), task)).toBe(true);
  });

  it('every operand has at most `digits` digits, mul second operand at most `mulDigits`', () => {
    for (const t of trainStream(3, { difficulty: 3 }).take(3000)) {
      expect(t.a).toBeLessThan(100);
      expect(t.b).toBeLessThan(t.op === 'mul' ? 10 : 100);
      expect(t.a).toBeGreaterThanOrEqual(0);
    }
    const seen = new Set(
      trainStream(3, { difficulty: { digits: 1, ops: ['add'] } })
        .take(2000)
        .map((t) => t.a),
    );
    expect([...seen].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('allowNegative: false drops a < b from subtraction, in training and held-out', () => {
    const opts: ArithOptions = { difficulty: { digits: 2, ops: ['sub'] }, allowNegative: false };
    for (const t of trainStream(5, opts).take(2000)) expect(t.a).toBeGreaterThanOrEqual(t.b);
    for (const t of heldOut(heldOutCount(opts)!, opts)) expect(t.a).toBeGreaterThanOrEqual(t.b);
    expect(problemSpaceSize(opts)).toBe(5050);
    expect(
      trainStream(5, { difficulty: 2 })
        .take(2000)
        .some((t) => t.answer.startsWith('-')),
    ).toBe(true);
  });

  it('words: prompts come from the templates of their op; stories never with a negative answer', () => {
    const tasks = trainStream(9, { difficulty: 4, format: 'words' }).take(3000);
    const used = new Set<string>();
    for (const t of tasks) {
      const i = Number(t.id.split('/w')[1]);
      expect(WORD_TEMPLATES[t.op][i].text(t.a, t.b)).toBe(t.prompt);
      if (WORD_TEMPLATES[t.op][i].nonNegative) expect(Number(t.answer)).toBeGreaterThanOrEqual(0);
      used.add(`${t.op}${i}`);
    }
    expect(used.size).toBe(12);
    expect(tasks.find((t) => t.id.endsWith('/w0') && t.op === 'add')!.prompt).toMatch(/^what is \d+ plus \d+\?$/);
  });
});

describe('difficulty', () => {
  it('level 1 is 2-digit addition; levels 1..6 resolve', () => {
    expect(resolveDifficulty(1)).toEqual({ digits: 2, ops: ['add'], mulDigits: 2 });
    for (const level of Object.keys(DIFFICULTY_LEVELS)) expect(() => resolveDifficulty(Number(level))).not.toThrow();
  });

  it('refuses bad values naming the field and the range', () => {
    expect(() => resolveDifficulty(0)).toThrow('difficulty = 0; expected a level in 1..6 or { digits, ops }');
    expect(() => resolveDifficulty({ digits: 5, ops: ['add'] })).toThrow(
      'difficulty.digits = 5; expected an integer in 1..4',
    );
    expect(() => resolveDifficulty({ digits: 2, ops: [] })).toThrow(/difficulty\.ops = \[\]/);
    expect(() => resolveDifficulty({ digits: 2, ops: ['div' as ArithOp] })).toThrow('difficulty.ops contains "div"');
    expect(() => resolveDifficulty({ digits: 2, ops: ['add', 'add'] })).toThrow(/repeats an op/);
    expect(() => resolveDifficulty({ digits: 2, ops: ['mul'], mulDigits: 3 })).toThrow(
      'difficulty.mulDigits = 3; expected an integer in 1..2',
    );
    expect(() => trainStream(1, { format: 'latex' as 'bare' })).toThrow('format = "latex"; expected "bare" or "words"');
  });

  it('problem space sizes', () => {
    expect(problemSpaceSize()).toBe(10_000);
    expect(problemSpaceSize({ difficulty: 3 })).toBe(21_000);
    expect(problemSpaceSize({ difficulty: 5 })).toBe(3_000_000);
    let n = 0;
    for (const _ of enumerateProblems({ difficulty: 3 })) n++;
    expect(n).toBe(21_000);
  });
});

describe('vocabulary coverage', () => {
  const tok = arithTokenizer('words');
  const bare = arithTokenizer('bare');
  const difficulties: Difficulty[] = [];
  for (let digits = 1; digits <= 4; digits++) for (const op of ARITH_OPS) difficulties.push({ digits, ops: [op] });

  it('every prompt and completion of every op, digit count and format encodes and decodes back', () => {
    for (const difficulty of difficulties) {
      for (const format of ['bare', 'words'] as const) {
        const tasks = [
          ...trainStream(11, { difficulty, format }).take(300),
          ...heldOut(Math.min(50, heldOutCount({ difficulty }) ?? 50), { difficulty, format }),
        ];
        for (const t of tasks) {
          const { promptIds, completionIds } = encodeExample(tok, t);
          expect(tok.decode(promptIds)).toBe(t.prompt);
          expect(tok.decode(completionIds)).toBe(completionFor(t));
          if (format === 'bare') expect(() => encodeExample(bare, t)).not.toThrow();
        }
      }
    }
  });

  it('every word template encodes, with a negative answer too', () => {
    for (const op of ARITH_OPS) {
      for (const t of WORD_TEMPLATES[op]) expect(tok.decode(tok.encode(t.text(1234, 987)))).toBe(t.text(1234, 987));
    }
    expect(tok.decode(tok.encode('\\boxed{-9998}'))).toBe('\\boxed{-9998}');
  });
});

describe('determinism', () => {
  it('same seed and options, same tasks in the same order', () => {
    for (const opts of [{}, { difficulty: 4, format: 'words' as const }, { difficulty: 6 }]) {
      expect(trainStream(42, opts).take(500)).toEqual(trainStream(42, opts).take(500));
    }
  });

  it('different seeds, different streams', () => {
    const a = trainStream(1).take(50).map(key);
    const b = trainStream(2).take(50).map(key);
    expect(a).not.toEqual(b);
  });

  it('skip resumes a stream where it left off; position counts draws', () => {
    const s = trainStream(7, { difficulty: 4, format: 'words' });
    const first = s.take(100);
    expect(s.position).toBe(100);
    const resumed = trainStream(7, { difficulty: 4, format: 'words' }, 60);
    expect(resumed.position).toBe(60);
    expect(resumed.take(40)).toEqual(first.slice(60));
  });

  it('the stream is iterable and agrees with take', () => {
    const out = [];
    for (const t of trainStream(8)) {
      out.push(t);
      if (out.length === 20) break;
    }
    expect(out).toEqual(trainStream(8).take(20));
  });

  it('trainProblems: the first N distinct problems of the stream, each pass a fresh order of all N', () => {
    const n = 16;
    const s = trainStream(3, { trainProblems: n });
    const passes = [0, 1, 2].map(() => s.take(n).map(key));
    const distinct: string[] = [];
    for (const k of trainStream(3).take(200).map(key))
      if (!distinct.includes(k) && distinct.length < n) distinct.push(k);
    for (const pass of passes) expect([...pass].sort()).toEqual([...distinct].sort());
    expect(passes[1]).not.toEqual(passes[0]);
    expect(s.position).toBe(3 * n);
    // Resuming mid-pass continues the same order; another seed is another set.
    expect(trainStream(3, { trainProblems: n }, 20).take(28).map(key)).toEqual(passes.flat().slice(20));
    expect(trainStream(4, { trainProblems: n }).take(n).map(key).sort()).not.toEqual([...distinct].sort());
    for (const t of passes.flat())
      expect(isHeldOut('add', Number(t.split('/')[1]), Number(t.split('/')[2]))).toBe(false);
  });

  it('trainProblems beyond the training split, or not a positive integer, is refused naming the field', () => {
    const available = problemSpaceSize() - (heldOutCount() as number);
    expect(() => trainStream(1, { trainProblems: available + 1 })).toThrow(
      `trainProblems = ${available + 1}; expected an integer in 1..${available}`,
    );
    expect(() => trainStream(1, { trainProblems: 0 })).toThrow(/trainProblems = 0; expected an integer in 1\.\./);
    expect(() => trainStream(1, { trainProblems: 2.5 })).toThrow(/trainProblems = 2\.5/);
    expect(trainStream(1, { trainProblems: available }).take(3)).toHaveLength(3);
  });

  it('the split hash is pinned (changing it would silently change every held-out set)', () => {
    expect(problemHash('add', 47, 35)).toBe(problemHash('add', 47, 35));
    expect(heldOutCount()).toBe(PINNED_LEVEL1_HELD_OUT);
    expect(heldOut(5).map((t) => t.prompt)).toEqual(PINNED_LEVEL1_FIRST5);
  });
});

// Recorded from this implementation; see the determinism test above.
const PINNED_LEVEL1_HELD_OUT = 1072;
const PINNED_LEVEL1_FIRST5 = ['16+0=', '29+57=', '56+73=', '39+47=', '97+47='];

describe('splits', () => {
  it('train and held-out are disjoint over the whole space, for every op at 1 and 2 digits', () => {
    for (const digits of [1, 2]) {
      for (const op of ARITH_OPS) {
        const opts: ArithOptions = { difficulty: { digits, ops: [op] } };
        const size = problemSpaceSize(opts);
        const held = new Set(heldOut(heldOutCount(opts)!, opts).map(key));
        let expected = 0;
        for (const [o, a, b] of enumerateProblems(opts)) if (isHeldOut(o, a, b)) expected++;
        expect(held.size).toBe(expected);
        // The training stream, drawn long enough to visit nearly every training problem, never hits a held-out one.
        const trainSeen = new Set<string>();
        const clashes: string[] = [];
        for (const t of trainStream(123, opts).take(6 * size)) {
          if (held.has(key(t))) clashes.push(key(t));
          trainSeen.add(key(t));
        }
        expect(clashes).toEqual([]);
        expect(trainSeen.size).toBeGreaterThan(0.99 * (size - expected));
        expect(trainSeen.size + held.size).toBeLessThanOrEqual(size);
      }
    }
  });

  it('about 10% of each space is held out', () => {
    for (const level of [1, 2, 3, 4]) {
      const n = heldOutCount({ difficulty: level })!;
      const size = problemSpaceSize({ difficulty: level });
      expect(Math.abs(n / size - 0.1)).toBeLessThan(0.01);
    }
  });

  it('the split is a property of the problem: the same under every difficulty and format', () => {
    const l1 = new Set(heldOut(heldOutCount({ difficulty: 1 })!, { difficulty: 1 }).map(key));
    const l4Add = heldOut(heldOutCount({ difficulty: 4 })!, { difficulty: 4, format: 'words' })
      .filter((t) => t.op === 'add')
      .map(key);
    expect(new Set(l4Add)).toEqual(l1);
    for (const t of trainStream(5, { difficulty: 4, format: 'words' }).take(5000))
      expect(isHeldOut(t.op, t.a, t.b)).toBe(false);
  });

  it('held-out: size, distinct problems, order stable across calls and a prefix for smaller n', () => {
    const all = heldOut(heldOutCount()!);
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length);
    expect(heldOut(1000)).toEqual(all.slice(0, 1000));
    expect(heldOut(100)).toEqual(heldOut(1000).slice(0, 100));
    expect(heldOut(0)).toEqual([]);
    for (const t of all) expect(isHeldOut(t.op, t.a, t.b)).toBe(true);
    expect(() => heldOut(all.length + 1)).toThrow(
      `heldOut: n = ${all.length + 1}, but this difficulty has only ${all.length} held-out problems`,
    );
  });

  it('held-out order is shuffled (not lexicographic) and balances the ops', () => {
    const first = heldOut(200);
    expect(first.filter((t) => t.a < 10).length).toBeLessThan(60);
    const mixed = heldOut(240, { difficulty: 3 }); // 2-digit × 1-digit mul has only 95 held-out problems
    for (const op of ARITH_OPS) expect(mixed.filter((t) => t.op === op)).toHaveLength(80);
    const rest = heldOut(heldOutCount({ difficulty: 3 })!, { difficulty: 3 }).slice(285);
    expect(rest.some((t) => t.op === 'mul')).toBe(false);
  });

  it('held-out words: the template is fixed per problem', () => {
    const a = heldOut(50, { difficulty: 4, format: 'words' });
    expect(a).toEqual(heldOut(50, { difficulty: 4, format: 'words' }));
    expect(a.map(key)).toEqual(heldOut(50, { difficulty: 4 }).map(key));
  });

  it('held-out for a space too large to enumerate: sampled, distinct, stable, all held out', () => {
    const opts: ArithOptions = { difficulty: 6 };
    expect(heldOutCount(opts)).toBeNull();
    const a = heldOut(300, opts);
    expect(new Set(a.map(key)).size).toBe(300);
    expect(heldOut(100, opts)).toEqual(a.slice(0, 100));
    for (const t of a) expect(isHeldOut(t.op, t.a, t.b)).toBe(true);
    for (const op of ARITH_OPS) expect(a.filter((t) => t.op === op).length).toBeGreaterThan(60);
  });
});
