import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { lastBoxed, lastNumber, mathReward, type MathRewardResult } from './math-reward';
import { parseRational, rationalEquals } from './rational';

const FIFTY = '12345678901234567890123456789012345678901234567890';
const FIFTY_PLUS_ONE = '12345678901234567890123456789012345678901234567891';

type Case = [name: string, completion: string, reference: string, score: 0 | 1, extracted: string | null];

function expectScore(out: MathRewardResult, score: 0 | 1, extracted: string | null): void {
  expect(out.extracted).toBe(extracted);
  expect(out.score).toBe(score);
  expect(out.components.correct).toBe(score);
}

describe('mathReward: boxed answers (default requireBoxed = true)', () => {
  const cases: Case[] = [
    ['integer', 'So the answer is \\boxed{42}.', '42', 1, '42'],
    ['wrong integer', 'So the answer is \\boxed{41}.', '42', 0, '41'],
    ['nested braces: \\frac in a box vs 0.5', '\\boxed{\\frac{1}{2}}', '0.5', 1, '\\frac{1}{2}'],
    ['0.5 in a box vs \\frac', '\\boxed{0.5}', '\\frac{1}{2}', 1, '0.5'],
    ['1/2 in a box vs 0.50', '\\boxed{1/2}', '0.50', 1, '1/2'],
    ['\\dfrac vs a/b', '\\boxed{\\dfrac{6}{8}}', '3/4', 1, '\\dfrac{6}{8}'],
    ['\\tfrac', '\\boxed{\\tfrac{1}{3}}', '2/6', 1, '\\tfrac{1}{3}'],
    ['1/3 is not 0.333', '\\boxed{0.333}', '1/3', 0, '0.333'],
    [
      'deeply nested braces are extracted whole (extra braces are not a number)',
      '\\boxed{\\frac{{1}}{2}}',
      '1/2',
      0,
      '\\frac{{1}}{2}',
    ],
    ['several boxes: the last wins', '\\boxed{3} no wait, \\boxed{5}', '5', 1, '5'],
    ['several boxes: an earlier one does not count', '\\boxed{3} no wait, \\boxed{5}', '3', 0, '5'],
    ["a box inside an earlier box is that box's content", '\\boxed{1+\\boxed{2}} so \\boxed{3}', '3', 1, '3'],
    ['a box wrapping the whole content is unwrapped', '\\boxed{ \\boxed{\\boxed{7}} }', '7', 1, '7'],
    ['a box inside text is not unwrapped', '\\boxed{x=\\boxed{2}}', '2', 0, 'x=\\boxed{2}'],
    ['space before the brace', '\\boxed {8}', '8', 1, '8'],
    ['whitespace inside the box and around the reference', '\\boxed{  42 \n}', ' 42\n', 1, '42'],
    ['negative integer', '\\boxed{-3}', '-3', 1, '-3'],
    ['sign matters', '\\boxed{-3}', '3', 0, '-3'],
    ['typographic minus', '\\boxed{\u22123}', '-3', 1, '\u22123'],
    ['-\\frac vs a negative decimal', '\\boxed{-\\frac{1}{2}}', '-0.5', 1, '-\\frac{1}{2}'],
    ['leading-dot decimal', '\\boxed{.5}', '1/2', 1, '.5'],
    ['trailing-dot decimal', '\\boxed{5.}', '5', 1, '5.'],
    ['trailing zeros', '\\boxed{2.500}', '5/2', 1, '2.500'],
    ['leading plus', '\\boxed{+7}', '7', 1, '+7'],
    ['0.3 vs 3/10', '\\boxed{0.3}', '3/10', 1, '0.3'],
    ['0.1+0.2 in floating point is not 0.3', `\\boxed{${0.1 + 0.2}}`, '0.3', 0, '0.30000000000000004'],
    ['50-digit integer, equal', `\\boxed{${FIFTY}}`, FIFTY, 1, FIFTY],
    ['50-digit integer, off by one', `\\boxed{${FIFTY_PLUS_ONE}}`, FIFTY, 0, FIFTY_PLUS_ONE],
    ['thousands separator is not a number', '\\boxed{1,000}', '1000', 0, '1,000'],
    ['thousands separator matches only the same text', '\\boxed{1,000}', '1,000', 1, '1,000'],
    ['escaped braces do not close the box', '\\boxed{\\{1,2\\}}', '\\{1,2\\}', 1, '\\{1,2\\}'],
    ['empty box', '\\boxed{}', '0', 0, ''],
    ['units are not stripped', '\\boxed{5\\text{ cm}}', '5', 0, '5\\text{ cm}'],
  ];
  for (const [name, completion, reference, score, extracted] of cases) {
    it(name, () => {
      const out = mathReward(completion, reference);
      expectScore(out, score, extracted);
      expect(out.components.boxed).toBe(1);
    });
  }

  it('records boxed, parsed and correct separately', () => {
    expect(mathReward('\\boxed{7}', '7').components).toEqual({ boxed: 1, parsed: 1, correct: 1 });
    expect(mathReward('\\boxed{6}', '7').components).toEqual({ boxed: 1, parsed: 1, correct: 0 });
    expect(mathReward('\\boxed{seven}', '7').components).toEqual({ boxed: 1, parsed: 0, correct: 0 });
    expect(mathReward('7', '7').components).toEqual({ boxed: 0, parsed: 0, correct: 0 });
  });

  it('says why in the detail', () => {
    expect(mathReward('\\boxed{2/4}', '0.5').detail).toBe('answer 1/2 = reference 1/2');
    expect(mathReward('\\boxed{3}', '0.5').detail).toBe('answer 3 ≠ reference 1/2');
    expect(mathReward('\\boxed{x}', '0.5').detail).toBe('answer "x" is not a number; reference 1/2');
    expect(mathReward('42', '42').detail).toMatch(/requireBoxed/);
    expect(mathReward('\\boxed{4', '4').detail).toMatch(/never closed/);
  });
});

