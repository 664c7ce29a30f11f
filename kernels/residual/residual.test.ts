import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import forwardSrc from './residual_forward.wgsl?raw';
import { ELEMENTWISE_BLOCK, accumulate, residualForward } from './residual';
import { accumulateRef, residualForwardRef } from './residual.ref';

const gpu = await testGpuOps();

// One f32 add per element on both sides: the results are bit-identical.
const EXACT = { atol: 0, rtol: 0 };
const SIZES = [1, 3, 1023, 1025, 1_000_003];

describe.runIf(gpu)('residual kernels on WebGPU vs the reference', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  it('residualForward on odd sizes and extreme ranges', async () => {
    for (const n of SIZES) {
      const a = randomArray(n, n, -1e30, 1e30);
      const b = randomArray(n, n + 1, -1e-3, 1e-3);
      const out = tensor('out', new Float32Array(n).fill(NaN));
      residualForward(gpu!.rt, out, tensor('a', a), tensor('b', b), n);
      const want = new Float32Array(n);
      residualForwardRef(want, a, b, n);
      expectClose(await gpu!.rt.read(out), want, { ...EXACT, label: `residualForward n=${n}` });
    }
  });

  it('accumulate adds into dst and leaves elements past n alone', async () => {
    for (const n of SIZES) {
      const dst0 = randomArray(n + 5, 2 * n, -100, 100);
      const src = randomArray(n, 2 * n + 1);
      const dst = tensor('dst', dst0);
      accumulate(gpu!.rt, dst, tensor('src', src), n);
      accumulate(gpu!.rt, dst, tensor('src2', src), n); // twice: += really accumulates
      const want = dst0.slice();
      accumulateRef(want, src, n);
      accumulateRef(want, src, n);
      expectClose(await gpu!.rt.read(dst), want, { ...EXACT, label: `accumulate n=${n}` });
    }
  });

  // The wrappers fold the workgroup count into 2-D only past 65535 groups (n > 67M), too big for
  // a test: dispatch the shader directly on a folded grid to check its group indexing.
  it('covers every element on a 2-D workgroup grid, including a partial last row of groups', async () => {
    const n = 5 * ELEMENTWISE_BLOCK + 3; // 6 groups on a 4 × 2 grid: two groups past the end
    const a = randomArray(n, 31);
    const b = randomArray(n, 32);
    const out = tensor('out', new Float32Array(n).fill(NaN));
    gpu!.rt.dispatch(
      { label: 'residual_forward', code: forwardSrc, constants: { WG: ELEMENTWISE_BLOCK / 4 } },
      new Uint32Array([n]),
      [tensor('a', a), tensor('b', b), out],
      [4, 2],
    );
    const want = new Float32Array(n);
    residualForwardRef(want, a, b, n);
    expectClose(await gpu!.rt.read(out), want, { ...EXACT, label: 'residual_forward on a 4 × 2 grid' });
  });

  it('refuses short buffers and aliasing outputs before dispatching', () => {
    const a = tensor('a', new Float32Array(4));
    const b = tensor('b', new Float32Array(3));
    const count = gpu!.rt.dispatchCount;
    expect(() => residualForward(gpu!.rt, b, a, a, 4)).toThrow(/out has 3 elements, needs n = 4/);
    expect(() => residualForward(gpu!.rt, a, a, b, 3)).toThrow(/output 'a' overlaps 'a'.*accumulate/);
    expect(() => accumulate(gpu!.rt, a, a, 4)).toThrow(/overlaps/);
    expect(gpu!.rt.dispatchCount).toBe(count);
  });
});
