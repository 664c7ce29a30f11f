import { describe, expect, it } from 'vitest';
import { CASE_IO_CHARS, cachedGrader, withCaseIO, type CodeRewardResult } from './code-grader';

const verdict = (stdout: string, passed: boolean) => ({
  verdict: 'COMPLETED',
  passed,
  stdout,
  stderr: '',
  detail: passed ? 'output matches' : 'output differs',
});

describe('withCaseIO', () => {
  it("puts each case's stdin and expected stdout beside what the program wrote, in the request's order", () => {
    const result: CodeRewardResult = {
      reward: 0.5,
      program: 'p',
      cases: [verdict('4\n', true), verdict('7\n', false)],
    };
    const io = withCaseIO(result, [
      { stdin: '2\n', stdout: '4\n' },
      { stdin: '3\n', stdout: '9\n' },
    ]);
    expect(io.cases.map((c) => [c.input, c.expected, c.stdout, c.passed])).toEqual([
      ['2\n', '4\n', '4\n', true],
      ['3\n', '9\n', '7\n', false],
    ]);
    expect(result.cases[0].input).toBeUndefined();
  });

  it('cuts a long input and says how much is left out; leaves a result of another case count as it is', () => {
    const long = 'x'.repeat(CASE_IO_CHARS + 5);
    const io = withCaseIO({ reward: 0, program: null, cases: [verdict('', false)] }, [{ stdin: long, stdout: '' }]);
    expect(io.cases[0].input).toBe(`${'x'.repeat(CASE_IO_CHARS)}… (5 more characters)`);
    expect(io.cases[0].expected).toBe('');
    const odd: CodeRewardResult = { reward: 0, program: null, cases: [] };
    expect(withCaseIO(odd, [{ stdin: '1', stdout: '1' }])).toBe(odd);
  });

  it('every answer of a cached grader carries the cases it was graded on', async () => {
    const g = cachedGrader(async (r) => ({ reward: 1, program: 'p', cases: r.cases.map(() => verdict('1\n', true)) }));
    const r = await g({ completion: 'a', cases: [{ stdin: '0\n', stdout: '1\n' }] });
    expect(r.cases[0]).toMatchObject({ input: '0\n', expected: '1\n', stdout: '1\n' });
  });
});
