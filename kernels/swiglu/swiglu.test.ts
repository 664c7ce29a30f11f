import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { swigluBackward, swigluForward } from './swiglu';
import { swigluBackwardRef, swigluForwardRef } from './swiglu.ref';

const gpu = await testGpuOps();

// f32 exp/division on the GPU against float64 in the reference: a few ulp per element.
const TOL = { atol: 1e-6, rtol: 2e-5 };
// Gates spread over ±1e-30..1e30: relative error only (outputs range over 60 decades); for
// moderately negative gates e^g itself has a relative error that grows with |g| (WGSL allows
// 3 + 2|x| ulp for exp), hence the looser rtol.
const EXTREME_TOL = { atol: 1e-30, rtol: 2e-4 };

/** Values ±10^u with u uniform in [-30, 30): magnitudes across the whole f32 range. */
function extremeArray(n: number, seed: number): Float32Array {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (rand() < 0.5 ? -1 : 1) * 10 ** (60 * rand() - 30));
}

describe.runIf(gpu)('swiglu kernels on WebGPU vs the reference', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  /** `accumulateOnto`: start the gradients from random values (tests +=) or from zeros. */
  async function check(
    n: number,
    gate: Float32Array,
    tol: { atol: number; rtol: number },
    what: string,
    accumulateOnto: boolean,
  ) {
    const up = randomArray(n, n + 1, -2, 2);
    const dout = randomArray(n, n + 2);
    const dgate0 = accumulateOnto ? randomArray(n, n + 3) : new Float32Array(n);
    const dup0 = accumulateOnto ? randomArray(n, n + 4) : new Float32Array(n);
    const out = tensor('out', new Float32Array(n).fill(NaN));
    const [tg, tu] = [tensor('gate', gate), tensor('up', up)];
    const [dgate, dup] = [tensor('dgate', dgate0), tensor('dup', dup0)];
    swigluForward(gpu!.rt, out, tg, tu, n);
    swigluBackward(gpu!.rt, dgate, dup, tensor('dout', dout), tg, tu, n);
    const want = new Float32Array(n);
    swigluForwardRef(want, gate, up, n);
    const wantDgate = dgate0.slice();
    const wantDup = dup0.slice();
    swigluBackwardRef(wantDgate, wantDup, dout, gate, up, n);
    expectClose(await gpu!.rt.read(out), want, { ...tol, label: `swigluForward ${what} n=${n}` });
    expectClose(await gpu!.rt.read(dgate), wantDgate, { ...tol, label: `swigluBackward dgate ${what} n=${n}` });
    expectClose(await gpu!.rt.read(dup), wantDup, { ...tol, label: `swigluBackward dup ${what} n=${n}` });
  }

  it('forward and backward (accumulating) on odd sizes', async () => {
    for (const n of [1, 7, 1025, 1_000_003]) await check(n, randomArray(n, n, -12, 12), TOL, 'uniform', true);
  });

  // Gradients start at zero here so that the relative tolerance applies to tiny values too.
  it('stays finite and accurate for gates across ±1e-30..1e30', async () => {
    const gate = extremeArray(4099, 5);
    gate.set([1e30, -1e30, 88, -88, 100, -100, 0]);
    await check(gate.length, gate, EXTREME_TOL, 'extreme', false);
  });

  it('refuses short buffers and aliasing outputs before dispatching', () => {
    const a = tensor('a', new Float32Array(4));
    const b = tensor('b', new Float32Array(4));
    const count = gpu!.rt.dispatchCount;
    expect(() => swigluForward(gpu!.rt, a, b, b, 5)).toThrow(/out has 4 elements, needs n = 5/);
    expect(() => swigluBackward(gpu!.rt, a, a, b, b, b, 4)).toThrow(/output 'a' overlaps 'a'/);
    expect(gpu!.rt.dispatchCount).toBe(count);
  });
});
