import { describe, expect, it } from 'vitest';
import { formatRational, makeRational, MAX_DIGITS, parseRational, rationalEquals, type Rational } from './rational';

const r = (num: bigint, den: bigint): Rational => ({ num, den });

describe('parseRational: accepted forms, reduced', () => {
  const cases: Array<[string, Rational]> = [
    ['0', r(0n, 1n)],
    ['7', r(7n, 1n)],
    ['-7', r(-7n, 1n)],
    ['+7', r(7n, 1n)],
    ['\u22127', r(-7n, 1n)],
    ['- 7', r(-7n, 1n)],
    ['007', r(7n, 1n)],
    ['-0', r(0n, 1n)],
    ['0.5', r(1n, 2n)],
    ['.5', r(1n, 2n)],
    ['-.5', r(-1n, 2n)],
    ['5.', r(5n, 1n)],
    ['2.500', r(5n, 2n)],
    ['0.1', r(1n, 10n)],
    ['0.30', r(3n, 10n)],
    ['1/2', r(1n, 2n)],
    ['2/4', r(1n, 2n)],
    ['-3/4', r(-3n, 4n)],
    ['3/-4', r(-3n, 4n)],
    ['-3/-4', r(3n, 4n)],
    [' 6 / 8 ', r(3n, 4n)],
    ['1.5/3', r(1n, 2n)],
    ['0/5', r(0n, 1n)],
    ['\\frac{1}{2}', r(1n, 2n)],
    ['\\dfrac{2}{4}', r(1n, 2n)],
    ['\\tfrac{3}{9}', r(1n, 3n)],
    ['\\frac { 3 } { 6 }', r(1n, 2n)],
    ['-\\frac{1}{2}', r(-1n, 2n)],
    ['\\frac{-1}{2}', r(-1n, 2n)],
    ['-\\frac{-1}{2}', r(1n, 2n)],
    ['\\frac{0.5}{2}', r(1n, 4n)],
    ['\\frac12', r(1n, 2n)],
    ['-\\frac34', r(-3n, 4n)],
    ['  42\n', r(42n, 1n)],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => {
      expect(parseRational(text)).toEqual(want);
    });
  }
});

describe('parseRational: rejected forms give null', () => {
  const rejected = [
    '',
    '   ',
    '.',
    '-',
    '+',
    'abc',
    '1,000',
    '1 000',
    '1e3',
    '1.2.3',
    '1/2/3',
    '1 1/2',
    '--5',
    '1/0',
    '0/0',
    '\\frac{1}{0}',
    '5/0.0',
    '\\frac{a}{b}',
    '\\frac{1}{2',
    '\\frac{1}',
    '\\frac123',
    '$5$',
    '5%',
    '1+1',
    '0x10',
    'Infinity',
    'NaN',
    '٣',
    '½',
    '\\sqrt{4}',
    '\\frac{1}{2}3',
  ];
  for (const text of rejected) {
    it(JSON.stringify(text), () => {
      expect(parseRational(text)).toBeNull();
    });
  }
});

describe('parseRational: exactness', () => {
  it('keeps 50-digit integers exact and tells neighbours apart', () => {
    const a = '12345678901234567890123456789012345678901234567890';
    const b = '12345678901234567890123456789012345678901234567891';
    expect(parseRational(a)).toEqual(r(BigInt(a), 1n));
    expect(rationalEquals(parseRational(a)!, parseRational(b)!)).toBe(false);
    // as doubles they would be the same number
    expect(Number(a)).toBe(Number(b));
  });

  it('0.1 + 0.2 style values compare exactly: 0.3 = 3/10 = 0.30, 0.3 ≠ 0.30000000000000004', () => {
    const x = parseRational('0.3')!;
    expect(rationalEquals(x, parseRational('3/10')!)).toBe(true);
    expect(rationalEquals(x, parseRational('0.30')!)).toBe(true);
    expect(rationalEquals(x, parseRational(String(0.1 + 0.2))!)).toBe(false);
  });

  it('1/3 is not 0.3333333333333333', () => {
    expect(rationalEquals(parseRational('1/3')!, parseRational('0.3333333333333333')!)).toBe(false);
  });

  it('reduces huge fractions exactly', () => {
    const big = '1' + '0'.repeat(60);
    expect(parseRational(`${big}/${big}0`)).toEqual(r(1n, 10n));
  });

  it(`accepts ${MAX_DIGITS} digits and rejects ${MAX_DIGITS + 1}`, () => {
    expect(parseRational('9'.repeat(MAX_DIGITS))).toEqual(r(10n ** BigInt(MAX_DIGITS) - 1n, 1n));
    expect(parseRational('9'.repeat(MAX_DIGITS + 1))).toBeNull();
    expect(parseRational('0.' + '1'.repeat(MAX_DIGITS))).toBeNull();
  });
});

describe('rationalEquals, makeRational, formatRational', () => {
  it('compares unreduced fractions by cross-multiplication', () => {
    expect(rationalEquals(r(2n, 4n), r(-3n, -6n))).toBe(true);
    expect(rationalEquals(r(1n, 2n), r(1n, 3n))).toBe(false);
    expect(rationalEquals(r(0n, 1n), r(0n, 7n))).toBe(true);
  });

  it('makeRational normalises the sign into the numerator and rejects a zero denominator', () => {
    expect(makeRational(3n, -6n)).toEqual(r(-1n, 2n));
    expect(makeRational(0n, -5n)).toEqual(r(0n, 1n));
    expect(makeRational(1n, 0n)).toBeNull();
  });

  it('formats integers without a denominator', () => {
    expect(formatRational(r(-3n, 1n))).toBe('-3');
    expect(formatRational(r(1n, 2n))).toBe('1/2');
  });
});

describe('parseRational: hostile input never throws and stays fast', () => {
  const hostile = [
    '1/' + ' '.repeat(100_000) + 'x',
    '-' + ' '.repeat(100_000) + 'x',
    '\\frac{' + ' '.repeat(100_000),
    '{'.repeat(50_000),
    '9'.repeat(200_000),
    '\u0000\uffff\ud800',
  ];
  for (const text of hostile) {
    it(`${JSON.stringify(text.slice(0, 12))}… (${text.length} chars)`, () => {
      expect(parseRational(text)).toBeNull();
    });
  }
});
