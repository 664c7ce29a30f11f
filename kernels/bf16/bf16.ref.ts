/**
 * bfloat16 storage of f32 values, two to a 32-bit word, and the reference for widening them back
 * (the specification widen_bf16.wgsl and the wasm kernel are tested against). A bf16 value is the
 * top 16 bits of an f32 (sign, 8 exponent bits, 7 mantissa bits): `packBf16` rounds each value to
 * the nearest bf16, ties to even (as PyTorch's `.to(torch.bfloat16)`), NaN kept NaN; element 2j is
 * the low half of word j, element 2j + 1 the high half. Widening is exact: out = the bf16's f32.
 * Used for the weights of frozen models held in half the memory (worker/model/params.ts).
 */
import { checkElementwise } from '../residual/residual.ref';

/** Words (i32) that hold n bf16 values. */
export const bf16Words = (n: number): number => Math.ceil(n / 2);

/** The bf16 bits (0 … 0xffff) nearest to f32 `bits`, ties to even; NaN stays a (quiet) NaN. */
function roundToBf16(bits: number): number {
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** n f32 values as bf16, two to a word. */
export function packBf16(values: ArrayLike<number>): Int32Array {
  const f = Float32Array.from(values);
  const bits = new Uint32Array(f.buffer);
  const out = new Int32Array(bf16Words(f.length));
  for (let i = 0; i < f.length; i++) out[i >> 1] |= roundToBf16(bits[i]) << ((i & 1) * 16);
  return out;
}

/** n values back from packed bf16 words (exact). */
export function unpackBf16(packed: ArrayLike<number>, n: number): Float32Array {
  const out = new Float32Array(n);
  widenBf16Ref(out, packed, n);
  return out;
}

/** Throws with the sizes when `out` holds fewer than n values or `packed` fewer than ⌈n / 2⌉ words. */
export function checkBf16Shapes(n: number, out: { length: number }, packed: { length: number }): void {
  checkElementwise('widenBf16', n, { out });
  if (packed.length < bf16Words(n))
    throw new Error(`widenBf16: packed has ${packed.length} words, needs ⌈n / 2⌉ = ${bf16Words(n)}`);
}

/** out (n) = the f32 values of the bf16 elements of `packed` (⌈n / 2⌉ words). */
export function widenBf16Ref(out: Float32Array | Float64Array, packed: ArrayLike<number>, n: number): void {
  checkBf16Shapes(n, out, packed);
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  for (let i = 0; i < n; i++) {
    bits[0] = ((packed[i >> 1] >>> ((i & 1) * 16)) & 0xffff) << 16;
    out[i] = f[0];
  }
}