describe('mathReward: no box, unclosed box', () => {
  it('requireBoxed = true (the default): a bare number is no answer', () => {
    const out = mathReward('The answer is 42.', '42');
    expectScore(out, 0, null);
    expect(mathReward('The answer is 42.', '42', { requireBoxed: true })).toEqual(out);
    expect(mathReward('The answer is 42.', '42', {})).toEqual(out);
  });

  it('an unclosed last box is no answer, even after a closed one', () => {
    expectScore(mathReward('\\boxed{5} wait \\boxed{5', '5'), 0, null);
    expectScore(mathReward('\\boxed{5\\}', '5'), 0, null);
  });

  it('an unclosed last box is no answer with requireBoxed = false too', () => {
    const out = mathReward('so 5 and \\boxed{5', '5', { requireBoxed: false });
    expectScore(out, 0, null);
    expect(out.components.boxed).toBe(0);
  });
});

describe('mathReward: requireBoxed = false falls back to the last number', () => {
  const cases: Case[] = [
    ['last integer', 'First 3, then 4, so 42.', '42', 1, '42.'],
    ['not an earlier number', 'It is 42, not 41', '42', 0, '41'],
    ['negative after =', 'x=-5', '-5', 1, '-5'],
    ['negative in parentheses', 'the result (-5)', '-5', 1, '-5'],
    ['a minus after an operand is subtraction', '3-5', '5', 1, '5'],
    ['a/b', 'it is 1/2', '0.5', 1, '1/2'],
    ['a / b with spaces', 'it is 3 / 4', '0.75', 1, '3 / 4'],
    ['\\frac', 'so $\\frac{2}{4}$', '1/2', 1, '\\frac{2}{4}'],
    ['-\\frac', 'so $-\\frac{2}{4}$', '-1/2', 1, '-\\frac{2}{4}'],
    ['leading-dot decimal', 'about .25', '1/4', 1, '.25'],
    ['thousands separator is one token that is not a number', 'It costs 1,000', '1000', 0, '1,000'],
    ['a list is not a thousands group', 'the pair 1,2', '2', 1, '2'],
    ['exponents are not read', 'n = 1e3', '1000', 0, '3'],
    ['50-digit integer', `total: ${FIFTY}`, FIFTY, 1, FIFTY],
    ['division by zero is not a number', 'so 1/0', '5', 0, '1/0'],
    ['no number at all', 'I do not know.', '5', 0, null],
    ['a box still wins over later numbers', '\\boxed{4}, checked in 3 steps', '4', 1, '4'],
  ];
  for (const [name, completion, reference, score, extracted] of cases) {
    it(name, () => {
      const out = mathReward(completion, reference, { requireBoxed: false });
      expectScore(out, score, extracted);
      expect(out.components.boxed).toBe(completion.includes('\\boxed') ? 1 : 0);
    });
  }

  it('the same completions score 0 with requireBoxed = true', () => {
    expectScore(mathReward('First 3, then 4, so 42.', '42', { requireBoxed: true }), 0, null);
    expectScore(mathReward('x=-5', '-5'), 0, null);
  });
});

