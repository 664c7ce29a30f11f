/**
 * IEEE binary16 (f16) storage on the CPU: the specification the f16 matmul kernels
 * (kernels/matmul/matmul-f16.ts) and their tests use. An f16 has a sign, 5 exponent bits and 10
 * mantissa bits (11 significant bits: a relative spacing of 2⁻¹⁰, so rounding to nearest is
 * within 2⁻¹¹ relative for normal values, |x| ≥ 2⁻¹⁴); below 2⁻¹⁴ values are subnormal, spaced
 * 2⁻²⁴ apart; the largest finite value is 65504. `roundF16` rounds an f32 to the nearest f16,
 * ties to even (IEEE 754's default, as numpy's `astype(float16)` and PyTorch's `.half()`),
 * overflowing to ±Infinity from 65520 on, NaN staying NaN. `packF16` stores two to a 32-bit word,
 * element 2j in the low half of word j: the byte layout of a WGSL `array<f16>` and of
 * `pack2x16float`, so one buffer serves the native and the emulated kernels. Not a GPU kernel.
 */

/** Words (i32) that hold n f16 values. */
export const f16Words = (n: number): number => Math.ceil(n / 2);

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The f16 bits (0 … 0xffff) nearest to x (as an f32), ties to even. */
export function f16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // infinity, or a quiet NaN
  // The value's significand with its hidden bit, and how far to shift it to reach f16's last bit.
  const e = exp - 127; // unbiased exponent (f32 subnormals are far below f16's range: they round to 0)
  if (e < -25) return sign; // below half the smallest subnormal (2⁻²⁵): rounds to ±0
  const full = mant | 0x800000; // 24 significant bits, value = full · 2^(e − 23)
  // Normal f16 keeps 11 bits (shift 13); a subnormal keeps those down to 2⁻²⁴ (shift 13 + (−14 − e)).
  const shift = e >= -14 ? 13 : 13 + (-14 - e);
  const kept = full >>> shift;
  const rest = full & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  const rounded = rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
  if (e < -14) return sign | rounded; // subnormal (a carry into 0x400 is the smallest normal: right too)
  // Normal: rounded has 11 bits (12 after a carry, which bumps the exponent).
  const biased = e + 15 + (rounded >>> 11);
  if (biased >= 31) return sign | 0x7c00; // overflow: ±Infinity
  return sign | (biased << 10) | ((rounded >>> (rounded >>> 11)) & 0x3ff);
}

/** The value of f16 bits h (exact). */
export function f16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  if (exp === 0) return sign * mant * 2 ** -24;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** x rounded to the nearest f16 (ties to even), as a number. */
export const roundF16 = (x: number): number => f16Value(f16Bits(x));

/** n values as f16, two to a word (element 2j the low half of word j). */
export function packF16(values: ArrayLike<number>): Int32Array {
  const out = new Int32Array(f16Words(values.length));
  for (let i = 0; i < values.length; i++) out[i >> 1] |= f16Bits(values[i]) << ((i & 1) * 16);
  return out;
}

/** n values back from packed f16 words (exact). */
export function unpackF16(packed: ArrayLike<number>, n: number): Float32Array {
  if (packed.length < f16Words(n))
    throw new Error(`unpackF16: packed has ${packed.length} words, needs ⌈n / 2⌉ = ${f16Words(n)}`);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = f16Value((packed[i >> 1] >>> ((i & 1) * 16)) & 0xffff);
  return out;
}
