import { afterAll, describe, expect, it } from 'vitest';
import { codeTokenizer } from '../worker/data/tokenizer';
import { codeHeldOut, codeKind, codeSolution, codeTask } from '../worker/episodes/code';
import { demonstrationExample } from '../worker/train/sft-episodes';
import { localCodeGrader } from './code-grader';

// Real python3 processes through the companion's runner and fleet, in this process.
describe('localCodeGrader', () => {
  const local = localCodeGrader(2);
  afterAll(() => local.close());

  it('the expert program of held-out tasks passes every case; a wrong one fails the cases it gets wrong', async () => {
    for (const t of codeHeldOut(4)) {
      const r = await local.grader({
        completion: codeSolution((t.data as { steps: never[] }).steps),
        cases: (t.data as { cases: never[] }).cases,
      });
      expect(r.reward, t.id).toBe(1);
      expect(r.cases.map((c) => c.verdict)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    }
    const t = codeTask([
      { op: 'add', n: 3 },
      { op: 'mul', n: 5 },
    ]);
    const cases = (t.data as { cases: { stdin: string; stdout: string }[] }).cases;
    // x+3*5 is not (x+3)*5: right only where 3·5 + x = 5·(x + 3), i.e. never; prints 12, 17, 26.
    const wrong = await local.grader({ completion: '```\nx=int(input())\nprint(x+3*5)\n```', cases });
    expect(wrong.reward).toBe(0);
    expect(wrong.cases.map((c) => [c.verdict, c.passed, c.stdout])).toEqual([
      ['COMPLETED', false, '12\n'],
      ['COMPLETED', false, '17\n'],
      ['COMPLETED', false, '26\n'],
    ]);
    const crash = await local.grader({ completion: '```\nprint(1/0)\n```', cases });
    expect(crash.cases.every((c) => c.verdict === 'FAILED' && /ZeroDivisionError/.test(c.stderr))).toBe(true);
    const none = await local.grader({ completion: 'print(1)', cases });
    expect(none).toMatchObject({ reward: 0, program: null });
    expect(local.grader.hits).toBe(0);
    await local.grader({ completion: 'print(1)', cases });
    expect(local.grader.hits).toBe(1);
  });

  it('a demonstration episode of the code kind is graded in the sandbox and trains on the action only', async () => {
    const tok = codeTokenizer();
    const t = codeTask([{ op: 'sub', n: 2 }, { op: 'sq' }]);
    const ex = await demonstrationExample(codeKind(local.grader), tok, t);
    const prompt = 1 + t.prompt.length;
    expect(tok.decode(ex.ids.subarray(prompt))).toBe(codeSolution([{ op: 'sub', n: 2 }, { op: 'sq' }]));
    expect(Array.from(ex.lossMask.subarray(0, prompt)).every((m) => m === 0)).toBe(true);
    expect(Array.from(ex.lossMask.subarray(prompt)).every((m) => m === 1)).toBe(true);
  });
});
