import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { nodeWasmBinary, nodeWasmOps } from '../wasm/node-wasm';
import type { WasmBinaryFile } from '../wasm/node-wasm';
import { relaxedSimdAvailable } from '../wasm/simd';
import { bigCases, caseMismatches, conformanceCases } from './conformance';
import { createCpuOps } from './cpu';

// The relaxed-SIMD builds (fused multiply-adds) against the CPU references, as wasm.test.ts does
// the plain ones. Node 20 validates relaxed SIMD only behind V8's flag: turned on for this file's
// process (vitest runs each file in its own) before any module compiles; Chrome has it by default.
if (!relaxedSimdAvailable()) setFlagsFromString('--experimental-wasm-relaxed-simd');

/** Where an f32x4.relaxed_madd instruction (0xfd 0x85 0x02) sits in a binary's bytes, or -1. */
function relaxedMaddAt(bytes: Uint8Array): number {
  for (let i = 0; i + 2 < bytes.length; i++)
    if (bytes[i] === 0xfd && bytes[i + 1] === 0x85 && bytes[i + 2] === 0x02) return i;
  return -1;
}

describe('wasm relaxed-SIMD builds', () => {
  it('hold fused multiply-adds, the plain builds none, and say which they are', async () => {
    const files: [WasmBinaryFile, boolean][] = [
      ['ops.wasm', false],
      ['ops-mt.wasm', false],
      ['ops-relaxed.wasm', true],
      ['ops-mt-relaxed.wasm', true],
    ];
    for (const [file, relaxed] of files) expect(relaxedMaddAt(await nodeWasmBinary(file)) >= 0, file).toBe(relaxed);
    expect(relaxedSimdAvailable()).toBe(true);
    const [plain, fused] = [await nodeWasmOps(1, 'plain'), await nodeWasmOps(1)];
    expect([plain.simd, fused.simd]).toEqual(['plain', 'relaxed']);
  });

  it('pass the conformance cases on one thread and on three, the threaded bit for bit the single', async () => {
    const cpu = createCpuOps();
    const one = await nodeWasmOps(1, 'relaxed');
    const mt = await nodeWasmOps(3, 'relaxed', { partMinWork: 1 }); // every op that can split splits
    try {
      expect(mt.simd).toBe('relaxed');
      for (const c of conformanceCases()) {
        expect(await caseMismatches(c, one, cpu)).toEqual([]);
        expect(await caseMismatches(c, mt, cpu)).toEqual([]);
      }
      for (const c of bigCases()) expect(await caseMismatches(c, mt, one, true)).toEqual([]);
    } finally {
      mt.close();
    }
  });
});
