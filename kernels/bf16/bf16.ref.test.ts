import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { bf16Words, packBf16, unpackBf16, widenBf16Ref } from './bf16.ref';

const f32 = (bits: number) => new Float32Array(Uint32Array.of(bits).buffer)[0];

describe('bf16 storage', () => {
  it('keeps values a bf16 holds exactly, rounds the rest to the nearest (ties to even), within 2⁻⁸ relative', () => {
    const exact = [0, -0, 1, -2, 0.5, 3.140625, 65280, -1e-30 * 0, Infinity, -Infinity, f32(0x3f810000)];
    expect(Array.from(unpackBf16(packBf16(exact), exact.length))).toEqual(exact);
    // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: to even (1); 1 + 3·2⁻⁸ halfway to 1 + 2⁻⁶: to even (1 + 2⁻⁶).
    const ties = [f32(0x3f808000), f32(0x3f818000), f32(0x3f808001)];
    expect(Array.from(unpackBf16(packBf16(ties), 3))).toEqual([1, f32(0x3f820000), f32(0x3f810000)]);
    expect(Number.isNaN(unpackBf16(packBf16([NaN]), 1)[0])).toBe(true);
    const x = randomArray(10_001, 3, -50, 50);
    const back = unpackBf16(packBf16(x), x.length);
    let worst = 0;
    for (let i = 0; i < x.length; i++)
      if (x[i] !== 0) worst = Math.max(worst, Math.abs(back[i] - x[i]) / Math.abs(x[i]));
    expect(worst).toBeLessThanOrEqual(2 ** -8);
    expect(worst).toBeGreaterThan(2 ** -10); // it does round
  });

  it('packs two to a word, element 2j in the low half; widening gives the values back exactly', () => {
    const packed = packBf16([1, -2, 0.5]);
    expect(packed.length).toBe(bf16Words(3));
    expect([packed[0] & 0xffff, (packed[0] >>> 16) & 0xffff, packed[1]]).toEqual([0x3f80, 0xc000, 0x3f00]);
    const out = new Float32Array(4).fill(7);
    widenBf16Ref(out, packed, 3);
    expect(Array.from(out)).toEqual([1, -2, 0.5, 7]);
    expect(() => widenBf16Ref(out, packed, 5)).toThrow(/needs n = 5/);
    expect(() => widenBf16Ref(new Float32Array(5), packed, 5)).toThrow(/packed has 2 words, needs ⌈n \/ 2⌉ = 3/);
  });
});
