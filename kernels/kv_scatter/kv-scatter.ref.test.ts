import { describe, expect, it } from 'vitest';
import { kvScatterRef } from './kv-scatter.ref';

describe('kvScatterRef', () => {
  it('writes each row at its own slot and leaves every other element as it was', () => {
    // B = 3 rows of L = 3 slots, KV = 2; 9 marks the untouched elements.
    const cache = new Float32Array(18).fill(9);
    const rows = [1, 2, 3, 4, 5, 6];
    kvScatterRef(cache, rows, Int32Array.of(2, 0, 1), 3, 3, 2);
    expect(Array.from(cache)).toEqual([9, 9, 9, 9, 1, 2, 3, 4, 9, 9, 9, 9, 9, 9, 5, 6, 9, 9]);
  });

  it('copies values bit for bit: -0, NaN, infinities, subnormals', () => {
    const rows = Float32Array.of(-0, NaN, Infinity, -Infinity, 1e-45, -3.5);
    const cache = new Float32Array(2 * 2 * 3).fill(7);
    kvScatterRef(cache, rows, [1, 0], 2, 2, 3);
    const want = Float32Array.of(7, 7, 7, -0, NaN, Infinity, -Infinity, 1e-45, -3.5, 7, 7, 7);
    expect(new Uint32Array(cache.buffer)).toEqual(new Uint32Array(want.buffer));
  });

  it('does nothing for B = 0 or KV = 0', () => {
    const cache = new Float32Array(4).fill(3);
    kvScatterRef(cache, [], [], 0, 2, 2);
    kvScatterRef(cache, [], [0, 1], 2, 2, 0);
    expect(Array.from(cache)).toEqual([3, 3, 3, 3]);
  });

  it('refuses slots outside 0..L−1, short buffers and bad dimensions', () => {
    const cache = new Float32Array(12);
    const rows = new Float32Array(4);
    expect(() => kvScatterRef(cache, rows, [0, 3], 2, 3, 2)).toThrow(/slots\[1\] = 3 is outside 0..L−1 = 0..2/);
    expect(() => kvScatterRef(cache, rows, [-1, 0], 2, 3, 2)).toThrow(/slots\[0\] = -1/);
    expect(() => kvScatterRef(cache, rows, [0.5, 0], 2, 3, 2)).toThrow(/slots\[0\] = 0.5/);
    expect(() => kvScatterRef(cache, rows, [0, 1], 2, 4, 2)).toThrow(
      /cache has 12 elements, needs B\*L\*KV = 2\*4\*2 = 16/,
    );
    expect(() => kvScatterRef(new Float32Array(18), rows, [0, 1], 2, 3, 3)).toThrow(
      /rows has 4 elements, needs B\*KV = 2\*3 = 6/,
    );
    expect(() => kvScatterRef(cache, rows, [0], 2, 3, 2)).toThrow(/slots has 1 elements, needs B = 2/);
    expect(() => kvScatterRef(cache, rows, [0, 1], 2, 1.5, 2)).toThrow(/L must be a non-negative integer, got 1.5/);
  });
});
