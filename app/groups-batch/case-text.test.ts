import { describe, expect, it } from 'vitest';
import type { CaseResult } from '../../worker/protocol';
import { caseChipText, caseDescription, caseIoText, caseResultWord, oneLine } from './case-text';

const c = (over: Partial<CaseResult>): CaseResult => ({
  verdict: 'COMPLETED',
  passed: false,
  stdout: '24\n',
  stderr: '',
  detail: 'output differs',
  input: '2\n',
  expected: '25\n',
  ...over,
});

describe('a code case in words', () => {
  it('a failed case reads as the failure it was, never as its raw verdict', () => {
    expect(caseChipText(c({ passed: true, stdout: '25\n' }), 0)).toBe('case 1: passed');
    expect(caseChipText(c({}), 0)).toBe('case 1: wrong output');
    expect(caseChipText(c({ verdict: 'TIMEOUT' }), 1)).toBe('case 2: timed out');
    expect(caseChipText(c({ verdict: 'CRASHED' }), 2)).toBe('case 3: crashed');
    expect(caseChipText(c({ verdict: 'FAILED' }), 2)).toBe('case 3: error');
    expect(caseResultWord(c({ verdict: 'OUTPUT_LIMIT' }))).toBe('too much output');
    expect(caseResultWord(c({ verdict: null, stdout: '' }))).toBe('not run');
    expect(caseResultWord(c({ verdict: 'NEW_KIND' }))).toBe('new kind');
    for (const verdict of ['COMPLETED', 'FAILED', 'TIMEOUT', 'CRASHED', 'OUTPUT_LIMIT', null])
      expect(caseResultWord(c({ verdict }))).not.toMatch(/COMPLETED|passed/);
  });

  it('shows input → output beside the expected output, on one short line', () => {
    expect(caseIoText(c({ passed: true, stdout: '25\n' }))).toBe('2 → 25');
    expect(caseIoText(c({}))).toBe('2 → 24, expected 25');
    expect(caseIoText(c({ verdict: 'TIMEOUT', stdout: '' }))).toBe('2 → expected 25');
    expect(caseIoText(c({ input: 'a\nb\n', stdout: '', expected: '' }))).toBe('a ⏎ b → (empty), expected (empty)');
  });

  it('a case stored before input and expected were kept shows only what the program printed', () => {
    const old = c({ input: undefined, expected: undefined });
    expect(caseIoText(old)).toBe('→ 24');
    expect(caseIoText({ ...old, passed: true })).toBeNull();
    expect(caseIoText({ ...old, verdict: 'TIMEOUT' })).toBeNull();
    expect(caseDescription(old, 0)).toBe(
      'case 1: wrong output: output differs; input not recorded; expected output not recorded; program wrote "24\\n"',
    );
  });

  it('cuts a long text at max characters, with an ellipsis', () => {
    expect(oneLine('123456789', 5)).toBe('1234…');
    expect(oneLine('12345', 5)).toBe('12345');
    expect(oneLine('', 5)).toBe('(empty)');
    expect(Array.from(oneLine('😀'.repeat(10), 4))).toHaveLength(4);
  });
});
