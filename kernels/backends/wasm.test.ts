import { describe, expect, it } from 'vitest';
import { nodeWasmBinary, nodeWasmOps } from '../wasm/node-wasm';
import { relaxedSimdAvailable } from '../wasm/simd';
import { bigCases, caseMismatches, conformanceCases } from './conformance';
import { createCpuOps } from './cpu';
import { createWasmOps } from './wasm';

const binary = await nodeWasmBinary();

describe('wasm backend ≡ CPU references, op by op', () => {
  const cpu = createCpuOps();
  const wasm = createWasmOps(binary);
  for (const c of conformanceCases()) it(c.name, async () => expect(await caseMismatches(c, wasm, cpu)).toEqual([]));
});

describe('wasm SIMD builds', () => {
  it('runs the plain build here unless the engine has relaxed SIMD (kernels/wasm/simd.ts; wasm-relaxed.test.ts runs the other)', async () => {
    expect(createWasmOps(binary).simd).toBe('plain');
    const ops = await nodeWasmOps(1);
    expect(ops.simd).toBe(relaxedSimdAvailable() ? 'relaxed' : 'plain');
  });
});

describe('wasm backend memory', () => {
  it('reuses freed blocks, keeps data across memory growth and refuses freed tensors', async () => {
    const ops = createWasmOps(binary);
    const a = ops.alloc('a', 1000);
    ops.upload(
      a,
      Array.from({ length: 1000 }, (_, i) => i),
    );
    const b = ops.alloc('b', 10);
    ops.upload(b, new Array(10).fill(7)); // a reused block holds them until alloc zeroes it
    ops.free(b);
    const c = ops.alloc('c', 10);
    expect((c as unknown as { ptr: number }).ptr).toBe((b as unknown as { ptr: number }).ptr);
    const big = ops.alloc('big', 8 << 20); // 32 MiB: grows the memory
    expect(Array.from((await ops.read(a)).slice(995))).toEqual([995, 996, 997, 998, 999]);
    expect(Array.from(await ops.read(c))).toEqual(new Array(10).fill(0));
    ops.free(big);
    expect(() => ops.zero(big)).toThrow(/was freed/);
    expect(() => ops.free(big)).toThrow(/was freed/);
    expect(ops.memoryStats().peakBytes).toBeGreaterThanOrEqual(32 << 20);
  });
});

describe('multi-threaded wasm backend (worker_threads over a shared memory)', () => {
  it('passes the conformance cases and is bit-identical to one thread, every op that can split split', async () => {
    const mt = await nodeWasmOps(3, undefined, { partMinWork: 1 });
    const one = createWasmOps(binary);
    try {
      expect(mt.threads).toBe(3);
      const cpu = createCpuOps();
      for (const c of conformanceCases()) expect(await caseMismatches(c, mt, cpu)).toEqual([]);
      for (const c of bigCases()) expect(await caseMismatches(c, mt, one, true)).toEqual([]);
      expect(mt.splitStats().split).toBeGreaterThan(0);
    } finally {
      mt.close();
    }
  });

  it('splits an op only when each thread gets 2²¹ multiply-adds of it, and says so', async () => {
    const mt = await nodeWasmOps(3);
    try {
      expect(mt.splitPolicy).toMatch(
        /splits across up to 3 threads when each gets ≥ 2\.1M multiply-adds of it, .*the threshold doubles/,
      );
      /** How many of `ops` matmuls (M, K, N) split. */
      const splits = (M: number, K: number, N: number): number => {
        const [a, b, out] = [mt.alloc('a', M * K), mt.alloc('b', N * K), mt.alloc('out', M * N)];
        const before = mt.splitStats();
        mt.matmul(out, a, b, M, K, N, 'nt');
        const after = mt.splitStats();
        [a, b, out].forEach((t) => mt.free(t));
        expect(after.ops - before.ops).toBe(1);
        return after.split - before.split;
      };
      // A 100k model's decoding matmuls (128 rows) stay whole; a training pass's (1500 rows) split.
      expect([splits(128, 64, 64), splits(128, 64, 176), splits(1500, 64, 176)]).toEqual([0, 0, 1]);
      expect(splits(2 * 64, 128, 256)).toBe(1); // 4.2M: exactly two threads' worth
      expect(splits(2 * 64, 128, 255)).toBe(0);
      expect((await nodeWasmOps(1)).splitPolicy).toMatch(/^one thread/);
    } finally {
      mt.close();
    }
  });
});
