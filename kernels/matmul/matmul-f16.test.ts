import { afterAll, describe, expect, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { packF16, unpackF16 } from '../f16/f16.ref';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { MATMUL_LAYOUTS } from './layout';
import { dispatchMatmulF16, f16StorageFor, matmulF16, matmulF16Spec } from './matmul-f16';
import { matmulRef } from './matmul.ref';
import nativeSrc from './matmul_f16_native.wgsl?raw';

const gpu = await testGpuOps();
const hasF16 = gpu?.ctx.adapter.features.includes('shader-f16') ?? false;

// Against matmulRef of the operands' f16 values (exact in f32): only the f32 accumulation
// differs from the float64 reference, as for the f32 matmul (kernels/matmul/matmul.test.ts).
const accTol = (K: number) => ({ atol: 2e-6 * Math.max(K, 1), rtol: 1e-5 });

/**
 * |out − Σ_k a·b| allowed against the unrounded f32 operands, per output. Rounding an operand x
 * to f16 moves it by at most 2⁻¹¹·|x| (normal, |x| ≥ 2⁻¹⁴) or 2⁻²⁵ (subnormal); a product of two
 * rounded operands is then within (2⁻¹⁰ + 2⁻²²)·|a·b| + 2⁻²⁵·(|a| + |b|)·(1 + 2⁻¹¹) of a·b (the
 * product itself is exact in f32: 11 + 11 significant bits). Summed over K, plus f32 accumulation
 * (≤ K·2⁻²⁴ relative to Σ|a·b|): S·(2⁻¹⁰ + 2⁻²² + K·2⁻²⁴) + K·2⁻²⁴·(|a|max + |b|max).
 */
function f16Bound(S: number, K: number, maxAbs: number): number {
  return S * (2 ** -10 + 2 ** -22 + K * 2 ** -24) + K * 2 ** -24 * 2 * maxAbs;
}

const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [17, 33, 5],
  [65, 17, 130],
  [9, 7, 25],
  [3, 1, 2],
  [68, 13, 20],
  [3, 1027, 7],
];

/** A seeded case: f32 operands in [−2, 2), stored (K, M) for tn and (N, K) for nt, and both packed. */
function makeCase(M: number, K: number, N: number, seed: number) {
  const a = randomArray(M * K, seed, -2, 2);
  const b = randomArray(K * N, seed + 1, -2, 2);
  return { a, b, a16: packF16(a), b16: packF16(b) };
}

