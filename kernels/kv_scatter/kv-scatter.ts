/**
 * WebGPU wrapper for appending one vector per row to a KV cache (kv_scatter.wgsl); same contract
 * as kv-scatter.ref.ts. One dispatch for all B rows, where per-row buffer copies took B commands.
 * slots live on the GPU, so they are not checked here: the kernel skips a row whose slot is
 * outside 0..L−1 (the reference throws). cache must not share a buffer with rows or slots.
 */
import type { Dispatcher } from '../common/dispatcher';
import { checkDisjoint, gridFor } from '../common/launch';
import type { GpuTensor } from '../common/tensor';
import { checkKvScatterShapes } from './kv-scatter.ref';
import src from './kv_scatter.wgsl?raw';

const WG = 256;

/** cache (B, L, KV): cache[b, slots[b], :] = rows[b, :] for rows (B, KV), slots (B) i32. */
export function kvScatter(
  rt: Dispatcher,
  cache: GpuTensor,
  rows: GpuTensor,
  slots: GpuTensor,
  B: number,
  L: number,
  KV: number,
): void {
  checkKvScatterShapes('kvScatter', { cache, rows, slots }, B, L, KV);
  checkDisjoint('kvScatter', { cache }, { rows, slots });
  if (B * L * KV === 0) return;
  rt.dispatch(
    { label: 'kv_scatter', code: src, constants: { WG } },
    new Uint32Array([B, L, KV]),
    [rows, slots, cache],
    gridFor(rt, Math.ceil((B * KV) / WG)),
  );
}
