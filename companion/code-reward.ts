/**
 * The code reward (dew CodeReward): the completion's program (codeBlock) runs once per test case
 * on the fleet, with the case's stdin; a case passes when the program COMPLETES and its stdout
 * equals the case's line by line up to trailing whitespace (each line's, and trailing empty
 * lines). No code block, a timeout, a crash, a failure or oversized output score that case zero;
 * the reward is the fraction that pass, or 1 only when all pass with `allOrNothing`. A runner or
 * fleet failure propagates: it is an infrastructure error, never a reward.
 */
import { codeBlock } from './code-block';
import type { SandboxFleet } from './fleet';
import type { CodeCase, CodeCaseResult, CodeRewardResult, SandboxLimits } from './protocol';
import { codeCaseSchema, parseWith } from './protocol';
import { z } from 'zod';

/** Thrown for a ground truth that is not a JSON list of {stdin, stdout}: the request's fault, a 400. */
export class BadGroundTruth extends Error {
  override name = 'BadGroundTruth';
}

/** The cases of a ground truth given as JSON text or as the list itself. */
export function casesOf(groundTruth: string | readonly CodeCase[]): CodeCase[] {
  let value: unknown = groundTruth;
  if (typeof groundTruth === 'string') {
    try {
      value = JSON.parse(groundTruth);
    } catch (e) {
      throw new BadGroundTruth(
        `groundTruth: not JSON (${(e as Error).message}); expected a list of {"stdin", "stdout"}`,
      );
    }
  }
  const parsed = parseWith(z.array(codeCaseSchema).min(1, 'must hold at least one case'), value, 'groundTruth');
  if (!parsed.ok) throw new BadGroundTruth(parsed.problems.join('; '));
  return parsed.value;
}

/** Lines without trailing whitespace, and without trailing empty lines. */
function normalised(text: string): string[] {
  const lines = text.split('\n').map((l) => l.trimEnd());
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function outputMatches(actual: string, expected: string): boolean {
  const [a, e] = [normalised(actual), normalised(expected)];
  return a.length === e.length && a.every((line, i) => line === e[i]);
}

export async function codeReward(
  fleet: SandboxFleet,
  request: {
    completion: string;
    groundTruth: string | readonly CodeCase[];
    allOrNothing?: boolean;
    limits: SandboxLimits;
  },
  signal?: AbortSignal,
): Promise<CodeRewardResult> {
  const cases = casesOf(request.groundTruth);
  const program = codeBlock(request.completion);
  if (program === null) {
    const none: CodeCaseResult = {
      verdict: null,
      passed: false,
      stdout: '',
      stderr: '',
      detail: 'no ```python (or untagged) code block in the completion',
    };
    return { reward: 0, program: null, cases: cases.map(() => ({ ...none })) };
  }
  const outcomes = await fleet.run(
    cases.map((c) => ({ program: { files: { 'main.py': program }, stdin: c.stdin }, limits: request.limits })),
    signal,
  );
  const results = outcomes.map((o, i): CodeCaseResult => {
    const passed = o.verdict === 'COMPLETED' && outputMatches(o.stdout, cases[i].stdout);
    const detail =
      o.verdict !== 'COMPLETED' ? `${o.verdict}: ${o.detail}` : passed ? 'output matches' : 'output differs';
    return { verdict: o.verdict, passed, stdout: o.stdout, stderr: o.stderr, detail };
  });
  const passed = results.filter((r) => r.passed).length;
  const reward = request.allOrNothing ? (passed === results.length ? 1 : 0) : passed / results.length;
  return { reward, program, cases: results };
}
