/**
 * A code case (grpo-code, a dataset's code reward) in words, for CodeCases.tsx: what became of it
 * ("passed", "wrong output", "timed out", "crashed", "error", "too much output", "not run"), and
 * its input, expected output and the program's output as short one-line texts and as a full
 * description. The verdicts are the companion's (companion/protocol.ts `VERDICTS`). Cases of runs
 * stored before `input` / `expected` were kept have neither: the texts say so. No React; tested
 * in case-text.test.ts.
 */
import type { CaseResult } from '../../worker/protocol';

/** What each companion verdict means for a case that did not pass. */
const FAILED_AS: Record<string, string> = {
  // Exit status 0, but stdout differs from the expected output.
  COMPLETED: 'wrong output',
  // Nonzero exit status: an uncaught exception, a MemoryError.
  FAILED: 'error',
  TIMEOUT: 'timed out',
  // Killed by a signal it did not ask for.
  CRASHED: 'crashed',
  OUTPUT_LIMIT: 'too much output',
};

/** The case's result in a word or two: "passed", or why it failed. */
export function caseResultWord(c: Pick<CaseResult, 'verdict' | 'passed'>): string {
  if (c.passed) return 'passed';
  if (c.verdict === null) return 'not run';
  return FAILED_AS[c.verdict] ?? c.verdict.toLowerCase().replace(/_/g, ' ');
}

/** "case 2: timed out" (1-based). */
export const caseChipText = (c: Pick<CaseResult, 'verdict' | 'passed'>, index: number) =>
  `case ${index + 1}: ${caseResultWord(c)}`;

/**
 * A program's stdin or stdout on one line: the final newline dropped, other line breaks as ⏎,
 * "(empty)" for nothing, cut at `max` characters with "…".
 */
export function oneLine(text: string, max = 24): string {
  const flat = text.replace(/\r?\n$/, '').replace(/\r?\n/g, ' ⏎ ');
  if (!flat) return '(empty)';
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, Math.max(1, max - 1)).join('')}…`;
}

/**
 * The case beside its chip: "2 → 25" when it passed, "2 → 24, expected 25" when the output was
 * wrong, "2 → expected 25" when the program did not finish; for a case stored without its input,
 * only what the program printed ("→ 24") or null.
 */
export function caseIoText(c: CaseResult, max = 16): string | null {
  const wrote = c.verdict === 'COMPLETED' ? oneLine(c.stdout, max) : null;
  if (c.input === undefined || c.expected === undefined) return wrote === null || c.passed ? null : `→ ${wrote}`;
  const input = oneLine(c.input, max);
  if (c.passed) return `${input} → ${oneLine(c.expected, max)}`;
  return wrote === null
    ? `${input} → expected ${oneLine(c.expected, max)}`
    : `${input} → ${wrote}, expected ${oneLine(c.expected, max)}`;
}

/** Everything about one case, in full, for its tooltip and accessible description. */
export function caseDescription(c: CaseResult, index: number): string {
  const parts = [`${caseChipText(c, index)}: ${c.detail}`];
  parts.push(c.input === undefined ? 'input not recorded' : `input ${JSON.stringify(c.input)}`);
  parts.push(c.expected === undefined ? 'expected output not recorded' : `expected ${JSON.stringify(c.expected)}`);
  if (c.verdict !== null) parts.push(`program wrote ${JSON.stringify(c.stdout)}`);
  return parts.join('; ');
}
