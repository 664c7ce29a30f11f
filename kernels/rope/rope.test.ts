import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { ropeBackward, ropeForward } from './rope';
import { ropeBackwardRef, ropeForwardRef } from './rope.ref';

const gpu = await testGpuOps();

// The GPU forms the angle a = pos · inv_freq in float32 (as transformers does), so its error
// grows with the position: about ulp(a) ≈ 1.2e-7 · pos radians, plus sin/cos error after range
// reduction. Outputs are compared relative to the input magnitude.
const tol = (maxPos: number, scale: number) => ({ atol: scale * (2e-6 + 1.2e-7 * maxPos), rtol: 1e-6 });

/** Seeded integer positions in [0, maxPos]. */
function randomPositions(N: number, seed: number, maxPos: number): Int32Array {
  const rand = mulberry32(seed);
  return Int32Array.from({ length: N }, () => Math.floor(rand() * (maxPos + 1)));
}

describe.runIf(gpu)('rope on WebGPU vs ropeRef', () => {
  afterAll(() => gpu?.ctx.device.destroy());

  async function check(N: number, NH: number, hs: number, theta: number, maxPos: number, scale = 1) {
    const ops = gpu!;
    const seed = N * 7919 + NH * 131 + hs;
    const size = N * NH * hs;
    const x = randomArray(size, seed, -scale, scale);
    const dy = randomArray(size, seed + 1, -scale, scale);
    const init = randomArray(size, seed + 2);
    const positions = randomPositions(N, seed + 3, maxPos);
    const { tensor, empty, destroyAll } = testTensors(ops);
    const [tx, tdy, tout, tdx] = [tensor('x', x), tensor('dy', dy), empty('out', size), tensor('dx', init)];
    const tpos = tensor('positions', positions);
    ropeForward(ops.rt, tout, tx, tpos, N, NH, hs, theta);
    ropeBackward(ops.rt, tdx, tdy, tpos, N, NH, hs, theta);
    const label = `N=${N} NH=${NH} hs=${hs} theta=${theta} pos<=${maxPos} scale=${scale}`;
    const wantOut = new Float32Array(size);
    ropeForwardRef(wantOut, x, positions, N, NH, hs, theta);
    const wantDx = init.slice();
    ropeBackwardRef(wantDx, dy, positions, N, NH, hs, theta);
    const t = tol(maxPos, scale);
    expectClose(await ops.rt.read(tout), wantOut, { ...t, label: `ropeForward ${label}` });
    expectClose(await ops.rt.read(tdx), wantDx, { ...t, atol: t.atol + 1e-6, label: `ropeBackward (+=) ${label}` });
    destroyAll();
  }

  it('matches on small and odd shapes, hs = 2 to 64', async () => {
    await check(1, 1, 2, 10000, 3);
    await check(13, 3, 8, 10000, 255);
    await check(7, 2, 6, 10000, 64);
    await check(33, 4, 16, 10000, 255);
    await check(5, 2, 64, 500000, 255);
  });

  it('stays accurate at long positions and on large-magnitude inputs', async () => {
    await check(64, 2, 32, 10000, 4095);
    await check(17, 3, 16, 500000, 255, 1000);
  });

  it('refuses an output that shares the input buffer, and bad sizes, before dispatching', () => {
    const ops = gpu!;
    const { empty, destroyAll } = testTensors(ops);
    const t = empty('qk', 16);
    const pos = empty('positions', 2);
    expect(() => ropeForward(ops.rt, t, t, pos, 2, 2, 4, 10000)).toThrow(/shares a buffer with inp/);
    expect(() => ropeForward(ops.rt, t, t, pos, 2, 2, 6, 10000)).toThrow(
      /out has 16 elements, needs N\*NH\*hs = 2\*2\*6 = 24/,
    );
    destroyAll();
  });
});
