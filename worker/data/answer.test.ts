import { describe, expect, it } from 'vitest';
import { exactMatch, extractBoxed } from './answer';

describe('extractBoxed', () => {
  it('returns the content of a single box', () => {
    expect(extractBoxed('\\boxed{82}')).toBe('82');
    expect(extractBoxed('so the answer is \\boxed{ -7 }.')).toBe(' -7 ');
    expect(extractBoxed('\\boxed{}')).toBe('');
  });

  it('handles nested braces', () => {
    expect(extractBoxed('\\boxed{\\frac{1}{2}}')).toBe('\\frac{1}{2}');
    expect(extractBoxed('x \\boxed{{a}{b{c}}} y}')).toBe('{a}{b{c}}');
  });

  it('takes the last of several boxes', () => {
    expect(extractBoxed('\\boxed{1} then \\boxed{2} and finally \\boxed{3}')).toBe('3');
    expect(extractBoxed('\\boxed{\\boxed{4}}')).toBe('4');
  });

  it('null when there is no box or the last one is unclosed', () => {
    expect(extractBoxed('82')).toBeNull();
    expect(extractBoxed('boxed{82}')).toBeNull();
    expect(extractBoxed('\\boxed 82')).toBeNull();
    expect(extractBoxed('\\boxed{82')).toBeNull();
    expect(extractBoxed('\\boxed{1} \\boxed{2{}')).toBeNull();
  });
});

describe('exactMatch', () => {
  const task = { answer: '82' };
  it('matches the boxed integer, trimmed', () => {
    expect(exactMatch('\\boxed{82}', task)).toBe(true);
    expect(exactMatch('\\boxed{ 82 }', task)).toBe(true);
    expect(exactMatch('\\boxed{-28}', { answer: '-28' })).toBe(true);
    expect(exactMatch('\\boxed{81} no, \\boxed{82}', task)).toBe(true);
  });

  it('rejects a wrong, missing or non-canonical answer', () => {
    expect(exactMatch('\\boxed{83}', task)).toBe(false);
    expect(exactMatch('82', task)).toBe(false);
    expect(exactMatch('\\boxed{82} \\boxed{83}', task)).toBe(false);
    expect(exactMatch('\\boxed{082}', task)).toBe(false);
    expect(exactMatch('\\boxed{+82}', task)).toBe(false);
    expect(exactMatch('\\boxed{8 2}', task)).toBe(false);
    expect(exactMatch('\\boxed{28}', { answer: '-28' })).toBe(false);
  });
});
