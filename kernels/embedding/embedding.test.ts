import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import type { EmbeddingBackwardTuning } from './embedding';
import { embeddingBackward, embeddingBackwardTuning, embeddingForward } from './embedding';
import { embeddingBackwardRef, embeddingForwardRef } from './embedding.ref';

const gpu = await testGpuOps();

// The forward copies values: exact. The backward sums up to N rows in f32 (GPU, token order)
// against float64 (reference), onto an accumulator of magnitude ~1: atol per unit of |dout|,
// growing with the number of terms in the longest sum.
const GATHER_TOL = { atol: 0, rtol: 0 };
const sumTol = (terms: number) => ({ atol: 2e-7 * Math.max(terms, 4), rtol: 1e-6 });

/** Both work splits run on whatever adapter the tests have, plus a deliberately odd one. */
const TUNINGS = (V: number): [string, EmbeddingBackwardTuning][] => [
  ['software', embeddingBackwardTuning(V, true)],
  ['gpu', embeddingBackwardTuning(V, false)],
  ['odd', { ROWS: 3, LANES: 5, RANGES_PER_WG: 3 }],
];

function randomIds(N: number, V: number, seed: number): Int32Array {
  const rand = mulberry32(seed);
  return Int32Array.from({ length: N }, () => Math.floor(rand() * V));
}

/** The largest number of tokens sharing one id. */
function maxRepeats(ids: Int32Array): number {
  const counts = new Map<number, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

describe.runIf(gpu)('embedding kernels on WebGPU vs the reference', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  async function check(N: number, C: number, V: number, ids: Int32Array, lo = -1, hi = 1) {
    const seed = N * 7919 + C * 131 + V;
    const wte = randomArray(V * C, seed, lo, hi);
    const dout = randomArray(N * C, seed + 1, lo, hi);
    const dwte0 = randomArray(V * C, seed + 2);
    const tids = tensor('ids', ids);
    const out = tensor('out', new Float32Array(N * C).fill(NaN));
    embeddingForward(gpu!.rt, out, tids, tensor('wte', wte), N, C, V);
    const want = new Float32Array(N * C);
    embeddingForwardRef(want, ids, wte, N, C, V);
    expectClose(await gpu!.rt.read(out), want, { ...GATHER_TOL, label: `embeddingForward N=${N} C=${C} V=${V}` });
    const wantDwte = dwte0.slice();
    embeddingBackwardRef(wantDwte, dout, ids, N, C, V);
    const t = sumTol(maxRepeats(ids));
    const tdout = tensor('dout', dout);
    for (const [name, tuning] of TUNINGS(V)) {
      const dwte = tensor('dwte', dwte0);
      embeddingBackward(gpu!.rt, dwte, tdout, tids, N, C, V, tuning);
      expectClose(await gpu!.rt.read(dwte), wantDwte, {
        atol: t.atol * hi,
        rtol: t.rtol,
        label: `embeddingBackward (${name}) N=${N} C=${C} V=${V}`,
      });
    }
  }

  it('forward and backward (accumulating) on odd shapes', async () => {
    for (const [N, C, V] of [
      [1, 1, 1],
      [7, 33, 11],
      [64, 5, 300],
      [300, 20, 97],
    ])
      await check(N, C, V, randomIds(N, V, N + V));
  });

  it('backward sums ids repeated many times, in every position of a group of four ids', async () => {
    await check(1000, 33, 3, randomIds(1000, 3, 1)); // ~333 tokens per id
    await check(513, 7, 2, new Int32Array(513).fill(1)); // every token the same id
    await check(
      259,
      3,
      5,
      Int32Array.from({ length: 259 }, (_, n) => (n % 4 === 3 ? 4 : 0)),
    );
  });

  it('keeps accuracy for large-magnitude tables and gradients', async () => {
    await check(200, 9, 13, randomIds(200, 13, 2), -1e6, 1e6);
  });

  it('writes zero rows for ids outside 0..V-1 and skips them in the backward', async () => {
    const N = 8,
      C = 5,
      V = 6;
    const ids = Int32Array.of(-1, 2, V, 2147483647, -2147483648, 5, 0, V + 1);
    const valid = [...ids.keys()].filter((n) => ids[n] >= 0 && ids[n] < V);
    const wte = randomArray(V * C, 7);
    const dout = randomArray(N * C, 8);
    const tids = tensor('ids', ids);
    const out = tensor('out', new Float32Array(N * C).fill(NaN));
    embeddingForward(gpu!.rt, out, tids, tensor('wte', wte), N, C, V);
    // Expected: the reference on the valid tokens only, zero rows for the others.
    const validIds = Int32Array.from(valid, (n) => ids[n]);
    const want = new Float32Array(N * C);
    const wantValid = new Float32Array(valid.length * C);
    embeddingForwardRef(wantValid, validIds, wte, valid.length, C, V);
    valid.forEach((n, k) => want.set(wantValid.subarray(k * C, (k + 1) * C), n * C));
    expectClose(await gpu!.rt.read(out), want, { ...GATHER_TOL, label: 'forward with invalid ids' });
    const wantDwte = new Float32Array(V * C);
    const validDout = Float32Array.from(valid.flatMap((n) => [...dout.subarray(n * C, (n + 1) * C)]));
    embeddingBackwardRef(wantDwte, validDout, validIds, valid.length, C, V);
    const tdout = tensor('dout', dout);
    for (const [name, tuning] of TUNINGS(V)) {
      const dwte = tensor('dwte', new Float32Array(V * C));
      embeddingBackward(gpu!.rt, dwte, tdout, tids, N, C, V, tuning);
      expectClose(await gpu!.rt.read(dwte), wantDwte, {
        atol: 1e-6,
        rtol: 1e-6,
        label: `backward (${name}) with invalid ids`,
      });
    }
  });

  it('handles a vocabulary of more than 65535 rows, including its last rows', async () => {
    const V = 70_001;
    await check(5, 2, V, Int32Array.of(0, V - 1, 65_535, 65_536, V - 1));
  });

  it('refuses mismatched buffers before dispatching', () => {
    const small = tensor('small', new Float32Array(3));
    const ids = tensor('ids', new Int32Array(2));
    const count = gpu!.rt.dispatchCount;
    expect(() => embeddingForward(gpu!.rt, small, ids, small, 2, 2, 1)).toThrow(
      /out has 3 elements, needs N\*C = 2\*2 = 4/,
    );
    expect(() => embeddingBackward(gpu!.rt, small, small, ids, 1, 3, 2)).toThrow(
      /dwte has 3 elements, needs V\*C = 2\*3 = 6/,
    );
    expect(gpu!.rt.dispatchCount).toBe(count);
  });
});