describe('mathReward: text references', () => {
  const cases: Case[] = [
    ['same text', '\\boxed{x+1}', 'x+1', 1, 'x+1'],
    ['trimmed on both sides', '\\boxed{ Paris }', '  Paris\n', 1, 'Paris'],
    ['inner whitespace is significant', '\\boxed{x + 1}', 'x+1', 0, 'x + 1'],
    ['case is significant', '\\boxed{paris}', 'Paris', 0, 'paris'],
    ['a number never equals a text reference', '\\boxed{5}', 'five', 0, '5'],
    ['a division-by-zero reference matches only the same text', '\\boxed{1/0}', '1/0', 1, '1/0'],
    ['a division-by-zero reference is not another zero division', '\\boxed{2/0}', '1/0', 0, '2/0'],
    ['a blank reference matches nothing, not even an empty box', '\\boxed{}', '', 0, ''],
    ['a whitespace reference matches nothing', '\\boxed{ }', '   ', 0, ''],
  ];
  for (const [name, completion, reference, score, extracted] of cases) {
    it(name, () => {
      const out = mathReward(completion, reference);
      expectScore(out, score, extracted);
    });
  }

  it('a numeric reference is compared as a number, not as text', () => {
    expectScore(mathReward('\\boxed{05}', '5'), 1, '05');
    expectScore(mathReward('\\boxed{1/0}', '5'), 0, '1/0');
    expect(mathReward('\\boxed{1/0}', '5').components.parsed).toBe(0);
  });
});

describe('lastBoxed and lastNumber', () => {
  it('lastBoxed reports none, unclosed and closed', () => {
    expect(lastBoxed('no box')).toEqual({ status: 'none' });
    expect(lastBoxed('\\boxed{1} \\boxed{2')).toEqual({ status: 'unclosed' });
    expect(lastBoxed('\\boxed{a{b}c} \\boxed{d}')).toEqual({ status: 'closed', content: 'd' });
    expect(lastBoxed('\\boxed{\\\\}')).toEqual({ status: 'closed', content: '\\\\' });
  });

  it('lastNumber finds the last number-like token', () => {
    expect(lastNumber('a 1 b 2.5 c')).toBe('2.5');
    expect(lastNumber('none')).toBeNull();
    expect(lastNumber('1,234,567.5 units')).toBe('1,234,567.5');
  });
});

describe('mathReward: malformed and hostile input never throws', () => {
  const hostile: Array<[string, string]> = [
    ['\\boxed{'.repeat(50_000), '1'],
    ['{'.repeat(50_000) + '\\boxed{1}', '1'],
    ['}'.repeat(50_000), '1'],
    ['\\'.repeat(50_001), '1'],
    ['\\boxed{' + '9'.repeat(5000) + '}', '9'.repeat(5000)],
    ['1'.repeat(200_000), '1'],
    ['-'.repeat(100_000) + '1', '-1'],
    ['\\frac{' + ' '.repeat(100_000), '1'],
    ['\ud800\udfff\u0000', '\u0000'],
  ];
  for (const [completion, reference] of hostile) {
    it(`${JSON.stringify(completion.slice(0, 10))}… (${completion.length} chars), both modes`, () => {
      for (const requireBoxed of [true, false]) {
        const out = mathReward(completion, reference, { requireBoxed });
        expect(out.score).toBe(out.components.correct);
        expect([0, 1]).toContain(out.score);
      }
    });
  }

  it('a 5000-digit box matches its text reference even past the parse limit', () => {
    const out = mathReward('\\boxed{' + '9'.repeat(5000) + '}', '9'.repeat(5000));
    expect(out.components).toEqual({ boxed: 1, parsed: 0, correct: 1 });
  });

  it('components are consistent on 3000 seeded random completions', () => {
    const rand = mulberry32(5);
    const pieces = ['\\boxed', '{', '}', '\\', '\\frac', '1', '2', '0', '-', '.', '/', ',', ' ', 'x', '\n', '5'];
    const refs = ['1', '-1', '1/2', '0.5', '12', 'x', '', '1/0', '2.'];
    let correct = 0;
    for (let n = 0; n < 3000; n++) {
      let completion = '';
      const len = Math.floor(rand() * 30);
      for (let k = 0; k < len; k++) completion += pieces[Math.floor(rand() * pieces.length)];
      const reference = refs[n % refs.length];
      const requireBoxed = rand() < 0.5;
      const out = mathReward(completion, reference, { requireBoxed });
      const { boxed, parsed } = out.components;
      expect(out.score).toBe(out.components.correct);
      if (out.extracted === null) expect(out.components).toEqual({ boxed: 0, parsed: 0, correct: 0 });
      else expect(parsed).toBe(parseRational(out.extracted) ? 1 : 0);
      if (requireBoxed && out.extracted !== null) expect(boxed).toBe(1);
      const refValue = parseRational(reference);
      const value = out.extracted === null ? null : parseRational(out.extracted);
      if (refValue && value) expect(out.score).toBe(rationalEquals(value, refValue) ? 1 : 0);
      correct += out.score;
    }
    // the generator is not degenerate: some completions score
    expect(correct).toBeGreaterThan(0);
  });
});
