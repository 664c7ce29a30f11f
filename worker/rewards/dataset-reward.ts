/**
 * The rewards a person's dataset is scored with (worker/contract/options.ts `DatasetRewardOptions`), each
 * a pure function of the completion (EOS excluded) and the record's ground truth, giving the
 * reward, named components and a detail line as MathReward does:
 *
 * - `math`: MathReward (math-reward.ts) on the last `\boxed{}`; components boxed, parsed, correct.
 * - `exact`: 1 when the completion, trimmed, equals the ground truth, trimmed; component correct.
 * - `regex`: the last match of the person's pattern in the completion; its one capture group, or
 *   the whole match when the pattern has none, trimmed, must equal the trimmed ground truth (the
 *   last match, as MathReward takes the last box). A pattern with two or more groups, or one
 *   JavaScript cannot compile, is refused (`compileRewardPattern`). Components matched, correct.
 * - `code`: the companion's code reward (code-grader.ts) on the ground truth's test cases
 *   (`parseCases`); the reward is the companion's, the fraction of cases that pass, as grpo-code's;
 *   components program (a code block was found), passed (that fraction), correct (all pass).
 *
 * Only `code` does I/O (the grader); `datasetPromptReward` wraps the four for a PromptSource, and
 * turns a grader that cannot grade into an infrastructure failure (masked), never a reward 0.
 */
import type { DatasetRewardOptions } from '../contract/options';
import type { CaseResult } from '../contract/records';
import type { InfrastructureFailure } from '../rl/types';
import type { CodeCase, CodeGrader, CodeRewardResult } from './code-grader';
import { GraderUnavailable } from './code-grader';
import { mathReward } from './math-reward';

interface DatasetRewardResult {
  /** The reward: 0 or 1, or for `code` the fraction of cases passed. */
  score: number;
  components: Record<string, number>;
  detail: string;
  /** `code`: the grader's verdict per case. */
  cases?: CaseResult[];
}

const quote = (text: string) => JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);

/** MathReward of the completion against the ground truth. */
export function mathDatasetReward(completion: string, truth: string): DatasetRewardResult {
  const r = mathReward(completion, truth);
  return { score: r.score, components: { ...r.components }, detail: r.detail };
}

/** 1 when the trimmed completion is exactly the trimmed ground truth. */
export function exactReward(completion: string, truth: string): DatasetRewardResult {
  const got = completion.trim();
  const want = truth.trim();
  const correct = got === want ? 1 : 0;
  return {
    score: correct,
    components: { correct },
    detail: `completion ${quote(got)} ${correct ? 'equals' : 'differs from'} ground truth ${quote(want)}`,
  };
}

/** A compiled reward pattern and how many capture groups it has (0 or 1). */
export interface RewardPattern {
  regex: RegExp;
  groups: 0 | 1;
}

/**
 * The person's pattern compiled (global, to find the last match), or why not: JavaScript syntax
 * (`new RegExp`), and at most one capture group (named groups count).
 */
export function compileRewardPattern(
  pattern: string,
): { ok: true; pattern: RewardPattern } | { ok: false; reason: string } {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'g');
  } catch (e) {
    return { ok: false, reason: `is not a JavaScript regular expression (${(e as Error).message})` };
  }
  // An alternative that matches the empty string at once: exec's result has one slot per group.
  const groups = new RegExp(`${pattern}|`).exec('')!.length - 1;
  if (groups > 1)
    return {
      ok: false,
      reason: `has ${groups} capture groups; expected one (the answer) or none (the whole match), e.g. (?:...) for the others`,
    };
  return { ok: true, pattern: { regex, groups: groups as 0 | 1 } };
}

/** The last match's capture (or whole match), trimmed, against the trimmed ground truth. */
export function regexReward(completion: string, truth: string, pattern: RewardPattern): DatasetRewardResult {
  let last: RegExpMatchArray | null = null;
  for (const m of completion.matchAll(pattern.regex)) last = m; // matchAll clones the regex: no lastIndex state
  const want = truth.trim();
  if (!last)
    return { score: 0, components: { matched: 0, correct: 0 }, detail: `no match of /${pattern.regex.source}/` };
  const got = (pattern.groups === 1 ? (last[1] ?? '') : last[0]).trim();
  const correct = got === want ? 1 : 0;
  return {
    score: correct,
    components: { matched: 1, correct },
    detail: `match ${quote(got)} ${correct ? 'equals' : 'differs from'} ground truth ${quote(want)}`,
  };
}

const CASES_EXPECTED =
  'test cases: a JSON list of {stdin, stdout} (or {input, output}) strings, or {inputs: [...], outputs: [...]}';

/**
 * The test cases of a `code` ground truth (JSON text): a list of `{stdin, stdout}` or
 * `{input, output}` (strings), or the APPS/TACO `{inputs, outputs}` lists of one length. Call-based
 * cases (`fn_name`) are refused: the companion compares a program's stdout. Pure; never throws.
 */
