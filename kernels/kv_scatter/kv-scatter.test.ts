import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { testBackends } from '../common/node-test-gpu';
import type { Ops } from '../ops';
import { kvScatterRef } from './kv-scatter.ref';

// Every backend through `Ops` (cpu: the reference itself; wasm: the AssemblyScript export; webgpu:
// kv_scatter.wgsl) against kvScatterRef. A copy is exact: compared bit for bit.
const { backends, wasm, gpu } = await testBackends();

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

/** Seeded slots in 0..L−1 with 0 and L−1 among them (when B ≥ 2). */
function randomSlots(B: number, L: number, seed: number): number[] {
  const rand = mulberry32(seed);
  return Array.from({ length: B }, (_, b) => (b === 0 ? L - 1 : b === 1 ? 0 : Math.floor(rand() * L)));
}

/** Runs kvScatter on `ops` over a seeded cache; returns the cache it read back and the reference's. */
async function run(ops: Ops, B: number, L: number, KV: number, slots: number[], rows = randomArray(B * KV, B + KV)) {
  const cache = randomArray(B * L * KV, B * 31 + L * 7 + KV, -5, 5);
  const tc = ops.alloc('cache', cache.length);
  const tr = ops.alloc('rows', rows.length);
  const ts = ops.alloc('slots', B, 'i32');
  ops.upload(tc, cache);
  ops.upload(tr, rows);
  ops.upload(ts, slots);
  const want = cache.slice();
  ops.kvScatter(tc, tr, ts, B, L, KV);
  const got = await ops.read(tc);
  for (const t of [tc, tr, ts]) ops.free(t);
  return { got, want, cache };
}

describe.each(backends)('kvScatter on %s vs kvScatterRef', (name, make) => {
  afterAll(() => {
    if (name === 'webgpu') gpu?.ctx.device.destroy();
    if (name === 'wasm') wasm.close();
  });

  it('writes each row at its slot, bit for bit, and nothing else (odd shapes, the model shapes)', async () => {
    for (const [B, L, KV] of [
      [1, 1, 1],
      [3, 5, 7],
      [2, 4, 257],
      [64, 33, 128],
      [128, 40, 64],
    ]) {
      const slots = randomSlots(B, L, B * L);
      const { got, want } = await run(make(), B, L, KV, slots);
      kvScatterRef(want, randomArray(B * KV, B + KV), slots, B, L, KV);
      expect(bits(got), `${name} B=${B} L=${L} KV=${KV}`).toEqual(bits(want));
    }
  });

  it('copies -0, NaN, infinities and subnormals unchanged', async () => {
    const rows = Float32Array.of(-0, NaN, Infinity, -Infinity, 1e-45, -1.1754942e-38, 3.5, -2);
    const { got, want } = await run(make(), 2, 3, 4, [2, 1], rows);
    kvScatterRef(want, rows, [2, 1], 2, 3, 4);
    expect(bits(got)).toEqual(bits(want));
  });

  it('refuses a slot outside 0..L−1 (cpu, wasm) or skips that row (webgpu, which cannot check it)', async () => {
    const ops = make();
    const [B, L, KV] = [3, 4, 5];
    if (name === 'webgpu') {
      const { got, want, cache } = await run(ops, B, L, KV, [4, 1, -1]);
      // Rows 0 and 2 have bad slots and leave the cache as it was; row 1 lands at slot 1.
      want.set(randomArray(B * KV, B + KV).subarray(KV, 2 * KV), (1 * L + 1) * KV);
      expect(bits(got)).toEqual(bits(want));
      expect(bits(got.subarray(0, L * KV))).toEqual(bits(cache.subarray(0, L * KV)));
    } else {
      await expect(run(ops, B, L, KV, [4, 1, 0])).rejects.toThrow(/slots\[0\] = 4 is outside 0..L−1 = 0..3/);
      await expect(run(ops, B, L, KV, [0, 1, -1])).rejects.toThrow(/slots\[2\] = -1/);
    }
  });
});
