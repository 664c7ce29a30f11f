import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { toolTokenizer } from '../data/tokenizer';
import { CALC, calcTask } from '../episodes/calc';
import { TURN_SEPARATOR } from '../episodes/environment';
import { PRESETS } from '../presets/table';
import type { RunOptions } from '../contract/options';
import { dewpointScore, pythonPattern, rewardPy, twinRewardOf, type TwinReward } from './reward-twin';

/** reward.py (`/usr/bin/python3`, standard library only) on each case, against Dewpoint's score: the check's JSON report. */
function pythonCheck(reward: TwinReward, cases: readonly (readonly [string, string, ('stop' | 'length')?])[]) {
  const dir = mkdtempSync(join(tmpdir(), 'dewpoint-reward-'));
  writeFileSync(join(dir, 'reward.py'), rewardPy(reward));
  const rows = cases.map(([c, t, f]) => ({
    solution_str: c,
    ground_truth: t,
    score: dewpointScore(reward, c, t, f),
    ...(f ? { finish_reason: f } : {}),
  }));
  writeFileSync(join(dir, 'rows.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
  const p = spawnSync('/usr/bin/python3', [join(dir, 'reward.py'), 'check', join(dir, 'rows.jsonl')], {
    encoding: 'utf8',
  });
  expect(p.stderr).toBe('');
  const report = JSON.parse(p.stdout) as { rows: number; equal: number; differ: unknown[] };
  return { ...report, status: p.status, ones: rows.filter((r) => r.score === 1).length };
}

/** Seeded random texts from `pieces` (up to `len` pieces each). */
function fuzz(seed: number, n: number, pieces: readonly string[], len = 8): string[] {
  const rand = mulberry32(seed);
  return Array.from({ length: n }, () =>
    Array.from({ length: Math.floor(rand() * (len + 1)) }, () => pieces[Math.floor(rand() * pieces.length)]).join(''),
  );
}
const pairs = (texts: readonly string[], truths: readonly string[]) =>
  texts.flatMap((t, i) => [[t, truths[i % truths.length]] as [string, string]]);

// JavaScript's whitespace and what Python's str.strip/\s take that JavaScript's do not (\x1c, \x85).
const SPACES = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u2003', '\ufeff', '\x1c', '\x85', '\u3000'];

const MATH_CASES: [string, string][] = [
  ['\\boxed{82}', '82'],
  ['so \\boxed{ 82 } ', '82.0'],
  ['\\boxed{\\boxed{5}}', '5'],
  ['\\boxed{1/2} and \\boxed{0.5', '1/2'],
  ['\\boxed{\\frac{1}{2}}', '0.5'],
  ['\\boxed{\\dfrac12}', '1/2'],
  ['\\boxed{-\\frac{3}{4}}', '-0.75'],
  ['\\boxed{\u22123}', '-3'],
  ['\\boxed{1,000}', '1000'],
  ['\\boxed{1,000}', '1,000'],
  ['\\boxed{1/0}', '1/0'],
  ['\\boxed{}', ''],
  ['\\boxed{\\{x\\}}', '\\{x\\}'],
  ['\\boxed {7}', '7'],
  ['\\boxed\u00a0{7}', '7'],
  ['\\boxed{\u00a07\u2028}', '7'],
  ['\\boxed{\x1c7}', '7'],
  ['\\boxed{.5}', '1/2'],
  ['\\boxed{5.}', '5'],
  [`\\boxed{${'9'.repeat(1001)}}`, '9'.repeat(1001)],
  ['\\boxed{abc}', ' abc '],
  ['no box 82', '82'],
];

describe('reward.py: the standard-library Python twins give Dewpoint’s scores', () => {
  it('math: MathReward’s edge cases and 3000 seeded texts of boxes, numbers, fractions and whitespace', () => {
    const pieces = [
      '\\boxed{82}',
      '\\boxed{1/2}',
      '\\boxed{',
      '\\boxed ',
      '{',
      '}',
      '\\{',
      '\\}',
      '\\',
      '1',
      '82',
      '0',
      '-',
      '\u2212',
      '+',
      '.',
      '/',
    ];
    pieces.push('\\frac{1}{2}', '\\frac12', '\\tfrac', ',', '000', 'x', '=', ...SPACES);
    const truths = ['82', '1/2', '0.5', '-3', '1', 'abc', '', ' 82 ', '1,000', '\\{', '0'];
    const cases = [...MATH_CASES, ...pairs(fuzz(1, 3000, pieces), truths)];
    const r = pythonCheck({ kind: 'math' }, cases);
    expect(r).toMatchObject({ rows: cases.length, equal: cases.length, differ: [], status: 0 });
    expect(r.ones).toBeGreaterThan(50); // the texts reach both scores
  });

  it('exact: JavaScript’s trim (not Python’s strip) on both sides', () => {
    const cases = pairs(fuzz(2, 2000, ['82', 'a', 'b', ...SPACES], 5), ['82', 'a', ' a ', '', 'ab']);
    const r = pythonCheck({ kind: 'exact' }, cases);
    expect(r).toMatchObject({ rows: cases.length, equal: cases.length, status: 0 });
    expect(r.ones).toBeGreaterThan(50);
  });

  it('regex: translated patterns find the same last match and capture', () => {
    const patterns = [
      'answer: (\\d+)',
      '(?<ans>\\w+)$',
      '\\s(\\S+)',
      'a.c',
      '[\\s\\S]*?(\\d)',
      '\\bfoo\\b',
      '(?:x|y)+',
      '[^]b',
      '[]|(a)',
      '\\x41(\\u0042)?',
      '\\cJ(.)',
      '^(\\d*)',
      '\\\\boxed\\{(\\d+)\\}',
      '([a\\-c]+)',
      '\\d*',
      '[^\\S\\n](\\w)',
      '([\\S]+)$',
      '(?:[ab\\S])c',
    ];
    const pieces = ['answer: ', 'foo', ' ', 'a', 'b', 'c', '-', 'x', 'y', 'é', 'AB', '\n', '\r', '\u2028', '\u00a0'];
    pieces.push('\\boxed{', '\\boxed{12}', '}', '12', '3', '_', 'fooé');
    const texts = fuzz(3, 800, pieces);
    for (const js of patterns) {
      const reward = twinRewardOf({
        ...regexRun(),
        dataset: { ...regexRun().dataset, reward: { kind: 'regex', pattern: js } },
      });
      expect(reward.ok, js).toBe(true);
      if (!reward.ok) continue;
      // Half the truths are JavaScript's own capture (score 1 there), so a capture Python finds differently shows.
      const captures = texts.map((t) => [...t.matchAll(new RegExp(js, 'g'))].at(-1)?.at(-1)?.trim() ?? 'none');
      const r = pythonCheck(
        reward.reward,
        pairs(texts, ['12', 'foo', 'x']).map(([t, x], i) => [t, i % 2 ? x : captures[i]]),
      );
      expect(r, js).toMatchObject({ rows: texts.length, equal: texts.length, status: 0 });
      expect(r.ones, js).toBeGreaterThan(0);
    }
  });

  it('calc: the environment’s own reward of 1500 seeded episodes, its step’s anchored box and its verify', async () => {
    // Episodes as worker/episodes/rollout.ts plays them: each action's text, with the observation
    // the real environment answers when the action ended with EOS; an action cut at the length limit
    // ends the episode (truncated), as does the last turn; reward: step's, else verify's.
    const tok = toolTokenizer();
    const pieces = [
      'calc(47+35)',
      'calc(82+19)',
      '\\boxed{101}',
      '\\boxed{101}}',
      '\\boxed{1}}',
      '\\boxed{',
      '101',
      '}',
      '{',
      '?',
    ];
    const rand = mulberry32(5);
    const pick = () => pieces[Math.floor(rand() * pieces.length)];
    const cases: [string, string, 'stop' | 'length'][] = [];
    const rewards: number[] = [];
    for (let n = 0; n < 1500; n++) {
      const task = n % 3 ? calcTask(47, 35, 19) : calcTask(10, 10, 10); // answers 101, 30
      const env = CALC.create(task);
      env.reset();
      const turns: string[] = [];
      let reward: number | null = null;
      let finish: 'stop' | 'length' = 'stop';
      for (let t = 0; t < CALC.maxTurns && reward === null; t++) {
        const text = rand() < 0.5 ? pick() : pick() + pick();
        if (rand() < 0.15) {
          finish = 'length';
          turns.push(text);
          break;
        }
        finish = 'stop';
        const step = await env.step({ ids: tok.encode(text), text, terminated: true });
        turns.push(text + tok.decode(step.observation));
        if (step.status === 'done') reward = step.reward!;
      }
      reward ??= CALC.verify(task, turns.join('\n'));
      cases.push([turns.join(TURN_SEPARATOR), task.answer, finish]);
      rewards.push(reward);
    }
    expect(cases.map(([c, t, f]) => dewpointScore({ kind: 'calc' }, c, t, f))).toEqual(rewards);
    const r = pythonCheck({ kind: 'calc' }, cases);
    expect(r).toMatchObject({ rows: cases.length, equal: cases.length, status: 0 });
    expect(r.ones).toBeGreaterThan(100);
    // The edge: `\\boxed{31}}` ended by EOS is the environment's to score (it boxes `31}`: 0); cut at
    // the length limit, verify's (the last box of the text is `31`: 1). reward.py gives both.
    const task = calcTask(10, 10, 11);
    const edge = '\\boxed{31}}';
    expect(task.answer).toBe('31');
    const env = CALC.create(task);
    env.reset();
    expect(await env.step({ ids: tok.encode(edge), text: edge, terminated: true })).toMatchObject({
      status: 'done',
      reward: 0,
    });
    expect(CALC.verify(task, edge)).toBe(1);
    expect([
      dewpointScore({ kind: 'calc' }, edge, '31', 'stop'),
      dewpointScore({ kind: 'calc' }, edge, '31', 'length'),
    ]).toEqual([0, 1]);
    expect(
      pythonCheck({ kind: 'calc' }, [
        [edge, '31', 'stop'],
        [edge, '31', 'length'],
      ]),
    ).toMatchObject({ rows: 2, equal: 2, ones: 1 });
    // verl's call: compute_score reads the finish reason from extra_info, "stop" without one.
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-reward-'));
    writeFileSync(join(dir, 'reward.py'), rewardPy({ kind: 'calc' }));
    const call = (extra: string) => `reward.compute_score("calc", ${JSON.stringify(edge)}, "31", ${extra})`;
    const p = spawnSync(
      '/usr/bin/python3',
      ['-c', `import reward; print(${call('{"finish_reason": "length"}')}, ${call('None')}, ${call('{}')})`],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(p.stderr).toBe('');
    expect(p.stdout).toBe('1.0 0.0 0.0\n');
  });

  it('the check reports a difference and exits 1 (a wrong Dewpoint score is caught)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dewpoint-reward-'));
    writeFileSync(join(dir, 'reward.py'), rewardPy({ kind: 'math' }));
    writeFileSync(
      join(dir, 'rows.jsonl'),
      `${JSON.stringify({ solution_str: '\\boxed{82}', ground_truth: '82', score: 0 })}\n`,
    );
    const p = spawnSync('/usr/bin/python3', [join(dir, 'reward.py'), 'check', join(dir, 'rows.jsonl')], {
      encoding: 'utf8',
    });
    expect(p.status).toBe(1);
    expect(JSON.parse(p.stdout)).toMatchObject({ rows: 1, equal: 0, differ: [{ line: 1, python: 1, dewpoint: 0 }] });
  });
});

