/**
 * Shared shape checks and the sequence layout of `[rows, width]` tables (row-major, flat arrays),
 * used by every RL-core module. Bad input is refused with the name of the array and the sizes
 * involved. Not a statistic: verl's masked means live beside their users.
 */

/** Throws unless `a` has exactly rows × width entries. */
export function checkTable(name: string, a: ArrayLike<number>, rows: number, width: number): void {
  if (!Number.isInteger(rows) || rows < 0) throw new Error(`${name}: rows must be a non-negative integer, got ${rows}`);
  if (!Number.isInteger(width) || width < 0)
    throw new Error(`${name}: width must be a non-negative integer, got ${width}`);
  if (a.length !== rows * width) {
    throw new Error(`${name}: expected rows × width = ${rows} × ${width} = ${rows * width} entries, got ${a.length}`);
  }
}

/** Throws unless every entry of `a` is finite, naming the first bad `[row, col]`. */
export function checkFinite(name: string, a: ArrayLike<number>, width: number, where?: ArrayLike<number>): void {
  for (let i = 0; i < a.length; i++) {
    if (where && !where[i]) continue;
    if (!Number.isFinite(a[i])) {
      const row = width > 0 ? Math.floor(i / width) : 0;
      throw new Error(`${name}[${row}, ${width > 0 ? i % width : i}] = ${a[i]}: expected a finite number`);
    }
  }
}

/** The layout of a packed `[rows, width]` batch that sequence-level reductions read. */
export interface TableLayout {
  /** Rows of the packed batch. */
  rows: number;
  /** Columns of the packed batch. */
  width: number;
  /**
   * Packed chain ids (`[rows, width]`, 0 = padding); a sequence is a chain. Default: absent, and
   * each row is one sequence (verl's layout, where a row counts even when its mask is empty).
   */
  segmentIds?: ArrayLike<number>;
}

/** One sequence: `start`/`end` are flat indices (end exclusive) within row `row`. */
export interface SegmentSpan {
  row: number;
  segment: number;
  start: number;
  end: number;
}

/**
 * The sequences of a layout, in row-major order: runs of equal non-zero segment id in each row
 * (one per packed chain), or whole rows without `segmentIds`. Refuses a mask entry other than 0/1
 * and a masked token on padding, naming `maskName[row, col]`. The one implementation every
 * aggregation, sequence ratio and correction uses.
 */
export function sequenceSpans(layout: TableLayout, mask: ArrayLike<number>, maskName = 'mask'): SegmentSpan[] {
  const { rows, width, segmentIds } = layout;
  checkTable(maskName, mask, rows, width);
  if (segmentIds) checkTable('segmentIds', segmentIds, rows, width);
  for (let i = 0; i < mask.length; i++) {
    const m = mask[i];
    const where = `${maskName}[${Math.floor(i / width)}, ${i % width}]`;
    if (m !== 0 && m !== 1) throw new Error(`${where} = ${m}: expected 0 or 1`);
    if (m === 1 && segmentIds && segmentIds[i] === 0) {
      throw new Error(`${where} = 1 on padding (segmentIds = 0): a token with loss mass must belong to a chain`);
    }
  }
  const spans: SegmentSpan[] = [];
  for (let r = 0; r < rows; r++) {
    if (!segmentIds) {
      spans.push({ row: r, segment: 1, start: r * width, end: (r + 1) * width });
      continue;
    }
    let t = 0;
    while (t < width) {
      const s = segmentIds[r * width + t];
      if (s === 0) {
        t++;
        continue;
      }
      const start = t;
      while (t < width && segmentIds[r * width + t] === s) t++;
      spans.push({ row: r, segment: s, start: r * width + start, end: r * width + t });
    }
  }
  return spans;
}
