import { describe, expect, it } from 'vitest';
import { fixed, rangeText, readable, significant } from './format';

describe('fixed', () => {
  it('rounds like toFixed', () => {
    expect([fixed(0.31234, 3), fixed(-1.5, 1), fixed(2, 0), fixed(1234.5678, 2)]).toEqual([
      '0.312',
      '-1.5',
      '2',
      '1234.57',
    ]);
  });

  it('never prints a negative zero', () => {
    expect([fixed(-3e-7, 4), fixed(-0.00049, 3), fixed(-0, 2), fixed(-0.4, 0)]).toEqual([
      '0.0000',
      '0.000',
      '0.00',
      '0',
    ]);
    expect(fixed(-0.0005, 3)).toBe('-0.001');
  });

  it("prints '–' for a value that is not a finite number", () => {
    expect([fixed(NaN, 2), fixed(Infinity, 2), fixed(-Infinity, 0)]).toEqual(['–', '–', '–']);
  });
});

describe('significant', () => {
  it('keeps 4 significant digits, an exponent for tiny or huge values, no negative zero', () => {
    expect([
      significant(0.312345),
      significant(1234.56),
      significant(3.2),
      significant(2e-5),
      significant(-2.345e-5),
      significant(1.5e7),
    ]).toEqual(['0.3123', '1235', '3.2', '2e-5', '-2.345e-5', '1.5e+7']);
    expect([significant(0), significant(-0), significant(NaN)]).toEqual(['0', '0', '–']);
    expect(significant(-0.12344, 3)).toBe('-0.123');
  });
});

describe('readable and rangeText', () => {
  it('keeps 3 significant digits in plain decimals down to 1e-4, with a true minus sign', () => {
    expect([readable(-0.001986), readable(-6.212e-4), readable(0.8125), readable(12345.6), readable(3)]).toEqual([
      '−0.00199',
      '−0.000621',
      '0.813',
      '12346',
      '3',
    ]);
  });
  it('uses an exponent below 1e-4 and from 1e6, signs as minus signs; no negative zero; a dash when not finite', () => {
    expect([readable(-6.2123e-5), readable(2e-7), readable(1.5e7), readable(-0), readable(NaN)]).toEqual([
      '−6.21e−5',
      '2e−7',
      '1.5e7',
      '0',
      '–',
    ]);
  });
  it('reads a range with "to" between its ends, never a dash beside a sign', () => {
    expect(rangeText(-0.001986, -6.212e-4)).toBe('−0.00199 to −0.000621');
    expect(rangeText(0.5, 1)).toBe('0.5 to 1');
  });
});
