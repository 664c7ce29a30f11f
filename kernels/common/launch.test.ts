import { describe, expect, it } from 'vitest';
import { checkDisjoint, flatGrid, strideGroups } from './launch';
import type { GpuTensor } from './tensor';

describe('flatGrid', () => {
  it('stays 1-D under the limit and folds into 2-D above it, covering every group', () => {
    expect(flatGrid(5, 65535)).toEqual([5, 1]);
    expect(flatGrid(0, 8)).toEqual([0, 1]);
    for (const groups of [9, 16, 17, 63, 64]) {
      const [x, y] = flatGrid(groups, 8);
      expect(x).toBeLessThanOrEqual(8);
      expect(y).toBeLessThanOrEqual(8);
      expect(x * y).toBeGreaterThanOrEqual(groups);
      expect(x * (y - 1)).toBeLessThan(groups); // no wholly empty row of workgroups
    }
    expect(() => flatGrid(65, 8)).toThrow(/exceed 8²/);
  });
});

describe('strideGroups', () => {
  it('gives about perInvocation elements per invocation, capped at maxGroups', () => {
    expect(strideGroups(0, 64, 16, 4096)).toBe(0);
    expect(strideGroups(1, 64, 16, 4096)).toBe(1);
    expect(strideGroups(1024, 64, 16, 4096)).toBe(1);
    expect(strideGroups(1025, 64, 16, 4096)).toBe(2);
    expect(strideGroups(1e9, 64, 16, 4096)).toBe(4096);
  });
});

describe('checkDisjoint', () => {
  // Only identity, offset and length matter here: stand-in buffers, no device.
  const [A, B] = [{ label: 'A' }, { label: 'B' }] as unknown as GPUBuffer[];
  const view = (label: string, buffer: GPUBuffer, offset: number, length: number): GpuTensor => ({
    buffer,
    offset,
    length,
    label,
  });

  it('accepts separate buffers, and outputs at disjoint ranges of one buffer', () => {
    expect(() => checkDisjoint('op', { out: view('o', A, 0, 4) }, { inp: view('i', B, 0, 4) })).not.toThrow();
    expect(() =>
      checkDisjoint('op', { dq: view('dq', A, 0, 64), dk: view('dk', A, 256, 64) }, { q: view('q', B, 0, 64) }),
    ).not.toThrow();
    // Inputs may share a buffer, even overlap: they are only read.
    expect(() =>
      checkDisjoint('op', { out: view('o', A, 0, 4) }, { a: view('a', B, 0, 4), b: view('b', B, 0, 4) }),
    ).not.toThrow();
  });

  it('refuses an output sharing a buffer with an input, overlapping or not', () => {
    expect(() => checkDisjoint('op', { out: view('o', A, 0, 4) }, { inp: view('i', A, 0, 4) })).toThrow(
      /op: out \('o'\) shares a buffer with inp \('i'\), and output 'o' overlaps 'i'/,
    );
    expect(() => checkDisjoint('op', { out: view('o', A, 0, 4) }, { inp: view('i', A, 256, 4) })).toThrow(
      /op: out \('o'\) shares a buffer with inp \('i'\), at disjoint ranges \(offsets 0 and 256\)/,
    );
  });

  it('refuses overlapping outputs, counting an empty binding as 4 bytes', () => {
    expect(() => checkDisjoint('op', { dq: view('dq', A, 0, 64), dk: view('dk', A, 128, 64) }, {})).toThrow(
      /op: output 'dq' overlaps 'dk' \(dq and dk: same buffer, offsets 0 and 128\)/,
    );
    expect(() => checkDisjoint('op', { a: view('a', A, 0, 0), b: view('b', A, 0, 0) }, {})).toThrow(
      /output 'a' overlaps 'b'/,
    );
    expect(() => checkDisjoint('op', { a: view('a', A, 0, 1), b: view('b', A, 4, 1) }, {})).not.toThrow();
  });
});
