/**
 * CPU reference for the token embedding: plain loops from the formula, the specification
 * embedding_forward.wgsl and embedding_backward.wgsl are tested against.
 *   forward:  out[n, :] = wte[ids[n], :]                      out (N, C), ids (N), wte (V, C)
 *   backward: dwte[v, :] += Σ_{n : ids[n] = v} dout[n, :]     accumulated, float64 sums per row
 * An id outside 0..V-1 (or not an integer) throws here, naming the index; the GPU kernels write
 * a zero row for it (forward) and skip it (backward), never reading out of bounds.
 * Outputs may be Float32Array (the cpu backend) or Float64Array (finite-difference tests).
 */
import type { RefOut } from '../residual/residual.ref';

/** Throws with expected and actual sizes when the buffers do not match (N, C, V). */
export function checkEmbeddingShapes(
  op: string,
  sizes: { rows: number; ids: number; table: number },
  N: number,
  C: number,
  V: number,
  names = { rows: 'out', table: 'wte' },
): void {
  for (const [name, v] of [
    ['N', N],
    ['C', C],
    ['V', V],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${v}`);
  }
  if (V === 0) throw new Error(`${op}: V must be at least 1 (an embedding table with no rows)`);
  if (sizes.rows < N * C)
    throw new Error(`${op}: ${names.rows} has ${sizes.rows} elements, needs N*C = ${N}*${C} = ${N * C}`);
  if (sizes.ids < N) throw new Error(`${op}: ids has ${sizes.ids} elements, needs N = ${N}`);
  if (sizes.table < V * C)
    throw new Error(`${op}: ${names.table} has ${sizes.table} elements, needs V*C = ${V}*${C} = ${V * C}`);
}

export function checkId(op: string, ids: ArrayLike<number>, n: number, V: number): number {
  const id = ids[n];
  if (!Number.isInteger(id) || id < 0 || id >= V) {
    throw new Error(
      `${op}: ids[${n}] = ${id} is outside 0..${V - 1} (V = ${V}); the GPU kernel gives this token a zero row`,
    );
  }
  return id;
}

export function embeddingForwardRef(
  out: RefOut,
  ids: ArrayLike<number>,
  wte: ArrayLike<number>,
  N: number,
  C: number,
  V: number,
): void {
  checkEmbeddingShapes('embeddingForward', { rows: out.length, ids: ids.length, table: wte.length }, N, C, V);
  for (let n = 0; n < N; n++) {
    const id = checkId('embeddingForward', ids, n, V);
    for (let c = 0; c < C; c++) out[n * C + c] = wte[id * C + c];
  }
}

export function embeddingBackwardRef(
  dwte: RefOut,
  dout: ArrayLike<number>,
  ids: ArrayLike<number>,
  N: number,
  C: number,
  V: number,
): void {
  checkEmbeddingShapes('embeddingBackward', { rows: dout.length, ids: ids.length, table: dwte.length }, N, C, V, {
    rows: 'dout',
    table: 'dwte',
  });
  // On from the table's value, id by id in order, rounded as the table holds it (float32 on the CPU
  // backend): ids split over calls (a batch's passes) sum bit for bit as in one call.
  for (let n = 0; n < N; n++) {
    const id = checkId('embeddingBackward', ids, n, V);
    for (let c = 0; c < C; c++) dwte[id * C + c] += dout[n * C + c];
  }
}
