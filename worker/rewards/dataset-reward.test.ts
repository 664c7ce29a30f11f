import { describe, expect, it } from 'vitest';
import type { CodeGrader, CodeRewardResult } from './code-grader';
import { GraderUnavailable } from './code-grader';
import {
  NO_GRADER,
  codeRewardOf,
  compileRewardPattern,
  datasetPromptReward,
  exactReward,
  mathDatasetReward,
  parseCases,
  regexReward,
  syncDatasetReward,
  type RewardPattern,
} from './dataset-reward';

function pattern(p: string): RewardPattern {
  const r = compileRewardPattern(p);
  if (!r.ok) throw new Error(r.reason);
  return r.pattern;
}

describe('math', () => {
  it('is MathReward on the last box, with its components', () => {
    expect(mathDatasetReward('\\boxed{3} no, \\boxed{19}', '19')).toEqual({
      score: 1,
      components: { boxed: 1, parsed: 1, correct: 1 },
      detail: 'answer 19 = reference 19',
    });
    expect(mathDatasetReward('19', '19')).toMatchObject({ score: 0, components: { boxed: 0, parsed: 0, correct: 0 } });
  });
});

describe('exact', () => {
  it('compares the trimmed completion with the trimmed ground truth, nothing else', () => {
    expect(exactReward('  19\n', '19 ')).toEqual({
      score: 1,
      components: { correct: 1 },
      detail: 'completion "19" equals ground truth "19"',
    });
    expect(exactReward('\\boxed{19}', '19')).toMatchObject({ score: 0, components: { correct: 0 } });
    expect(exactReward('019', '19').score).toBe(0);
    expect(exactReward('Paris', 'paris').score).toBe(0);
  });
});

describe('regex', () => {
  it('with one capture group: the group of the last match', () => {
    const p = pattern('\\\\boxed\\{(\\d+)\\}');
    expect(p.groups).toBe(1);
    expect(regexReward('\\boxed{3} so \\boxed{19}', '19', p)).toEqual({
      score: 1,
      components: { matched: 1, correct: 1 },
      detail: 'match "19" equals ground truth "19"',
    });
    expect(regexReward('\\boxed{19} so \\boxed{3}', '19', p)).toMatchObject({
      score: 0,
      components: { matched: 1, correct: 0 },
    });
  });

  it('without a group: the whole last match; a named group counts as the group', () => {
    expect(regexReward('12 then 19', '19', pattern('\\d+'))).toMatchObject({ score: 1 });
    expect(regexReward('answer: 19', '19', pattern('answer: (?<a>\\d+)'))).toMatchObject({ score: 1 });
    expect(regexReward('#### 42 ', '42', pattern('#### ?(-?\\d+)'))).toMatchObject({ score: 1 });
  });

  it('no match is 0 with matched 0; an optional group that took no part compares as empty', () => {
    expect(regexReward('nothing', '19', pattern('(\\d+)'))).toEqual({
      score: 0,
      components: { matched: 0, correct: 0 },
      detail: 'no match of /(\\d+)/',
    });
    expect(regexReward('x', '19', pattern('x(\\d+)?'))).toMatchObject({ score: 0, components: { matched: 1 } });
  });

  it('repeated calls do not carry lastIndex state', () => {
    const p = pattern('(\\d+)');
    expect([1, 2, 3].map(() => regexReward('7', '7', p).score)).toEqual([1, 1, 1]);
  });

  it('refuses a pattern that does not compile, or with more than one capture group', () => {
    expect(compileRewardPattern('(\\d+')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^is not a JavaScript regular expression \(.*\)$/),
    });
    expect(compileRewardPattern('(\\d+)-(\\d+)')).toEqual({
      ok: false,
      reason: 'has 2 capture groups; expected one (the answer) or none (the whole match), e.g. (?:...) for the others',
    });
    expect(compileRewardPattern('(?:\\d+)-(\\d+)')).toMatchObject({ ok: true, pattern: { groups: 1 } });
    expect(() => syncDatasetReward({ kind: 'regex', pattern: '[' })).toThrow(
      /^dataset\.reward\.pattern is not a JavaScript regular expression/,
    );
  });
});

