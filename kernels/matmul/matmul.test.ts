import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import type { MatmulLayout } from './layout';
import { MATMUL_LAYOUTS } from './layout';
import { chooseMatmulVariant, matmul, matmulNaive, matmulRegister, matmulTiled, registerVec4Fits } from './matmul';
import { matmulRef } from './matmul.ref';

const gpu = await testGpuOps();

// Float32 accumulation on the GPU against float64 accumulation in the reference: the error grows
// with K, so atol scales with it.
const tol = (K: number) => ({ atol: 2e-6 * Math.max(K, 1), rtol: 1e-5 });

const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [17, 33, 5],
  [65, 17, 130], // one past the 64-tile in M, two past in N
  [64, 64, 64],
  [3, 4099, 7], // large K, odd everything
  [130, 257, 66],
  [9, 7, 25], // one past the 8-block in M, N = 25 (the vocabulary), odd K
  [3, 1, 2], // K = 1: only the K % 4 remainder loop
  [70, 6, 3],
  [68, 12, 20], // multiples of 4 but not of 8: matmul_register_vec4 in every layout, clamped edges
  [68, 13, 20], // vec4 loads along m and n (tn) with a K % 4 remainder
  [4, 1, 4],
];
// Accumulation shapes: together they take both register paths in every layout.
const ACC_SHAPES: [number, number, number][] = [
  [33, 20, 70],
  [36, 20, 72],
  [36, 21, 72],
];

describe.runIf(gpu)('matmul on WebGPU vs matmulRef', () => {
  afterAll(() => gpu?.ctx.device.destroy());

  async function check(
    kernel: typeof matmulNaive,
    M: number,
    K: number,
    N: number,
    layout: MatmulLayout,
    accumulate: boolean,
    lo = -1,
    hi = 1,
  ) {
    const ops = gpu!;
    const seed = M * 7919 + K * 131 + N;
    const a = randomArray(M * K, seed, lo, hi);
    const b = randomArray(K * N, seed + 1, lo, hi);
    const init = randomArray(M * N, seed + 2);
    const { tensor, destroyAll } = testTensors(ops);
    const [ta, tb, tout] = [tensor('a', a), tensor('b', b), tensor('out', init)];
    kernel(ops.rt, tout, ta, tb, M, K, N, layout, accumulate);
    const got = await ops.rt.read(tout);
    const want = init.slice();
    matmulRef(want, a, b, M, K, N, layout, accumulate);
    const scale = Math.max(Math.abs(lo), Math.abs(hi)) ** 2;
    const t = tol(K);
    expectClose(got, want, {
      atol: t.atol * scale,
      rtol: t.rtol,
      label: `${kernel.name} ${layout} ${M}x${K}x${N}${accumulate ? ' +=' : ''}`,
    });
    destroyAll();
  }

  for (const kernel of [matmulNaive, matmulTiled, matmulRegister]) {
    for (const layout of MATMUL_LAYOUTS) {
      it(`${kernel.name} ${layout} on odd shapes`, async () => {
        for (const [M, K, N] of SHAPES) await check(kernel, M, K, N, layout, false);
      });
    }
    it(`${kernel.name} accumulates (+=) in every layout`, async () => {
      for (const layout of MATMUL_LAYOUTS) {
        for (const [M, K, N] of ACC_SHAPES) await check(kernel, M, K, N, layout, true);
      }
    });
    it(`${kernel.name} keeps relative accuracy on large-magnitude inputs`, async () => {
      await check(kernel, 40, 96, 72, 'nn', false, -1000, 1000);
    });
  }

  it('the shapes above take both matmul_register paths (scalar and vec4 loads) in every layout', () => {
    for (const layout of MATMUL_LAYOUTS) {
      for (const shapes of [SHAPES, ACC_SHAPES]) {
        const fits = shapes.map(([M, K, N]) => registerVec4Fits(M, K, N, layout));
        expect(fits, `${layout}`).toContain(true);
        expect(fits, `${layout}`).toContain(false);
      }
    }
  });

  it('matmul (auto) picks naive for tiny products, register otherwise, and both agree with the reference', async () => {
    expect([chooseMatmulVariant(2, 3, 2), chooseMatmulVariant(96, 32, 96), chooseMatmulVariant(1, 3072, 1)]).toEqual([
      'naive',
      'register',
      'naive',
    ]);
    await check((rt, o, a, b, M, K, N, l, acc) => matmul(rt, o, a, b, M, K, N, l, acc), 2, 3, 2, 'nn', false);
    await check((rt, o, a, b, M, K, N, l, acc) => matmul(rt, o, a, b, M, K, N, l, acc), 96, 32, 96, 'nt', false);
  });

  it('refuses mismatched buffers before dispatching', () => {
    const ops = gpu!;
    const { empty, destroyAll } = testTensors(ops);
    const t = empty('small', 3);
    expect(() => matmulTiled(ops.rt, t, t, t, 2, 2, 2, 'nn')).toThrow(/needs M\*N/);
    destroyAll();
  });
});
