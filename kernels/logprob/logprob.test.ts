import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32, randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import type { LogprobVariant } from './logprob';
import { chooseLogprobVariant, logprobBackward, logprobForward, logprobForwardKernel } from './logprob';
import { logprobBackwardRef, logprobForwardRef } from './logprob.ref';

const gpu = await testGpuOps();

// f32 sums over V (strided per invocation, then a tree, or subgroup sums and an ordered sum of
// the subgroups' results) against float64: relative errors of a few ulps times log2(V), whatever
// the order; the logp/lse outputs are as large as the logits' spread, hence rtol.
const FWD_TOL = { atol: 2e-5, rtol: 2e-6 };
// Backward: p_v = exp(z − lse) with WGSL's exp (≤ 3 + 2|x| ulp), times seeds of order 1.
const BWD_TOL = { atol: 2e-6, rtol: 2e-5 };
// At an inverse temperature s > 1 the backward's log p_v = s·l − lse carries errors of about
// |s·l|·2⁻²⁴ and the gradient is multiplied by s: the tolerance grows with s.
const bwdTol = (scale: number) => ({
  atol: BWD_TOL.atol * Math.max(1, scale),
  rtol: BWD_TOL.rtol * Math.max(1, scale),
});

describe.runIf(gpu)('logprob on WebGPU vs logprobForwardRef / logprobBackwardRef', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  /** Seeded case: logits in [lo, hi), targets in 0..V-1 with about one in five set to −1; outputs at `scale`. */
  function makeCase(N: number, V: number, seed: number, lo = -4, hi = 4, scale = 1) {
    const rand = mulberry32(seed);
    const logits = randomArray(N * V, seed + 1, lo, hi);
    const targets = Int32Array.from({ length: N }, (_, t) => (t % 5 === 3 ? -1 : Math.floor(rand() * V)));
    const lp = new Float32Array(N),
      h = new Float32Array(N),
      lse = new Float32Array(N);
    logprobForwardRef(lp, h, lse, logits, targets, N, V, scale);
    return { logits, targets, want: { logp: lp, entropy: h, lse } };
  }

  async function checkForward(
    N: number,
    V: number,
    seed: number,
    lo = -4,
    hi = 4,
    variant: LogprobVariant = 'auto',
    scale = 1,
  ) {
    const { logits, targets, want } = makeCase(N, V, seed, lo, hi, scale);
    const logp = tensor('logp', new Float32Array(N).fill(7));
    const entropy = tensor('entropy', new Float32Array(N).fill(7));
    const lse = tensor('lse', new Float32Array(N).fill(7));
    const [lg, tg] = [tensor('logits', logits), tensor('targets', targets)];
    logprobForward(gpu!.rt, logp, entropy, lse, lg, tg, N, V, scale, variant);
    const label = `N=${N} V=${V} [${lo}, ${hi}) ${variant} scale=${scale}`;
    expectClose(await gpu!.rt.read(logp), want.logp, { ...FWD_TOL, label: `logp ${label}` });
    expectClose(await gpu!.rt.read(entropy), want.entropy, { ...FWD_TOL, label: `entropy ${label}` });
    expectClose(await gpu!.rt.read(lse), want.lse, { ...FWD_TOL, label: `lse ${label}` });
  }

  async function checkBackward(
    N: number,
    V: number,
    seed: number,
    withEntropy: boolean,
    lo = -4,
    hi = 4,
    variant: LogprobVariant = 'auto',
    scale = 1,
  ) {
    const { logits, targets, want } = makeCase(N, V, seed, lo, hi, scale);
    const dlogp = randomArray(N, seed + 2);
    const dentropy = randomArray(N, seed + 3);
    const init = randomArray(N * V, seed + 4);
    const dlogits = tensor('dlogits', init);
    const ent = withEntropy
      ? { dentropy: tensor('dentropy', dentropy), entropy: tensor('entropy', want.entropy) }
      : undefined;
    logprobBackward(
      gpu!.rt,
      dlogits,
      tensor('dlogp', dlogp),
      tensor('logits', logits),
      tensor('targets', targets),
      tensor('lse', want.lse),
      N,
      V,
      scale,
      ent,
      variant,
    );
    const expected = init.slice();
    logprobBackwardRef(
      expected,
      dlogp,
      logits,
      targets,
      want.lse,
      N,
      V,
      scale,
      withEntropy ? { dentropy, entropy: want.entropy } : undefined,
    );
    const label = `dlogits N=${N} V=${V} [${lo}, ${hi})${withEntropy ? ' +entropy' : ''} ${variant} scale=${scale}`;
    expectClose(await gpu!.rt.read(dlogits), expected, { ...bwdTol(scale), label });
  }

  it('auto picks the row kernel for small vocabularies and the wide one for real ones', () => {
    expect(chooseLogprobVariant(50)).toBe('row');
    expect(chooseLogprobVariant(50257)).toBe('wide');
  });

  it('auto takes the subgroup kernel for wide rows where the device has subgroups, and only there', () => {
    expect(logprobForwardKernel(50257, 'auto', true)).toBe('subgroup');
    expect(logprobForwardKernel(50257, 'auto', false)).toBe('wide');
    expect(logprobForwardKernel(50, 'auto', true)).toBe('row');
    expect(logprobForwardKernel(50257, 'wide', true)).toBe('wide');
    expect(logprobForwardKernel(50, 'subgroup', false)).toBe('subgroup');
  });

  // The subgroup kernel needs the feature (SwiftShader has it, though auto does not use it there).
  const subgroups = gpu?.ctx.adapter.features.includes('subgroups') ?? false;
  const variants: LogprobVariant[] = subgroups ? ['row', 'wide', 'subgroup'] : ['row', 'wide'];
  for (const variant of variants) {
    it(`forward (${variant}) on odd shapes`, async () => {
      for (const [N, V] of [
        [1, 1],
        [5, 7],
        [37, 130],
        [3, 4097],
        [2, 50257],
        [67, 50],
      ])
        await checkForward(N, V, N * 31 + V, -4, 4, variant);
    });

    it(`forward (${variant}) keeps accuracy for logits of ±1e4 and of tiny spread`, async () => {
      await checkForward(8, 517, 4, -1e4, 1e4, variant);
      await checkForward(8, 517, 5, 1e4, 1e4 + 1e-2, variant);
    });

    it(`forward (${variant}) finds the max at either end of a ±1e4 row (no overflow)`, async () => {
      const V = 37;
      const ramp = Float32Array.from({ length: V }, (_, v) => -1e4 + (2e4 * v) / (V - 1));
      const rows = [
        ramp,
        ramp.slice().reverse(),
        new Float32Array(V).fill(1e4),
        Float32Array.from({ length: V }, (_, v) => (v === 18 ? 0 : -1e4)),
      ];
      const logits = new Float32Array(rows.length * V);
      rows.forEach((r, t) => logits.set(r, t * V));
      const targets = Int32Array.of(V - 1, V - 1, 5, 18);
      const N = rows.length;
      const want = [new Float32Array(N), new Float32Array(N), new Float32Array(N)];
      logprobForwardRef(want[0], want[1], want[2], logits, targets, N, V);
      const out = [0, 1, 2].map((i) => tensor(`out${i}`, new Float32Array(N)));
      logprobForward(
        gpu!.rt,
        out[0],
        out[1],
        out[2],
        tensor('logits', logits),
        tensor('targets', targets),
        N,
        V,
        1,
        variant,
      );
      for (const i of [0, 1, 2])
        expectClose(await gpu!.rt.read(out[i]), want[i], {
          ...FWD_TOL,
          label: `${['logp', 'entropy', 'lse'][i]} ramps ${variant}`,
        });
    });

    it(`backward (${variant}) accumulates the logp seed on odd shapes`, async () => {
      for (const [N, V] of [
        [1, 1],
        [5, 7],
        [37, 130],
        [3, 4097],
        [2, 50257],
        [67, 50],
      ])
        await checkBackward(N, V, N * 17 + V, false, -4, 4, variant);
    });

    it(`backward (${variant}) with the entropy seed, including ±1e4 logits`, async () => {
      for (const [N, V] of [
        [5, 7],
        [11, 260],
        [3, 4097],
      ])
        await checkBackward(N, V, N * 13 + V, true, -4, 4, variant);
      await checkBackward(8, 517, 7, true, -1e4, 1e4, variant);
    });

    // The sampler's temperature 0.7 (s = 1/0.7), a sharp 0.05 (s = 20) and a flat 4 (s = 0.25).
    it(`forward (${variant}) at inverse temperatures s ≠ 1 on odd shapes`, async () => {
      for (const [N, V] of [
        [1, 1],
        [5, 7],
        [37, 130],
        [3, 4097],
        [67, 50],
      ])
        await checkForward(N, V, N * 29 + V, -4, 4, variant, 1 / 0.7);
      await checkForward(6, 300, 3, -4, 4, variant, 20);
      await checkForward(6, 300, 4, -4, 4, variant, 0.25);
      await checkForward(8, 517, 6, -100, 100, variant, 1 / 0.7);
    });

    it(`backward (${variant}) at inverse temperatures s ≠ 1, with and without the entropy seed`, async () => {
      for (const [N, V] of [
        [1, 1],
        [5, 7],
        [37, 130],
        [3, 4097],
      ]) {
        await checkBackward(N, V, N * 23 + V, false, -4, 4, variant, 1 / 0.7);
        await checkBackward(N, V, N * 19 + V, true, -4, 4, variant, 1 / 0.7);
      }
      await checkBackward(6, 300, 9, true, -4, 4, variant, 20);
      await checkBackward(6, 300, 10, true, -4, 4, variant, 0.25);
    });
  }

  it('forward writes logp 0 for target −1 and NaN for a target ≥ V', async () => {
    const logp = tensor('logp', new Float32Array(3).fill(7));
    const entropy = tensor('entropy', new Float32Array(3));
    const lse = tensor('lse', new Float32Array(3));
    logprobForward(
      gpu!.rt,
      logp,
      entropy,
      lse,
      tensor('logits', new Float32Array(12)),
      tensor('targets', Int32Array.of(-1, 4, 3)),
      3,
      4,
    );
    const got = await gpu!.rt.read(logp);
    expect(got[0]).toBe(0);
    expect(got[1]).toBeNaN();
    expect(got[2]).toBeCloseTo(-Math.log(4), 6);
    expectClose(await gpu!.rt.read(entropy), [Math.log(4), Math.log(4), Math.log(4)], {
      atol: 1e-6,
      rtol: 0,
      label: 'uniform entropy',
    });
  });

  it('folds more than 65535 workgroups of rows into a second dimension', async () => {
    await checkForward(65535 * 64 + 1, 1, 8, -4, 4, 'row');
  });

  it('refuses mismatched buffers and a scale that is not finite and > 0 before dispatching', () => {
    const t = tensor('small', new Float32Array(3));
    const [one, two] = [tensor('one', new Float32Array(1)), tensor('two', new Float32Array(2))];
    expect(() => logprobForward(gpu!.rt, one, one, one, two, one, 1, 2, 0)).toThrow(/scale \(1 \/ temperature\)/);
    expect(() => logprobBackward(gpu!.rt, two, one, two, one, one, 1, 2, Infinity)).toThrow(/scale/);
    expect(() => logprobForward(gpu!.rt, t, t, t, t, t, 2, 2)).toThrow(/logits has 3 elements, needs N\*V = 2\*2 = 4/);
    expect(() => logprobBackward(gpu!.rt, t, t, t, t, t, 1, 3, 1, { dentropy: t, entropy: tensor('e', []) })).toThrow(
      /entropy has 0 elements/,
    );
  });
});
