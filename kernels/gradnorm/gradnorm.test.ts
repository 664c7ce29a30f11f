import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { clipScale, gradNormPartialsLength, gradNormRelErrorBound, gradNormSquared } from './gradnorm';
import { clipScaleRef, gradNormSquaredRef } from './gradnorm.ref';

const gpu = await testGpuOps();

// f32 sums of non-negative terms: the worst-case relative error documented in gradnorm.ts.
const normTol = (lengths: number[]) => ({ atol: 0, rtol: gradNormRelErrorBound(lengths) });

describe.runIf(gpu)('gradnorm on WebGPU vs gradNormSquaredRef / clipScaleRef', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  /** Runs both stages on the GPU; returns Σ g² read back, with the reference value. */
  async function run(arrays: Float32Array[], flat: boolean): Promise<[number, number]> {
    const grads = arrays.map((a, i) => tensor(`grad${i}`, a));
    const partials = tensor(
      'partials',
      new Float32Array(gradNormPartialsLength(arrays.map((a) => a.length))).fill(NaN),
    );
    const out = tensor('normSq', [NaN]);
    gradNormSquared(gpu!.rt, out, partials, flat ? grads[0] : grads);
    const want = new Float32Array(1);
    gradNormSquaredRef(want, flat ? arrays[0] : arrays);
    return [(await gpu!.rt.read(out))[0], want[0]];
  }

  it('n = 1 and n = 1000003 as one flat tensor (two dispatches)', async () => {
    for (const n of [1, 1000003]) {
      const before = gpu!.rt.dispatchCount;
      const [got, want] = await run([randomArray(n, n)], true);
      expect(gpu!.rt.dispatchCount - before).toBe(2);
      expectClose([got], [want], { ...normTol([n]), label: `Σ g², n=${n}` });
    }
  });

  it('several tensors of odd lengths, an empty one included', async () => {
    const lengths = [1, 7, 4099, 0, 65537, 300001];
    const [got, want] = await run(
      lengths.map((n, i) => randomArray(n, 100 + i)),
      false,
    );
    expectClose([got], [want], { ...normTol(lengths), label: `Σ g² over [${lengths.join(', ')}]` });
  });

  it('keeps relative accuracy for huge (1e15) and tiny (1e-15) gradients', async () => {
    for (const mag of [1e15, 1e-15]) {
      const [got, want] = await run([randomArray(5003, 7, -mag, mag), randomArray(33, 8, -mag, mag)], false);
      expectClose([got], [want], { ...normTol([5003, 33]), label: `Σ g², |g| < ${mag}` });
    }
  });

  it('states an error bound that is tight enough to mean something', () => {
    expect(gradNormRelErrorBound([1])).toBeLessThan(1e-6);
    expect(gradNormRelErrorBound([1000003])).toBeLessThan(6e-6);
  });

  it('writes 0 when every tensor is empty', async () => {
    const [got] = await run([new Float32Array(0)], false);
    expect(got).toBe(0);
  });

  it('clipScale matches clipScaleRef, including an overflowed norm (scale 0) and NaN', async () => {
    const cases: [number, number][] = [
      [25, 1],
      [25, 10],
      [0, 1],
      [1e6, 0.5],
      [3.4e38, 1],
    ];
    for (const [ns, maxNorm] of cases) {
      const scale = tensor('scale', [7]);
      clipScale(gpu!.rt, scale, tensor('ns', [ns]), maxNorm);
      const want = new Float32Array(1);
      clipScaleRef(want, [ns], maxNorm);
      expectClose(await gpu!.rt.read(scale), want, {
        atol: 0,
        rtol: 1e-6,
        label: `clip scale, normSq ${ns}, maxNorm ${maxNorm}`,
      });
    }
    // Gradients of 1e20 overflow Σ g² to +∞ in f32; the scale is then 0, as in PyTorch.
    const [inf] = await run([Float32Array.of(1e20, 1)], true);
    expect(inf).toBe(Infinity);
    const scale = tensor('scale', [7]);
    clipScale(gpu!.rt, scale, tensor('ns', [Infinity]), 1);
    expect((await gpu!.rt.read(scale))[0]).toBe(0);
    clipScale(gpu!.rt, scale, tensor('ns', [NaN]), 1);
    expect((await gpu!.rt.read(scale))[0]).toBeNaN();
  });

  it('chains with no readback: norm, then scale, read once at the end', async () => {
    const g = randomArray(10000, 9, -0.1, 0.1);
    const out = tensor('normSq', [0]);
    const scale = tensor('scale', [0]);
    gradNormSquared(
      gpu!.rt,
      out,
      tensor('partials', new Float32Array(gradNormPartialsLength([g.length]))),
      tensor('g', g),
    );
    clipScale(gpu!.rt, scale, out, 1);
    const ns = new Float32Array(1),
      want = new Float32Array(1);
    gradNormSquaredRef(ns, g);
    clipScaleRef(want, ns, 1);
    expect(want[0]).toBeLessThan(1); // the norm (~5.8) is above maxNorm: this really clips
    // The scale is maxNorm / sqrt(Σ g²): half the sum's relative error, plus the sqrt and division.
    expectClose(await gpu!.rt.read(scale), want, {
      atol: 0,
      rtol: gradNormRelErrorBound([g.length]) / 2 + 4e-7,
      label: 'scale after norm',
    });
  });

  it('refuses a partials buffer that is too small and a bad maxNorm', () => {
    const g = tensor('g', new Float32Array(100000));
    const small = tensor('small', [0]);
    expect(() => gradNormSquared(gpu!.rt, small, small, g)).toThrow(
      `partials has 1 elements, needs ${gradNormPartialsLength([100000])}`,
    );
    expect(() => clipScale(gpu!.rt, small, small, -1)).toThrow(/maxNorm must be a finite number > 0/);
  });
});
