import { describe, expect, it } from 'vitest';
import { nodeWasmBinary, nodeWasmOps } from '../wasm/node-wasm';
import { compareClose } from '../testing/expect-close';
import { bigCases, conformanceCases } from './conformance';
import { createCpuOps } from './cpu';
import { createWasmOps } from './wasm';

const binary = await nodeWasmBinary();

describe('wasm backend ≡ CPU references, op by op', () => {
  const cpu = createCpuOps();
  const wasm = createWasmOps(binary);
  for (const c of conformanceCases()) {
    it(c.name, async () => {
      const want = c.run(cpu);
      const got = c.run(wasm);
      for (const [name, t] of Object.entries(want)) {
        const r = compareClose(await wasm.read(got[name]), await cpu.read(t), {
          atol: c.atol,
          rtol: c.rtol,
          label: `${c.name}: ${name}`,
        });
        expect(r.ok, r.message).toBe(true);
      }
    });
  }
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
  it('passes the conformance cases and is bit-identical to one thread on shapes big enough to split', async () => {
    const mt = await nodeWasmOps(3);
    const one = createWasmOps(binary);
    try {
      expect(mt.threads).toBe(3);
      const cpu = createCpuOps();
      for (const c of conformanceCases()) {
        const want = c.run(cpu);
        const got = c.run(mt);
        for (const [name, t] of Object.entries(want)) {
          const r = compareClose(await mt.read(got[name]), await cpu.read(t), {
            atol: c.atol,
            rtol: c.rtol,
            label: `${c.name}: ${name}`,
          });
          expect(r.ok, r.message).toBe(true);
        }
      }
      for (const c of bigCases()) {
        const [a, b] = [c.run(one), c.run(mt)];
        for (const name of Object.keys(a))
          expect(Array.from(await mt.read(b[name])), `${c.name}: ${name}`).toEqual(Array.from(await one.read(a[name])));
      }
    } finally {
      mt.close();
    }
  });
});
