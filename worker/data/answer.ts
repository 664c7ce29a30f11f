/**
 * Answer extraction and exact-match scoring for the arithmetic tasks: the content of the last
 * `\boxed{...}` (nested braces balanced), compared with the task's integer answer as a string.
 *
 * Deliberately small: no `\fbox`, no `\boxed 5` without braces, no equivalence of `082`, `+82`,
 * `82.0` or `164/2` with `82`. A later issue adds a full rational MathReward; this one is the
 * held-out exact-match accuracy of issue 3. Extraction follows verl's `last_boxed_only_string`
 * (`verl/utils/reward_score/math.py`): the last occurrence wins, and an unclosed last box gives
 * null (no fallback to an earlier box).
 */
import type { ArithTask } from './arith';

const OPEN = '\\boxed{';

/** The content of the last `\boxed{...}` in `text`, nested braces included; null when there is none or it is unclosed. */
export function extractBoxed(text: string): string | null {
  const start = text.lastIndexOf(OPEN);
  if (start < 0) return null;
  let depth = 1;
  const from = start + OPEN.length;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return text.slice(from, i);
  }
  return null;
}

/** True when the last box of `completionText`, trimmed, is exactly `task.answer` (`82`, `-12`). */
export function exactMatch(completionText: string, task: Pick<ArithTask, 'answer'>): boolean {
  const boxed = extractBoxed(completionText);
  return boxed !== null && boxed.trim() === task.answer;
}
