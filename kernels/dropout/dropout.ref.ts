/**
 * CPU reference for seeded dropout: the specification dropout.wgsl and the wasm kernel are tested
 * against. Element i keeps its value, scaled by 1/(1 − p), when the hash of (seed, offset + i) is
 * at least p·2³², else becomes 0; `accumulate` adds the result onto `out` instead of writing it.
 *   out[i] (+)= keep(seed, offset + i) ? x[i] / (1 − p) : 0
 * The mask is a pure function of (seed, index): the same seed and offset draw it again (a forward
 * and its backward; a batch in passes, each at its rows' offset), on every backend alike (32-bit
 * integer arithmetic only). Used for LoRA's adapter dropout (worker/model/lora.ts).
 */
import { checkElementwise } from '../residual/residual.ref';

export interface DropoutOptions {
  /** Probability of dropping an element, 0 ≤ p < 1. */
  p: number;
  /** The mask's seed, an unsigned 32-bit integer. */
  seed: number;
  /** Index of element 0 in the mask's sequence (an unsigned 32-bit integer). */
  offset: number;
  /** Add onto `out` (true) or overwrite it (default). */
  accumulate?: boolean;
}

/** lowbias32 (Chris Wellons' integer hash): a bijection of 32-bit integers with good avalanche. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** What the kernels take: the hash key, the keep threshold (p·2³², rounded down) and the scale 1/(1 − p) as f32. */
export function dropoutScalars(op: string, o: DropoutOptions): { key: number; threshold: number; scale: number } {
  if (!(o.p >= 0 && o.p < 1)) throw new Error(`${op}: p must be in [0, 1), got ${o.p}`);
  for (const [name, v] of [
    ['seed', o.seed],
    ['offset', o.offset],
  ] as const)
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff)
      throw new Error(`${op}: ${name} must be an unsigned 32-bit integer, got ${v}`);
  return { key: mix32(o.seed), threshold: Math.floor(o.p * 2 ** 32), scale: Math.fround(1 / (1 - o.p)) };
}

/** Whether element `index` of the mask keyed `key` is kept. */
export function kept(key: number, index: number, threshold: number): boolean {
  return mix32((key ^ index) >>> 0) >= threshold;
}

export function dropoutRef(out: Float32Array | Float64Array, x: ArrayLike<number>, n: number, o: DropoutOptions): void {
  checkElementwise('dropout', n, { out, x });
  const { key, threshold, scale } = dropoutScalars('dropout', o);
  for (let i = 0; i < n; i++) {
    const v = kept(key, (o.offset + i) >>> 0, threshold) ? Math.fround(x[i] * scale) : 0;
    out[i] = o.accumulate ? out[i] + v : v;
  }
}
