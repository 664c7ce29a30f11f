/**
 * The code reward as the worker sees it: a `CodeGrader` takes a completion and its test cases and
 * answers the companion's `CodeRewardResult` (the reward and one verdict per case). In the
 * browser it is the companion's `POST /v1/reward/code` (worker/companion-client.ts); in the CLI an
 * in-process fleet of the companion's runners. A grader that cannot grade (no companion, an
 * unreachable one, a 5xx, a refused token) throws `GraderUnavailable`: an infrastructure failure,
 * never a reward 0.
 *
 * Not the grading itself (companion/code-reward.ts) nor the environment that asks for it
 * (worker/episodes/code.ts).
 */
import type { CaseResult } from '../rl/types';

/**
 * The wire shapes of `POST /v1/reward/code`, as companion/protocol.ts defines them (`CodeCase`,
 * `CodeRewardResult`); restated here because the worker's project cannot import the companion's.
 */
export interface CodeCase {
  stdin: string;
  stdout: string;
}
export interface CodeRewardResult {
  reward: number;
  program: string | null;
  cases: CaseResult[];
}

export interface CodeGradeRequest {
  completion: string;
  cases: readonly CodeCase[];
  allOrNothing?: boolean;
}

export type CodeGrader = (request: CodeGradeRequest) => Promise<CodeRewardResult>;

/** The grader could not grade: the session is failed (masked from training), not scored 0. */
export class GraderUnavailable extends Error {
  override name = 'GraderUnavailable';
}

/** The longest `input` / `expected` text kept per case; a longer one is cut and says how much is left out. */
export const CASE_IO_CHARS = 2000;

const capped = (text: string) =>
  text.length <= CASE_IO_CHARS
    ? text
    : `${text.slice(0, CASE_IO_CHARS)}… (${text.length - CASE_IO_CHARS} more characters)`;

/**
 * The result with each case's stdin and expected stdout beside what the program wrote (`input`,
 * `expected`, each cut at CASE_IO_CHARS), so a stored session shows what a case asked for. The
 * companion answers verdicts only; the cases are the request's, in the same order. A result whose
 * case count differs from the request's is returned unchanged (not this function's to judge).
 */
export function withCaseIO(result: CodeRewardResult, cases: readonly CodeCase[]): CodeRewardResult {
  if (result.cases.length !== cases.length) return result;
  return {
    ...result,
    cases: result.cases.map((c, i) => ({ ...c, input: capped(cases[i].stdin), expected: capped(cases[i].stdout) })),
  };
}

/**
 * A grader that grades each distinct (completion's text, cases, allOrNothing) once and answers
 * repeats from a bounded cache (least recently used out first). Programs are run without
 * randomness or clocks in the presets' tasks, so a repeat would get the same verdicts; a failed
 * grading is not cached. Every grader of the app and the CLI is one of these, so each answer's
 * cases also carry their input and expected output here (`withCaseIO`).
 */
export function cachedGrader(
  grader: CodeGrader,
  capacity = 4096,
): CodeGrader & { readonly hits: number; readonly misses: number } {
  const cache = new Map<string, Promise<CodeRewardResult>>();
  const stats = { hits: 0, misses: 0 };
  const grade = (request: CodeGradeRequest): Promise<CodeRewardResult> => {
    const key = JSON.stringify([request.completion, request.cases, request.allOrNothing ?? false]);
    const hit = cache.get(key);
    if (hit) {
      stats.hits++;
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    stats.misses++;
    const result = grader(request).then((r) => withCaseIO(r, request.cases));
    cache.set(key, result);
    result.catch(() => cache.delete(key));
    while (cache.size > capacity) cache.delete(cache.keys().next().value!);
    return result;
  };
  return Object.defineProperties(grade, {
    hits: { get: () => stats.hits },
    misses: { get: () => stats.misses },
  }) as CodeGrader & { readonly hits: number; readonly misses: number };
}
