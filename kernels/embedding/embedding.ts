/**
 * WebGPU wrappers for the token embedding: `embeddingForward` (gather rows of wte by id) and
 * `embeddingBackward` (dwte += dout rows summed per id, no float atomics). Same contract as
 * embedding.ref.ts, except that an id outside 0..V-1 gets a zero row (forward) and is skipped
 * (backward) instead of throwing: ids live on the GPU and are not checked here. One dispatch each.
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor, isSoftwareAdapter } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkEmbeddingShapes } from './embedding.ref';
import backwardSrc from './embedding_backward.wgsl?raw';
import forwardSrc from './embedding_forward.wgsl?raw';

const FORWARD_WG = 256;
const FORWARD_BLOCK = FORWARD_WG * 4; // outputs per workgroup (see the WGSL header)

/** The backward's work split (embedding_backward.wgsl): vocabulary rows per range, lanes per range, ranges per workgroup. */
export interface EmbeddingBackwardTuning {
  ROWS: number;
  LANES: number;
  RANGES_PER_WG: number;
}

/**
 * Every range re-reads all N ids, so fewer, larger ranges cost less; a GPU needs many ranges to
 * fill its cores, a 2-core software adapter about eight (measured: V = 256 → 8 ranges of 32 rows
 * took half the time of 16 ranges of 16).
 */
export function embeddingBackwardTuning(V: number, software: boolean): EmbeddingBackwardTuning {
  return software
    ? { ROWS: Math.max(16, Math.ceil(V / 8)), LANES: 4, RANGES_PER_WG: 1 }
    : { ROWS: 16, LANES: 32, RANGES_PER_WG: 2 };
}

function params(N: number, C: number, V: number): Uint32Array {
  return new Uint32Array([N, C, V, 0]);
}

/** out (N, C) = wte (V, C) rows picked by ids (N) i32. */
export function embeddingForward(
  rt: Dispatcher,
  out: GpuTensor,
  ids: GpuTensor,
  wte: GpuTensor,
  N: number,
  C: number,
  V: number,
): void {
  checkEmbeddingShapes('embeddingForward', { rows: out.length, ids: ids.length, table: wte.length }, N, C, V);
  checkDisjoint('embeddingForward', { out }, { ids, wte });
  if (N * C === 0) return;
  rt.dispatch(
    { label: 'embedding_forward', code: forwardSrc, constants: { WG: FORWARD_WG } },
    params(N, C, V),
    [ids, wte, out],
    gridFor(rt, Math.ceil((N * C) / FORWARD_BLOCK)),
  );
}

/** dwte (V, C) += Σ over tokens with id v of dout (N, C) rows; ids (N) i32. */
export function embeddingBackward(
  rt: Dispatcher,
  dwte: GpuTensor,
  dout: GpuTensor,
  ids: GpuTensor,
  N: number,
  C: number,
  V: number,
  tuning?: EmbeddingBackwardTuning,
): void {
  checkEmbeddingShapes('embeddingBackward', { rows: dout.length, ids: ids.length, table: dwte.length }, N, C, V, {
    rows: 'dout',
    table: 'dwte',
  });
  checkDisjoint('embeddingBackward', { dwte }, { dout, ids });
  if (N * C === 0) return;
  const t = tuning ?? embeddingBackwardTuning(V, isSoftwareAdapter(rt));
  const ranges = Math.ceil(V / t.ROWS);
  rt.dispatch(
    { label: 'embedding_backward', code: backwardSrc, constants: { ...t } },
    params(N, C, V),
    [dout, ids, dwte],
    [1, Math.ceil(ranges / t.RANGES_PER_WG)],
  );
}
