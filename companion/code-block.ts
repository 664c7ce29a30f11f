/**
 * Extract the program from a completion for a code reward: the last fenced block tagged
 * `language`, else the last untagged fenced block, else `null`.
 *
 * Reference: docs/rl-core.md "Rewards" (`codeBlock(text, language = 'python')`) and dew
 * `code_block(completion, language='python')`. Not a Markdown renderer: it only finds fences.
 * Pure TypeScript, no DOM or Node APIs. Never throws. It lives in the companion, which grades
 * code completions (POST /v1/reward/code); the worker sends it the completion as is.
 *
 * Fences follow CommonMark where it matters, decided here:
 * - A fence is a line of 3+ backticks or 3+ tildes, after any indentation. The opener's info
 *   string (the rest of the line) must not contain a backtick for a backtick fence (so an inline
 *   "```python print(1)```" is not a block). The tag is the info string's first word, compared
 *   case-insensitively with `language` (`Python` is `python`); no aliases (`py` is not `python`).
 *   Any other tag (`js`, `python3`, `output`) is neither tagged `language` nor untagged.
 * - The block closes at the next line made only of the same fence character, at least as many
 *   as the opener, and optional surrounding whitespace; shorter or other fences inside are content.
 * - An unclosed block (a completion cut off mid-program) is not a block and is ignored.
 * - The content is the lines between the fences joined by `\n` (CRLF read as LF), without a
 *   final newline; up to the opener's indentation is removed from each line. `""` for an empty
 *   block (still a block, so it is returned, not `null`).
 */

/** One closed fenced block. */
interface FencedBlock {
  /** First word of the info string, lowercased; `''` for an untagged block. */
  tag: string;
  /** The lines between the fences, joined by `\n`, without a final newline. */
  content: string;
}

const OPEN = /^([ \t]*)(`{3,}|~{3,})(.*)$/;

/** Whether `line` closes a block opened by `fence` (same character, at least as many). */
function closes(line: string, fence: string): boolean {
  const t = line.trim();
  return t.length >= fence.length && [...t].every((c) => c === fence[0]);
}

/** `line` without up to `n` leading spaces or tabs. */
function dedent(line: string, n: number): string {
  let k = 0;
  while (k < n && (line[k] === ' ' || line[k] === '\t')) k++;
  return line.slice(k);
}

/** Every closed fenced block of `text`, in order. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = OPEN.exec(lines[i]);
    if (!m) continue;
    const [, indent, fence, info] = m;
    if (fence[0] === '`' && info.includes('`')) continue;
    let j = i + 1;
    while (j < lines.length && !closes(lines[j], fence)) j++;
    if (j === lines.length) break; // unclosed: it would run to the end, so nothing follows it
    blocks.push({
      tag: info.trim().split(/\s+/)[0].toLowerCase(),
      content: lines
        .slice(i + 1, j)
        .map((line) => dedent(line, indent.length))
        .join('\n'),
    });
    i = j;
  }
  return blocks;
}

/**
 * The last fenced block tagged `language` (default `'python'`), else the last untagged one,
 * else `null`.
 */
export function codeBlock(text: string, language = 'python'): string | null {
  const blocks = fencedBlocks(text);
  const want = language.trim().toLowerCase();
  const tagged = blocks.filter((b) => b.tag === want);
  if (tagged.length > 0) return tagged[tagged.length - 1].content;
  const untagged = blocks.filter((b) => b.tag === '');
  return untagged.length > 0 ? untagged[untagged.length - 1].content : null;
}
