import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import type { AdamWHyper } from './adamw';
import { adamw } from './adamw';
import { adamwRef } from './adamw.ref';

const gpu = await testGpuOps();

const HP: Omit<AdamWHyper, 'step'> = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1 };

// Each stored value is one f32 rounding of a few f32 operations away from the float64 reference;
// the update term is lr-sized, so atol scales with lr.
const TOL = { atol: 1e-7, rtol: 2e-6 };

describe.runIf(gpu)('adamw on WebGPU vs adamwRef', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  /** Runs `steps` steps on the GPU and in the reference (f32 state) and compares param, m, v. */
  async function check(
    n: number,
    seed: number,
    steps: number,
    gScale: number,
    scaleMode: 'number' | 'tensor',
    len = n,
  ) {
    const param = randomArray(len, seed, -2, 2);
    const m = randomArray(len, seed + 1, -0.1 * gScale, 0.1 * gScale);
    const v = randomArray(len, seed + 2, 0, 0.01 * gScale * gScale);
    const tp = tensor('param', param),
      tm = tensor('m', m),
      tv = tensor('v', v);
    const scale = 0.75;
    for (let s = 1; s <= steps; s++) {
      const grad = randomArray(len, seed + 10 + s, -gScale, gScale);
      adamw(
        gpu!.rt,
        tp,
        tensor('grad', grad),
        tm,
        tv,
        n,
        { ...HP, step: s },
        scaleMode === 'number' ? scale : tensor('scale', [scale]),
      );
      adamwRef(param, grad, m, v, n, { ...HP, step: s }, scale);
    }
    const label = `n=${n}${len > n ? ` of ${len}` : ''} |g|<${gScale} ${steps} steps, scale as ${scaleMode}`;
    expectClose(await gpu!.rt.read(tp), param, { ...TOL, label: `param ${label}` });
    // m = m + (1 − β1)(g − m) cancels: its error is relative to |g|, not to |m|.
    expectClose(await gpu!.rt.read(tm), m, { atol: 2e-7 * gScale, rtol: 2e-6, label: `m ${label}` });
    expectClose(await gpu!.rt.read(tv), v, { atol: 0, rtol: 4e-6, label: `v ${label}` });
  }

  it('follows the hand-computed two-step trajectory of adamw.ref.test.ts', async () => {
    const hp = { lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 };
    const tp = tensor('param', [1, -2]),
      tm = tensor('m', [0, 0]),
      tv = tensor('v', [0, 0]);
    adamw(gpu!.rt, tp, tensor('g1', [0.5, 0]), tm, tv, 2, { ...hp, step: 1 });
    adamw(gpu!.rt, tp, tensor('g2', [-0.25, 0]), tm, tv, 2, { ...hp, step: 2 });
    expectClose(await gpu!.rt.read(tp), [0.871467298705846, -1.996002], {
      atol: 0,
      rtol: 3e-7,
      label: 'param after 2 steps',
    });
    expectClose(await gpu!.rt.read(tm), [0.02, 0], { atol: 0, rtol: 3e-7, label: 'm after 2 steps' });
    expectClose(await gpu!.rt.read(tv), [0.00031225, 0], { atol: 0, rtol: 3e-7, label: 'v after 2 steps' });
  });

  it('matches the reference over three steps on odd sizes', async () => {
    for (const n of [1, 3, 257, 70001]) await check(n, n, 3, 1, 'number');
  });

  it('reads the gradient scale from a tensor (the clip scale) as it does from a number', async () => {
    await check(1000, 5, 2, 1, 'tensor');
  });

  it('keeps relative accuracy for huge and tiny gradients', async () => {
    await check(513, 6, 3, 1e4, 'number');
    await check(513, 7, 3, 1e-6, 'tensor');
  });

  it('updates only the first n elements', async () => {
    await check(100, 8, 1, 1, 'number', 131);
  });

  it('refuses short buffers and bad hyperparameters before dispatching', () => {
    const t = tensor('t', [0, 0]);
    expect(() => adamw(gpu!.rt, t, t, t, t, 3, { ...HP, step: 1 })).toThrow(/param has 2 elements, needs n = 3/);
    expect(() => adamw(gpu!.rt, t, t, t, t, 2, { ...HP, step: 1.5 })).toThrow(/step must be an integer ≥ 1/);
    expect(() => adamw(gpu!.rt, t, t, t, t, 2, { ...HP, step: 1 }, Infinity)).toThrow(
      /gradScale must be a finite number/,
    );
    expect(() => adamw(gpu!.rt, t, t, t, t, 2, { ...HP, step: 1 }, tensor('empty', []))).toThrow(
      /has 0 elements, needs 1/,
    );
  });
});