describe('code: test cases and the grader', () => {
  it('parses {stdin, stdout} and {input, output} lists and the {inputs, outputs} form', () => {
    const cases = [{ stdin: '1\n', stdout: '2\n' }];
    expect(parseCases(JSON.stringify(cases))).toEqual({ ok: true, cases });
    expect(parseCases(JSON.stringify([{ input: '1\n', output: '2\n' }]))).toEqual({ ok: true, cases });
    expect(parseCases(JSON.stringify({ inputs: ['1\n'], outputs: ['2\n'] }))).toEqual({ ok: true, cases });
  });

  it('refuses what is not test cases, saying what it is', () => {
    const got = (t: string) => (parseCases(t) as { got: string }).got;
    expect(got('19')).toBe('is "19"');
    expect(got('not json')).toBe('is "not json", not JSON');
    expect(got('[]')).toBe('is an empty list');
    expect(got('[{"stdin": 1, "stdout": "2"}]')).toBe('has case 1 without string stdin and stdout');
    expect(got('{"inputs": ["1"], "outputs": []}')).toBe('is an object without inputs and outputs lists of one length');
    expect(got('{"inputs": ["1"], "outputs": ["2"], "fn_name": "f"}')).toMatch(/^has fn_name/);
  });

  const result = (passed: boolean[], program: string | null = 'print(2)'): CodeRewardResult => ({
    reward: passed.filter(Boolean).length / passed.length,
    program,
    cases: passed.map((p) => ({
      verdict: program ? 'ok' : null,
      passed: p,
      stdout: p ? '2\n' : '3\n',
      stderr: '',
      detail: '',
    })),
  });

  it("takes the companion's reward, with program, passed and correct components and the cases", () => {
    expect(codeRewardOf(result([true, false]))).toMatchObject({
      score: 0.5,
      components: { program: 1, passed: 0.5, correct: 0 },
      detail: '1 of 2 cases pass',
    });
    expect(codeRewardOf(result([true, true]))).toMatchObject({ score: 1, components: { correct: 1 } });
    expect(codeRewardOf(result([false], null))).toMatchObject({
      score: 0,
      components: { program: 0 },
      detail: 'no code block',
    });
    expect(codeRewardOf(result([true])).cases).toHaveLength(1);
  });

  it('datasetPromptReward grades the ground truth cases; no grader or an unavailable one is an infrastructure failure, never a 0', async () => {
    const truth = { answer: JSON.stringify([{ stdin: '1\n', stdout: '2\n' }]) };
    const seen: unknown[] = [];
    const grader: CodeGrader = async (r) => (seen.push(r), result([true]));
    expect(await datasetPromptReward({ kind: 'code' }, grader)('```\nprint(2)\n```', truth)).toMatchObject({
      score: 1,
      components: { correct: 1 },
    });
    expect(seen).toEqual([{ completion: '```\nprint(2)\n```', cases: [{ stdin: '1\n', stdout: '2\n' }] }]);
    expect(await datasetPromptReward({ kind: 'code' }, null)('x', truth)).toEqual({
      score: 0,
      components: {},
      detail: NO_GRADER,
      failure: 'sandbox_error',
    });
    const down: CodeGrader = async () => {
      throw new GraderUnavailable('the companion answered 503');
    };
    expect(await datasetPromptReward({ kind: 'code' }, down)('x', truth)).toEqual({
      score: 0,
      components: {},
      detail: 'the companion answered 503',
      failure: 'sandbox_error',
    });
    const broken: CodeGrader = async () => {
      throw new TypeError('a bug');
    };
    await expect(datasetPromptReward({ kind: 'code' }, broken)('x', truth)).rejects.toThrow('a bug');
  });

  it('datasetPromptReward of math, exact and regex is synchronous and reads the task answer', () => {
    expect(datasetPromptReward({ kind: 'exact' }, null)('19', { answer: '19' })).toMatchObject({ score: 1 });
    expect(datasetPromptReward({ kind: 'regex', pattern: '=(\\d+)' }, null)('=19', { answer: '19' })).toMatchObject({
      score: 1,
    });
    expect(datasetPromptReward({ kind: 'math' }, null)('\\boxed{19}', { answer: '19' })).toMatchObject({ score: 1 });
    expect(() => syncDatasetReward({ kind: 'code' })).toThrow(/grades in the companion/);
  });
});