export function parseCases(
  truth: string,
): { ok: true; cases: CodeCase[] } | { ok: false; expected: string; got: string } {
  const bad = (got: string) => ({ ok: false as const, expected: CASES_EXPECTED, got });
  let v: unknown;
  try {
    v = JSON.parse(truth);
  } catch {
    return bad(`is ${quote(truth)}, not JSON`);
  }
  let pairs: [unknown, unknown][];
  if (Array.isArray(v)) {
    pairs = v.map((c: unknown) => {
      const o = (c ?? {}) as Record<string, unknown>;
      return [o.stdin ?? o.input, o.stdout ?? o.output];
    });
  } else if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o.fn_name !== undefined)
      return bad('has fn_name (call-based cases; the companion runs programs on stdin and compares stdout)');
    if (!Array.isArray(o.inputs) || !Array.isArray(o.outputs) || o.inputs.length !== o.outputs.length)
      return bad('is an object without inputs and outputs lists of one length');
    const outputs = o.outputs as unknown[];
    pairs = (o.inputs as unknown[]).map((x, i) => [x, outputs[i]]);
  } else return bad(`is ${quote(truth)}`);
  if (pairs.length === 0) return bad('is an empty list');
  const i = pairs.findIndex(([a, b]) => typeof a !== 'string' || typeof b !== 'string');
  if (i >= 0) return bad(`has case ${i + 1} without string stdin and stdout`);
  return { ok: true, cases: pairs.map(([stdin, stdout]) => ({ stdin: stdin as string, stdout: stdout as string })) };
}

/** The code reward of a grader's answer. */
export function codeRewardOf(r: CodeRewardResult): DatasetRewardResult {
  const passed = r.cases.filter((c) => c.passed).length;
  const frac = r.cases.length ? passed / r.cases.length : 0;
  return {
    score: r.reward,
    components: {
      program: r.program === null ? 0 : 1,
      passed: frac,
      correct: r.cases.length > 0 && passed === r.cases.length ? 1 : 0,
    },
    detail: r.program === null ? 'no code block' : `${passed} of ${r.cases.length} cases pass`,
    cases: r.cases.map((c) => ({ ...c })),
  };
}

/** A synchronous reward (math, exact, regex) for `spec`; throws naming the field for a bad pattern, and for `code` (it needs a grader). */
export function syncDatasetReward(
  spec: DatasetRewardOptions,
): (completion: string, truth: string) => DatasetRewardResult {
  if (spec.kind === 'math') return mathDatasetReward;
  if (spec.kind === 'exact') return exactReward;
  if (spec.kind === 'regex') {
    if (spec.pattern === undefined)
      throw new Error('dataset.reward.pattern is missing: a regex reward needs a pattern');
    const p = compileRewardPattern(spec.pattern);
    if (!p.ok) throw new Error(`dataset.reward.pattern ${p.reason}`);
    return (completion, truth) => regexReward(completion, truth, p.pattern);
  }
  throw new Error(`dataset.reward.kind 'code' grades in the companion: use datasetPromptReward with a grader`);
}

/** What a PromptSource reward returns, with an infrastructure failure when the grader could not grade. */
interface DatasetPromptResult extends DatasetRewardResult {
  failure?: InfrastructureFailure;
}

/** Why a code reward failed when no grader is connected: what the person must do. */
export const NO_GRADER =
  'code rewards run in the companion: start one with `npx dewpoint companion` and open the link it prints (or paste it in System)';

/**
 * The reward of `spec` for a PromptSource: synchronous for math, exact and regex; for `code`, the
 * grader on the task's cases, a missing or unavailable grader giving `failure: 'sandbox_error'`
 * (the session is masked, as grpo-code's episodes are).
 */
export function datasetPromptReward(
  spec: DatasetRewardOptions,
  grader: CodeGrader | null,
): (completion: string, task: { readonly answer: string }) => DatasetPromptResult | Promise<DatasetPromptResult> {
  if (spec.kind !== 'code') {
    const reward = syncDatasetReward(spec);
    return (completion, task) => reward(completion, task.answer);
  }
  const failed = (detail: string): DatasetPromptResult => ({
    score: 0,
    components: {},
    detail,
    failure: 'sandbox_error',
  });
  return async (completion, task) => {
    const cases = parseCases(task.answer);
    if (!cases.ok) throw new Error(`code reward: the ground truth ${cases.got}; expected ${cases.expected}`);
    if (!grader) return failed(NO_GRADER);
    try {
      return codeRewardOf(await grader({ completion, cases: cases.cases }));
    } catch (e) {
      if (e instanceof GraderUnavailable) return failed(e.message);
      throw e;
    }
  };
}
