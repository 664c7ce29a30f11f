import { describe, expect, it } from 'vitest';
import { BadGroundTruth, casesOf, codeReward, outputMatches } from './code-reward';
import { SandboxFleet } from './fleet';
import { ProcessRunner } from './process-runner';
import { sandboxLimitsSchema } from './protocol';

const inner = new ProcessRunner();
let runs = 0;
const fleet = new SandboxFleet({ name: 'process', run: (p, l, s) => (runs++, inner.run(p, l, s)) }, 2, 16);
const limits = sandboxLimitsSchema.parse({ wallSeconds: 5, cpuSeconds: 2 });
const block = (code: string) => `Let me think.\n\`\`\`python\n${code}\n\`\`\`\n`;
const DOUBLE = [
  { stdin: '2\n', stdout: '4\n' },
  { stdin: '-3\n', stdout: '-6' },
  { stdin: '10\n', stdout: '20\n\n' },
];

describe('the code reward (real processes)', () => {
  it('scores the fraction of cases whose stdout matches, tolerating trailing whitespace only', async () => {
    const all = await codeReward(fleet, {
      completion: block('print(int(input()) * 2, " ")'),
      groundTruth: JSON.stringify(DOUBLE),
      limits,
    });
    expect(all.reward).toBe(1);
    expect(all.cases.every((c) => c.verdict === 'COMPLETED' && c.passed)).toBe(true);
    const some = await codeReward(fleet, {
      completion: block('x = int(input())\nprint(x * 2 if x > 0 else x)'),
      groundTruth: DOUBLE,
      limits,
    });
    expect(some.reward).toBeCloseTo(2 / 3, 12);
    expect(some.cases.map((c) => c.passed)).toEqual([true, false, true]);
    expect(some.cases[1]).toMatchObject({ verdict: 'COMPLETED', stdout: '-3\n', detail: 'output differs' });
    const orNothing = await codeReward(fleet, {
      completion: block('x = int(input())\nprint(x * 2 if x > 0 else x)'),
      groundTruth: DOUBLE,
      allOrNothing: true,
      limits,
    });
    expect(orNothing.reward).toBe(0);
  });

  it('scores zero for a case that times out, crashes or fails, with the verdict on the case', async () => {
    const r = await codeReward(fleet, {
      completion: block(
        'import os, signal, time\nx = int(input())\nif x == 2: print(4)\nelif x == -3: time.sleep(60)\nelse: os.kill(os.getpid(), signal.SIGSEGV)',
      ),
      groundTruth: DOUBLE,
      limits: { ...limits, wallSeconds: 1 },
    });
    expect(r.reward).toBeCloseTo(1 / 3, 12);
    expect(r.cases.map((c) => c.verdict)).toEqual(['COMPLETED', 'TIMEOUT', 'CRASHED']);
    expect(r.cases[1].detail).toMatch(/^TIMEOUT: killed by the runner at the 1 s wall deadline/);
  });

  it('a completion without a code block scores zero and runs nothing', async () => {
    const before = runs;
    const r = await codeReward(fleet, { completion: 'print(4)  (no fence)', groundTruth: DOUBLE, limits });
    expect(r).toMatchObject({ reward: 0, program: null });
    expect(r.cases.map((c) => c.verdict)).toEqual([null, null, null]);
    expect(runs).toBe(before);
  });

  it('refuses a ground truth that is not a list of {stdin, stdout}, naming the field', () => {
    expect(() => casesOf('not json')).toThrow(BadGroundTruth);
    expect(() => casesOf('[]')).toThrow(/groundTruth: must hold at least one case/);
    expect(() => casesOf('[{"stdin": "1"}]')).toThrow(/groundTruth\[0\]\.stdout/);
    expect(() => casesOf('[{"stdin": "1", "stdout": "2", "x": 1}]')).toThrow(/groundTruth\[0\]\.x: unknown field/);
  });

  it('compares line by line up to trailing whitespace, not leading whitespace or inner lines', () => {
    expect(outputMatches('a \nb\t\n\n', 'a\nb')).toBe(true);
    expect(outputMatches(' a', 'a')).toBe(false);
    expect(outputMatches('a\n\nb', 'a\nb')).toBe(false);
    expect(outputMatches('', '\n')).toBe(true);
  });
});
