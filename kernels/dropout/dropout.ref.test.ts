import { describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { dropoutRef, dropoutScalars, kept, mix32 } from './dropout.ref';

describe('dropout reference', () => {
  it('mix32 is lowbias32 (known values) and a bijection on a sample', () => {
    // Computed from the published definition with 64-bit integers (x ^= x >> 16; x *= 0x7feb352d; ...).
    expect(mix32(0)).toBe(0);
    expect(mix32(1)).toBe(manual(1));
    expect(mix32(0xdeadbeef)).toBe(manual(0xdeadbeef));
    const seen = new Set<number>();
    for (let i = 0; i < 10000; i++) seen.add(mix32(i));
    expect(seen.size).toBe(10000);
  });

  it('keeps about 1 − p of the elements, scaled by 1/(1 − p), and zeroes the rest', () => {
    const n = 200_000;
    const x = randomArray(n, 1, 0.5, 1.5);
    for (const p of [0.05, 0.1, 0.5]) {
      const out = new Float32Array(n);
      dropoutRef(out, x, n, { p, seed: 7, offset: 0 });
      let keptN = 0;
      let wrong = 0;
      const scale = Math.fround(1 / (1 - p));
      for (let i = 0; i < n; i++) {
        if (out[i] === 0) continue;
        keptN++;
        if (out[i] !== Math.fround(x[i] * scale)) wrong++;
      }
      expect(wrong).toBe(0);
      const sd = Math.sqrt((n * p * (1 - p)) / n ** 2);
      expect(Math.abs(keptN / n - (1 - p))).toBeLessThan(5 * sd);
    }
  });

  it('is identity at p = 0; the same seed and offset draw the same mask, another seed another', () => {
    const n = 1000;
    const x = randomArray(n, 2);
    const same = new Float32Array(n);
    dropoutRef(same, x, n, { p: 0, seed: 3, offset: 0 });
    expect(Array.from(same)).toEqual(Array.from(x));
    const [a, b, c] = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
    dropoutRef(a, x, n, { p: 0.3, seed: 3, offset: 0 });
    dropoutRef(b, x, n, { p: 0.3, seed: 3, offset: 0 });
    dropoutRef(c, x, n, { p: 0.3, seed: 4, offset: 0 });
    expect(Array.from(b)).toEqual(Array.from(a));
    expect(Array.from(c)).not.toEqual(Array.from(a));
  });

  it('at an offset draws the tail of the longer sequence (a batch in passes keeps its masks)', () => {
    const n = 1000;
    const x = randomArray(n, 5);
    const whole = new Float32Array(n);
    dropoutRef(whole, x, n, { p: 0.4, seed: 9, offset: 100 });
    const tail = new Float32Array(n - 300);
    dropoutRef(tail, x.subarray(300), n - 300, { p: 0.4, seed: 9, offset: 400 });
    expect(Array.from(tail)).toEqual(Array.from(whole.subarray(300)));
    const { key, threshold } = dropoutScalars('t', { p: 0.4, seed: 9, offset: 0 });
    expect(whole[0] !== 0).toBe(kept(key, 100, threshold));
  });

  it('accumulates onto out when asked', () => {
    const n = 64;
    const x = randomArray(n, 6);
    const out = new Float32Array(n).fill(1);
    const masked = new Float32Array(n);
    dropoutRef(masked, x, n, { p: 0.5, seed: 1, offset: 0 });
    dropoutRef(out, x, n, { p: 0.5, seed: 1, offset: 0, accumulate: true });
    expect(Array.from(out)).toEqual(Array.from(masked, (v) => Math.fround(1 + v)));
  });

  it('refuses p outside [0, 1) and seeds or offsets that are not unsigned 32-bit integers, naming them', () => {
    const t = new Float32Array(4);
    expect(() => dropoutRef(t, t, 4, { p: 1, seed: 0, offset: 0 })).toThrow(/p must be in \[0, 1\), got 1/);
    expect(() => dropoutRef(t, t, 4, { p: -0.1, seed: 0, offset: 0 })).toThrow(/p must be/);
    expect(() => dropoutRef(t, t, 4, { p: 0.1, seed: -1, offset: 0 })).toThrow(
      /seed must be an unsigned 32-bit integer/,
    );
    expect(() => dropoutRef(t, t, 4, { p: 0.1, seed: 0, offset: 2 ** 32 })).toThrow(/offset must be/);
    expect(() => dropoutRef(t, t, 5, { p: 0.1, seed: 0, offset: 0 })).toThrow(/needs n = 5/);
  });
});

/** lowbias32 in BigInt arithmetic, independent of Math.imul. */
function manual(v: number): number {
  const M = (1n << 32n) - 1n;
  let x = BigInt(v);
  x ^= x >> 16n;
  x = (x * 0x7feb352dn) & M;
  x ^= x >> 15n;
  x = (x * 0x846ca68bn) & M;
  x ^= x >> 16n;
  return Number(x);
}