/** A grpo-arith run on a regex-scored dataset (the table's defaults, one record). */
function regexRun(): RunOptions & { dataset: NonNullable<Extract<RunOptions, { dataset?: unknown }>['dataset']> } {
  const defaults = PRESETS.find((p) => p.name === 'grpo-arith')!.defaults as RunOptions;
  const dataset = {
    name: 'd.jsonl',
    records: [{ prompt: 'p', answer: 'a' }],
    heldOut: 0,
    reward: { kind: 'regex' as const, pattern: '(a)' },
  };
  return { ...defaults, dataset } as never;
}

describe('which twin a run takes, and what is refused', () => {
  const preset = (name: string) => PRESETS.find((p) => p.name === name)!.defaults as RunOptions;

  it('math for the arithmetic presets, calc for grpo-calc; refused for code and other environments, naming why', () => {
    expect(twinRewardOf(preset('grpo-arith'))).toEqual({ ok: true, reward: { kind: 'math' } });
    expect(twinRewardOf(preset('dpo-arith'))).toEqual({ ok: true, reward: { kind: 'math' } });
    expect(twinRewardOf(preset('grpo-calc'))).toEqual({ ok: true, reward: { kind: 'calc' } });
    expect(twinRewardOf(preset('grpo-code'))).toMatchObject({ ok: false, reason: expect.stringContaining('sandbox') });
    expect(twinRewardOf(preset('grpo-guess'))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("reward is its environment's (guess)"),
    });
  });

  it.each([
    ['(?<=a)b', 'a lookbehind'],
    ['(a)\\1', 'the backreference \\1'],
    ['\\a(b)', 'the escape \\a'],
    ['x{,3}', '{,'],
    ['[\\B]', '\\B inside a class'],
    ['(?<a$>x)', 'a group name'],
  ])('a pattern Python reads differently is refused, naming the field and the construct: %s', (js, what) => {
    const r = pythonPattern(js);
    expect(r).toMatchObject({ ok: false, reason: expect.stringContaining(`dataset.reward.pattern uses ${what}`) });
  });

  it('translates what differs: \\s, ., $, named groups', () => {
    expect(pythonPattern('(?<n>.)\\s$')).toEqual({
      ok: true,
      pattern:
        '(?a)(?P<n>[^\\n\\r\\u2028\\u2029])[\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]\\Z',
    });
  });
});
