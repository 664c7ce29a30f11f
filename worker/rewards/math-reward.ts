/**
 * The math reward: 1 when a completion's final answer equals the reference exactly, else 0,
 * with per-component scores (`boxed`, `parsed`, `correct`) that are stored on the session.
 *
 * Reference: docs/rl-core.md "Rewards" and dew `MathReward(require_boxed=True)`: the answer is the
 * last `\boxed{...}` (nested braces allowed); without one, and only with `requireBoxed = false`,
 * the last number. Integers, decimals, `a/b` and `\frac{a}{b}` compare exactly as rationals
 * (`rational.ts`, BigInt, never floating point). A reference that is not a number compares as
 * trimmed text.
 *
 * Not a grader of expressions: no symbolic simplification, no units, no `\text{}` stripping.
 * Pure TypeScript, no DOM or Node APIs: it runs in the Web Worker and in Node. Never throws.
 *
 * Edge cases, decided here:
 * - Braces: `\{` and `\}` (any backslash pair) are escaped and do not open or close a group.
 * - Several boxes: the last top-level box wins; a box nested inside an earlier box is part of that
 *   box's content. A box whose whole content is one box (`\boxed{\boxed{5}}`) is unwrapped.
 * - An unclosed last `\boxed{` (a completion cut off mid-answer) means no answer, in both modes:
 *   neither an earlier box nor the last number stands in for it.
 * - `\boxed{}` (empty) is an answer, `""`, that is not a number.
 * - Thousands separators are not accepted: `1,000` is not a number, so it never equals `1000`
 *   (it can only match a text reference `1,000`). The last-number scan reads `1,000` as one
 *   token, not as `000`, so it is extracted and then fails to parse.
 * - Division by zero (`1/0`, `\frac{1}{0}`) is not a number: as an answer it is wrong against a
 *   numeric reference; as a reference it compares as text, so only the same text matches.
 * - A blank reference matches nothing (a blank ground truth is a data error, not a free point).
 * - Last-number scan: integers, decimals (`.5`, `5.`), `a/b`, `\frac{a}{b}`; a sign counts only
 *   when it does not follow an operand (`x=-5` → `-5`, `3-5` → `5`); `1e3` reads as `3`.
 */
import { formatRational, parseRational, rationalEquals } from './rational';

export interface MathRewardOptions {
  /**
   * Default `true`: only a closed `\boxed{...}` counts as an answer. `false`: a completion with no
   * box falls back to its last number (an unclosed last box is still no answer).
   */
  requireBoxed?: boolean;
}

/** Per-component scores, each 0 or 1. */
export interface MathRewardComponents {
  /** The answer came from a closed `\boxed{...}` (0 for a last-number fallback or no answer). */
  boxed: 0 | 1;
  /** The extracted answer parses as an exact rational. */
  parsed: 0 | 1;
  /** The answer equals the reference (as rationals, or as trimmed text for a text reference). */
  correct: 0 | 1;
}

export interface MathRewardResult {
  /** The reward: equal to `components.correct`. */
  score: 0 | 1;
  components: MathRewardComponents;
  /** The answer text (trimmed box content, or the last number-like token), `null` when none. */
  extracted: string | null;
  /** One human-readable line saying why, for the Groups view and logs. */
  detail: string;
}

/** What the scan for the last `\boxed{...}` found. */
export type BoxScan = { status: 'none' } | { status: 'unclosed' } | { status: 'closed'; content: string };