describe.runIf(gpu)('matmulF16 (f16 operands, f32 accumulation) on WebGPU', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  it('auto takes native f16 storage where the device has shader-f16, packed words elsewhere', () => {
    expect(f16StorageFor('auto', ['shader-f16', 'subgroups'])).toBe('native');
    expect(f16StorageFor('auto', ['subgroups'])).toBe('packed');
    expect(f16StorageFor('packed', ['shader-f16'])).toBe('packed');
  });

  for (const layout of MATMUL_LAYOUTS) {
    it(`packed storage ${layout}: matmulRef of the f16 values, and the f16 bound of the f32 operands`, async () => {
      for (const [M, K, N] of SHAPES) {
        for (const accumulate of [false, true]) {
          const { a, b, a16, b16 } = makeCase(M, K, N, M * 131 + K * 7 + N);
          const out0 = randomArray(M * N, 99, -1, 1);
          const out = tensor('out', out0);
          matmulF16(gpu!.rt, out, tensor('a16', a16), tensor('b16', b16), M, K, N, layout, accumulate, 'packed');
          const got = await gpu!.rt.read(out);
          const label = `${layout}${accumulate ? ' +=' : ''} ${M}x${K}x${N}`;

          const want = accumulate ? out0.slice() : new Float32Array(M * N);
          matmulRef(want, unpackF16(a16, M * K), unpackF16(b16, K * N), M, K, N, layout, accumulate);
          expectClose(got, want, { ...accTol(K), label: `vs f16 values ${label}` });

          // Against the unrounded operands: exact in float64, the bound per output from Σ|a·b|.
          const exact = new Float64Array(M * N);
          const S = new Float64Array(M * N);
          for (let m = 0; m < M; m++)
            for (let n = 0; n < N; n++)
              for (let k = 0; k < K; k++) {
                const av = layout === 'tn' ? a[k * M + m] : a[m * K + k];
                const bv = layout === 'nt' ? b[n * K + k] : b[k * N + n];
                exact[m * N + n] += av * bv;
                S[m * N + n] += Math.abs(av * bv);
              }
          for (let i = 0; i < M * N; i++) {
            const e = exact[i] + (accumulate ? out0[i] : 0);
            const bound = f16Bound(S[i], K, 2) + (accumulate ? Math.abs(e) * 2 ** -23 : 0);
            if (!(Math.abs(got[i] - e) <= bound))
              throw new Error(`${label}: out[${i}] = ${got[i]}, exact ${e}, beyond the f16 bound ${bound}`);
          }
        }
      }
    });
  }

  it('the native storage file runs the same sums: its loads, with f16 read as f32, give the packed results exactly', async () => {
    // This adapter may lack shader-f16 (SwiftShader does), so the native file is also run with
    // its element type spelled f32, over f32 buffers holding the same f16 values: the same index
    // arithmetic and the same f32 operands, so the same outputs to the bit.
    const asF32 = nativeSrc.replace(/^enable f16;$/m, '').replace(/\bf16\b/g, 'f32');
    expect(asF32).not.toMatch(/\bf16\b|enable/);
    for (const layout of MATMUL_LAYOUTS) {
      const [M, K, N] = [65, 17, 130];
      const { a16, b16 } = makeCase(M, K, N, 5);
      const packedOut = tensor('packed', new Float32Array(M * N));
      matmulF16(gpu!.rt, packedOut, tensor('a16', a16), tensor('b16', b16), M, K, N, layout, false, 'packed');
      const viaF32 = tensor('via_f32', new Float32Array(M * N));
      const [a32, b32] = [tensor('a32', unpackF16(a16, M * K)), tensor('b32', unpackF16(b16, K * N))];
      dispatchMatmulF16(gpu!.rt, matmulF16Spec('native_as_f32', asF32, layout), viaF32, a32, b32, M, K, N, false);
      expect(await gpu!.rt.read(viaF32), layout).toEqual(await gpu!.rt.read(packedOut));
    }
  });

  it.runIf(hasF16)('native f16 storage equals packed storage exactly (shader-f16 devices)', async () => {
    const [M, K, N] = [68, 33, 20];
    const { a16, b16 } = makeCase(M, K, N, 6);
    for (const layout of MATMUL_LAYOUTS) {
      const outs = (['native', 'packed'] as const).map((s) => {
        const out = tensor(s, new Float32Array(M * N));
        matmulF16(gpu!.rt, out, tensor('a16', a16), tensor('b16', b16), M, K, N, layout, false, s);
        return out;
      });
      expect(await gpu!.rt.read(outs[0]), layout).toEqual(await gpu!.rt.read(outs[1]));
    }
  });

  it.runIf(!hasF16)(
    'without shader-f16, native storage is refused before dispatch and Dawn rejects `enable f16`',
    async () => {
      const t = tensor('t', new Float32Array(4));
      expect(() => matmulF16(gpu!.rt, t, t, t, 2, 2, 2, 'nn', false, 'native')).toThrow(
        /needs the 'shader-f16' feature/,
      );
      await expect(gpu!.rt.pipelines.compile(matmulF16Spec('native', nativeSrc, 'nn'))).rejects.toMatchObject({
        name: 'ShaderCompileError',
        message: expect.stringMatching(/f16/),
      });
      gpu!.ctx.errors.length = 0;
    },
  );

  it('refuses operands with too few words', () => {
    const [out, small] = [tensor('out', new Float32Array(6)), tensor('small', new Float32Array(2))];
    expect(() => matmulF16(gpu!.rt, out, small, tensor('b', new Float32Array(3)), 2, 3, 3, 'nn')).toThrow(
      /a has 2 words, needs ⌈6 \/ 2⌉ = 3/,
    );
  });
});
