/**
 * CPU reference for appending one new row of keys (or values) per sequence to a KV cache: the
 * specification the WGSL kernel and the wasm export are tested against, plain loops, not derived
 * from either. Not a general scatter: each cache row receives exactly one vector, inside its own
 * row, so rows never collide.
 *
 * Layout: cache (B, L, KV) row-major (slot s of row b at (b·L + s)·KV, as attention-decode.ref.ts
 * reads it), rows (B, KV) (the step's new k or v after RoPE, one per row), slots (B) integers:
 *   cache[b, slots[b], :] = rows[b, :]        for every b < B
 * Every other element of the cache is left as it is. The values are copied bit for bit.
 * A slot outside 0..L−1 throws here; the GPU kernel cannot be checked from the CPU and skips
 * that row instead (writes nothing for it).
 */

/** cache (B, L, KV): writes rows (B, KV) at slot slots[b] of each row b. */
export function kvScatterRef(
  cache: Float32Array | Float64Array,
  rows: ArrayLike<number>,
  slots: ArrayLike<number>,
  B: number,
  L: number,
  KV: number,
): void {
  checkKvScatterShapes('kvScatter', { cache, rows, slots }, B, L, KV);
  checkKvSlots(slots, B, L);
  for (let b = 0; b < B; b++) {
    const at = (b * L + slots[b]) * KV;
    for (let i = 0; i < KV; i++) cache[at + i] = rows[b * KV + i];
  }
}

/** Throws unless every slots[b] (b < B) is an integer in 0..L−1. */
export function checkKvSlots(slots: ArrayLike<number>, B: number, L: number): void {
  for (let b = 0; b < B; b++) {
    const s = slots[b];
    if (!Number.isInteger(s) || s < 0 || s >= L)
      throw new Error(
        `kvScatter: slots[${b}] = ${s} is outside 0..L−1 = 0..${L - 1} (a full row cannot take another id)`,
      );
  }
}

/** Throws with expected and actual sizes when a dimension is invalid or a buffer is shorter than (B, L, KV) needs. */
export function checkKvScatterShapes(
  op: string,
  buffers: { cache: { length: number }; rows: { length: number }; slots: { length: number } },
  B: number,
  L: number,
  KV: number,
): void {
  for (const [name, x] of [
    ['B', B],
    ['L', L],
    ['KV', KV],
  ] as const) {
    if (!Number.isInteger(x) || x < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${x}`);
  }
  const need: [string, number, string][] = [
    ['cache', B * L * KV, `B*L*KV = ${B}*${L}*${KV}`],
    ['rows', B * KV, `B*KV = ${B}*${KV}`],
    ['slots', B, `B = ${B}`],
  ];
  for (const [name, n, formula] of need) {
    const have = buffers[name as keyof typeof buffers].length;
    if (have < n) throw new Error(`${op}: ${name} has ${have} elements, needs ${formula} = ${n}`);
  }
}
