import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import type { RmsnormVariant } from './rmsnorm';
import { rmsnormBackward, rmsnormForward, rmsnormForwardKernel } from './rmsnorm';
import { rmsnormBackwardRef, rmsnormForwardRef } from './rmsnorm.ref';

const gpu = await testGpuOps();

// f32 sums over a row (C terms) or a column (N terms) on the GPU against float64: the error
// grows with the number of terms. Values are relative to unit-scale outputs and gradients.
const rowTol = (C: number) => ({ atol: 1e-6 * Math.sqrt(C), rtol: 2e-5 });
const colTol = (N: number) => ({ atol: 2e-6 * Math.max(N, 1), rtol: 2e-5 });
const EPS = 1e-5;

interface Case {
  N: number;
  C: number;
  inp: Float32Array;
  weight: Float32Array;
  dout: Float32Array;
  dinp0: Float32Array;
  dweight0: Float32Array;
}

function randomCase(N: number, C: number, accumulate: boolean, rowScale: (n: number) => number = () => 1): Case {
  const seed = N * 7919 + C;
  const inp = randomArray(N * C, seed, -2, 2).map((x, i) => x * rowScale(Math.floor(i / C)));
  return {
    N,
    C,
    inp,
    weight: randomArray(C, seed + 1, 0.5, 1.5),
    dout: randomArray(N * C, seed + 2),
    dinp0: accumulate ? randomArray(N * C, seed + 3) : new Float32Array(N * C),
    dweight0: accumulate ? randomArray(C, seed + 4) : new Float32Array(C),
  };
}

// The forward's two kernels: one invocation per row, and one workgroup per row reduced with
// subgroupAdd (where the device has `subgroups`: SwiftShader does). Both sum the C squares in f32,
// in different orders, so both meet the same row tolerance.
const subgroups = gpu?.ctx.adapter.features.includes('subgroups') ?? false;
const VARIANTS: RmsnormVariant[] = subgroups ? ['row', 'subgroup'] : ['row'];
if (gpu && !subgroups) console.warn('[gpu] no subgroups feature: the subgroup rmsnorm is not tested');

describe.runIf(gpu).each(VARIANTS)('rmsnorm kernels on WebGPU vs the reference (%s forward)', (variant) => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => destroyAll());

  /** Runs forward and backward on the GPU and returns both sides' results. */
  async function run({ N, C, inp, weight, dout, dinp0, dweight0 }: Case) {
    const [out, rstd] = [
      tensor('out', new Float32Array(N * C).fill(NaN)),
      tensor('rstd', new Float32Array(N).fill(NaN)),
    ];
    const [tinp, tweight] = [tensor('inp', inp), tensor('weight', weight)];
    const [dinp, dweight] = [tensor('dinp', dinp0), tensor('dweight', dweight0)];
    rmsnormForward(gpu!.rt, out, rstd, tinp, tweight, N, C, EPS, variant);
    rmsnormBackward(gpu!.rt, dinp, dweight, tensor('dout', dout), tinp, tweight, rstd, N, C);
    const want = {
      out: new Float32Array(N * C),
      rstd: new Float32Array(N),
      dinp: dinp0.slice(),
      dweight: dweight0.slice(),
    };
    rmsnormForwardRef(want.out, want.rstd, inp, weight, N, C, EPS);
    rmsnormBackwardRef(want.dinp, want.dweight, dout, inp, weight, want.rstd, N, C);
    const got = {
      out: await gpu!.rt.read(out),
      rstd: await gpu!.rt.read(rstd),
      dinp: await gpu!.rt.read(dinp),
      dweight: await gpu!.rt.read(dweight),
    };
    return { got, want };
  }

  it('forward and backward (accumulating) on odd shapes', async () => {
    for (const [N, C] of [
      [1, 1],
      [1, 33],
      [7, 33],
      [64, 7],
      [130, 300],
      [5, 1000],
    ]) {
      const { got, want } = await run(randomCase(N, C, true));
      const label = `N=${N} C=${C}`;
      expectClose(got.out, want.out, { ...rowTol(C), label: `out ${label}` });
      expectClose(got.rstd, want.rstd, { ...rowTol(C), label: `rstd ${label}` });
      expectClose(got.dinp, want.dinp, { ...rowTol(C), label: `dinp ${label}` });
      expectClose(got.dweight, want.dweight, { ...colTol(N), label: `dweight ${label}` });
    }
  });

  it('keeps relative accuracy for rows from 1e-15 to 1e15 in magnitude', async () => {
    const N = 9,
      C = 33;
    const scales = [1e15, 1e-15, 1e10, 1e-10, 1e5, 1, 1e-3, 3e17, 1e-30];
    const { got, want } = await run(randomCase(N, C, false, (n) => scales[n]));
    expectClose(got.out, want.out, { ...rowTol(C), label: 'out, extreme rows' });
    expectClose(got.rstd, want.rstd, { atol: 0, rtol: 2e-5, label: 'rstd, extreme rows' });
    // dinp scales like rstd: compare each row relative to its own scale.
    for (let n = 0; n < N; n++) {
      const row = (a: Float32Array) => a.subarray(n * C, (n + 1) * C);
      expectClose(row(got.dinp), row(want.dinp), {
        atol: 1e-5 * want.rstd[n],
        rtol: 2e-5,
        label: `dinp row ${n} (scale ${scales[n]})`,
      });
    }
    expectClose(got.dweight, want.dweight, { ...colTol(N), label: 'dweight, extreme rows' });
  });

  it('refuses mismatched or aliasing buffers before dispatching', () => {
    const a = tensor('a', new Float32Array(6));
    const b = tensor('b', new Float32Array(2));
    const count = gpu!.rt.dispatchCount;
    expect(() => rmsnormForward(gpu!.rt, a, b, a, b, 3, 2, EPS)).toThrow(/rstd has 2 elements, needs N = 3/);
    expect(() => rmsnormForward(gpu!.rt, a, b, a, b, 2, 2, EPS)).toThrow(/output 'a' overlaps 'a'/);
    expect(() => rmsnormBackward(gpu!.rt, a, b, a, a, b, b, 3, 2)).toThrow(/rstd has 2 elements, needs N = 3/);
    expect(gpu!.rt.dispatchCount).toBe(count);
  });
});

describe('rmsnormForwardKernel', () => {
  it('auto takes the subgroup kernel where the dispatcher uses subgroups, an explicit variant as it is', () => {
    expect(rmsnormForwardKernel('auto', true)).toBe('subgroup');
    expect(rmsnormForwardKernel('auto', false)).toBe('row');
    expect(rmsnormForwardKernel('row', true)).toBe('row');
    expect(rmsnormForwardKernel('subgroup', false)).toBe('subgroup');
  });
});

describe.runIf(gpu)('the GPU device', () => {
  afterAll(() => gpu?.ctx.device.destroy());
  it('saw no uncaptured error', () => expect(gpu!.ctx.errors.map((e) => e.message)).toEqual([]));
});
