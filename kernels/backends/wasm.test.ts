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

describe('wasm matmul over K in blocks', () => {
  // nn and tn go over K in blocks of 256 (tn packing A's rows per block): a sum split into calls at
  // k that are not block edges must still be the one call's sum bit for bit (passes, head chunks).
  for (const layout of ['nn', 'tn'] as const) {
    for (const first of [false, true])
      it(`${layout}${first ? ' +=' : ''}: K = 600 in one call and in calls of 100, 300 and 200 (then +=) give the same bits, 1 and 3 threads`, async () => {
        const [M, K, N] = [70, 600, 21];
        const a = Float32Array.from({ length: M * K }, (_, i) => Math.sin(i * 1.7));
        const b = Float32Array.from({ length: K * N }, (_, i) => Math.cos(i * 0.3));
        // The rows k0..k1 of the K dimension of A (nn: columns of A (M, K); tn: rows of A (K, M)) and of B.
        const aPart = (k0: number, k1: number) =>
          layout === 'tn'
            ? a.slice(k0 * M, k1 * M)
            : Float32Array.from(
                { length: M * (k1 - k0) },
                (_, i) => a[Math.floor(i / (k1 - k0)) * K + k0 + (i % (k1 - k0))],
              );
        const sums: Float32Array[] = [];
        for (const threads of [1, 3]) {
          const ops = await nodeWasmOps(threads, undefined, { partMinWork: 1 });
          try {
            for (const cuts of [
              [0, K],
              [0, 100, 400, K],
            ]) {
              const out = ops.alloc('out', M * N);
              ops.upload(
                out,
                Float32Array.from({ length: M * N }, (_, i) => i / 100),
              );
              for (let j = 0; j + 1 < cuts.length; j++) {
                const [k0, k1] = [cuts[j], cuts[j + 1]];
                const [ta, tb] = [ops.alloc('a', M * (k1 - k0)), ops.alloc('b', (k1 - k0) * N)];
                ops.upload(ta, aPart(k0, k1));
                ops.upload(tb, b.slice(k0 * N, k1 * N));
                ops.matmul(out, ta, tb, M, k1 - k0, N, layout, { accumulate: j > 0 || first });
              }
              sums.push(await ops.read(out));
            }
          } finally {
            ops.close();
          }
        }
        const cpu = createCpuOps();
        const [ca, cb, cout] = [cpu.alloc('a', M * K), cpu.alloc('b', K * N), cpu.alloc('out', M * N)];
        cpu.upload(ca, a);
        cpu.upload(cb, b);
        cpu.upload(
          cout,
          Float32Array.from({ length: M * N }, (_, i) => i / 100),
        );
        cpu.matmul(cout, ca, cb, M, K, N, layout, { accumulate: first });
        const ref = await cpu.read(cout);
        for (const s of sums.slice(1)) expect(Array.from(s)).toEqual(Array.from(sums[0]));
        for (let i = 0; i < M * N; i++) expect(Math.abs(sums[0][i] - ref[i])).toBeLessThan(1e-3);
      });
  }
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
