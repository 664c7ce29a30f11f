/**
 * The lines of a JSONL text (a dataset, a verl rollout dump) as parsed values, numbered from 1:
 * blank lines skipped, a CR before the newline and a leading BOM ignored, a line that is not JSON
 * kept with the parser's message so that the caller reports the first bad line in file order.
 */
export type JsonlRow = { at: number; raw: unknown } | { at: number; notJson: string };

export function jsonlRows(text: string): JsonlRow[] {
  const rows: JsonlRow[] = [];
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (!line.trim()) continue;
    try {
      rows.push({ at: i + 1, raw: JSON.parse(line) });
    } catch (e) {
      rows.push({ at: i + 1, notJson: (e as Error).message });
    }
  }
  return rows;
}

/** The UTF-8 text of `bytes`, or null when they are not UTF-8 (a person's file, refused with its name). */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
