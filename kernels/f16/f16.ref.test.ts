import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { f16Bits, f16Value, f16Words, packF16, roundF16, unpackF16 } from './f16.ref';

describe('f16 rounding and storage', () => {
  it('gives the IEEE binary16 bits of hand-picked values', () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [65504, 0x7bff], // largest finite
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -14 - 2 ** -24, 0x03ff], // largest subnormal
      [1 / 3, 0x3555],
      [Infinity, 0x7c00],
      [-Infinity, 0xfc00],
    ];
    for (const [x, h] of cases) expect(f16Bits(x), `${x}`).toBe(h);
    expect(f16Bits(NaN) & 0x7c00).toBe(0x7c00);
    expect(f16Bits(NaN) & 0x3ff).not.toBe(0);
  });

  it('rounds to nearest, ties to even, in the normal and subnormal ranges, and overflows from 65520', () => {
    const ulp1 = 2 ** -10; // spacing just above 1
    expect(roundF16(1 + ulp1 / 2)).toBe(1); // tie: to even (1)
    expect(roundF16(1 + (3 * ulp1) / 2)).toBe(1 + 2 * ulp1); // tie: to even (1 + 2 ulp)
    expect(roundF16(1 + ulp1 / 2 + 2 ** -20)).toBe(1 + ulp1); // above the tie
    expect(roundF16(2 ** -25)).toBe(0); // tie between 0 and the smallest subnormal: 0 (even)
    expect(roundF16(3 * 2 ** -25)).toBe(2 * 2 ** -24); // tie between 1 and 2 subnormal steps: 2
    expect(roundF16(2 ** -25 + 2 ** -30)).toBe(2 ** -24);
    expect(roundF16(2 ** -26)).toBe(0);
    expect(roundF16(2 ** -14 - 2 ** -26)).toBe(2 ** -14); // rounds up into the smallest normal
    expect(roundF16(65519)).toBe(65504);
    expect(roundF16(65520)).toBe(Infinity); // the tie above 65504 rounds to even: overflow
    expect(roundF16(-1e6)).toBe(-Infinity);
    expect(roundF16(2 ** -149)).toBe(0); // an f32 subnormal
  });

  it('is within 2⁻¹¹ relative of every normal value and 2⁻²⁵ absolute below', () => {
    const xs = [...randomArray(4000, 7, -70000, 70000), ...randomArray(4000, 8, -1e-3, 1e-3)];
    for (const x of xs) {
      const x32 = Math.fround(x);
      const r = roundF16(x32);
      if (Math.abs(x32) >= 65520) continue;
      const bound = Math.abs(x32) >= 2 ** -14 ? Math.abs(x32) * 2 ** -11 : 2 ** -25;
      expect(Math.abs(r - x32), `${x32}`).toBeLessThanOrEqual(bound);
      expect(roundF16(r)).toBe(r); // an f16 value is kept exactly
    }
  });

  it('round-trips every f16 bit pattern but the NaNs', () => {
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00 && h & 0x3ff) continue;
      expect(f16Bits(f16Value(h))).toBe(h);
    }
  });

  it('packs element 2j in the low half of word j and unpacks exactly', () => {
    const packed = packF16([1, -2, 0.5]);
    expect(packed.length).toBe(f16Words(3));
    expect([packed[0] & 0xffff, (packed[0] >>> 16) & 0xffff, packed[1] & 0xffff, packed[1] >>> 16]).toEqual([
      0x3c00, 0xc000, 0x3800, 0,
    ]);
    expect(Array.from(unpackF16(packed, 3))).toEqual([1, -2, 0.5]);
    expect(() => unpackF16(packed, 5)).toThrow(/packed has 2 words, needs ⌈n \/ 2⌉ = 3/);
  });
});