// Fresh `g` regexes per call (from this source) keep `lastIndex` state out of module scope.
const BOX_OPEN = String.raw`\\boxed\s*\{`;
const WHOLE_BOX = new RegExp(`^${BOX_OPEN}`);
const SIGN = '[+\\-\u2212]';
const LAST_NUMBER = new RegExp(
  // a sign only where it cannot be a binary operator after an operand
  `(?:(?<![\\w)\\]}])${SIGN})?` +
    '(?:' +
    `\\\\[dt]?frac\\s*\\{[\\s\\d.+\\-\u2212]*\\}\\s*\\{[\\s\\d.+\\-\u2212]*\\}` +
    '|\\\\[dt]?frac\\s*\\d\\s*\\d' +
    // thousands-grouped runs are one token (that then fails to parse), not several numbers
    '|(?:\\d{1,3}(?:,\\d{3})+(?!\\d)|\\d+)(?:\\.\\d*)?(?:[ \\t]*/[ \\t]*\\d+(?:\\.\\d+)?)?' +
    '|(?<!\\d)\\.\\d+' +
    ')',
  'g',
);

/** Index of the `}` closing the group whose content starts at `start`, or -1 if it never closes. */
function closingBrace(text: string, start: number): number {
  let depth = 1;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '\\')
      i++; // an escaped character (`\{`, `\}`, `\\`) is never a group brace
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The last top-level `\boxed{...}` of `text`: its content, or whether it is missing or unclosed. */
export function lastBoxed(text: string): BoxScan {
  let found: BoxScan = { status: 'none' };
  const open = new RegExp(BOX_OPEN, 'g');
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    const start = m.index + m[0].length;
    const end = closingBrace(text, start);
    if (end < 0) return { status: 'unclosed' };
    found = { status: 'closed', content: text.slice(start, end) };
    open.lastIndex = end + 1;
  }
  return found;
}

/** `\boxed{\boxed{x}}` → `x`: strip boxes that wrap the whole (trimmed) content. */
function unwrapBoxes(content: string): string {
  let t = content.trim();
  for (let m = WHOLE_BOX.exec(t); m !== null; m = WHOLE_BOX.exec(t)) {
    const end = closingBrace(t, m[0].length);
    if (end !== t.length - 1) break;
    t = t.slice(m[0].length, end).trim();
  }
  return t;
}

/** The last number-like token of `text` (see the module notes), or `null` if there is none. */
export function lastNumber(text: string): string | null {
  let last: string | null = null;
  for (const m of text.matchAll(LAST_NUMBER)) last = m[0];
  return last;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/**
 * Score `completion` against `reference` (see the module notes for every edge case).
 * `requireBoxed` defaults to `true`.
 */
export function mathReward(
  completion: string,
  reference: string,
  { requireBoxed = true }: MathRewardOptions = {},
): MathRewardResult {
  const box = lastBoxed(completion);
  let extracted: string | null = null;
  let boxed: 0 | 1 = 0;
  let missing = '';
  if (box.status === 'closed') {
    extracted = unwrapBoxes(box.content);
    boxed = 1;
  } else if (box.status === 'unclosed') {
    missing = 'the last \\boxed{ is never closed';
  } else if (requireBoxed) {
    missing = 'no \\boxed{} answer (requireBoxed)';
  } else {
    extracted = lastNumber(completion);
    missing = 'no \\boxed{} answer and no number';
  }
  if (extracted === null) {
    return { score: 0, components: { boxed: 0, parsed: 0, correct: 0 }, extracted, detail: missing };
  }

  const value = parseRational(extracted);
  const parsed: 0 | 1 = value ? 1 : 0;
  const ref = reference.trim();
  const refValue = parseRational(ref);
  let correct: 0 | 1;
  let detail: string;
  if (refValue) {
    correct = value && rationalEquals(value, refValue) ? 1 : 0;
    const want = formatRational(refValue);
    detail = !value
      ? `answer ${quote(extracted)} is not a number; reference ${want}`
      : `answer ${formatRational(value)} ${correct ? '=' : '≠'} reference ${want}`;
  } else if (ref === '') {
    correct = 0;
    detail = 'the reference is blank: nothing matches it';
  } else {
    correct = extracted === ref ? 1 : 0;
    detail = `answer ${quote(extracted)} ${correct ? 'matches' : 'differs from'} text reference ${quote(ref)}`;
  }
  return { score: correct, components: { boxed, parsed, correct }, extracted, detail };
}
