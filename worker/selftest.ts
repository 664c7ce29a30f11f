/**
 * The kernel self-test: matmul on the active backend, in every layout and (WebGPU) every kernel variant,
 * on odd shapes, against the CPU reference; then the throughput of the default matmul. It is what
 * the System view's "Run kernel self-test" button shows.
 */
import { randomArray } from '../kernels/common/random';
import type { MatmulLayout, MatmulVariant } from '../kernels/matmul/layout';
import { MATMUL_LAYOUTS } from '../kernels/matmul/layout';
import { matmulRef } from '../kernels/matmul/matmul.ref';
import type { Ops } from '../kernels/ops';
import type { SelfTestCase, SelfTestResult } from './contract/system';

const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [17, 33, 5],
  [65, 17, 130],
  [3, 1031, 7],
];
const GFLOPS_SIZE = 256;
const GFLOPS_RUNS = 3;

async function runCase(
  ops: Ops,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  variant: MatmulVariant,
): Promise<SelfTestCase> {
  const seed = M * 10007 + K * 101 + N;
  const a = randomArray(M * K, seed);
  const b = randomArray(K * N, seed + 1);
  const ta = ops.alloc('selftest.a', a.length);
  const tb = ops.alloc('selftest.b', b.length);
  const tout = ops.alloc('selftest.out', M * N);
  ops.upload(ta, a);
  ops.upload(tb, b);
  ops.matmul(tout, ta, tb, M, K, N, layout, { variant });
  const got = await ops.read(tout);
  const want = new Float32Array(M * N);
  matmulRef(want, a, b, M, K, N, layout);
  let maxAbsError = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    maxAbsError = Number.isNaN(d) ? NaN : Math.max(maxAbsError, d);
  }
  for (const t of [ta, tb, tout]) ops.free(t);
  // Float32 sums of K products of values in [-1, 1]: error grows with K.
  const tolerance = 2e-6 * Math.max(K, 1);
  const name = `matmul_${ops.backend === 'webgpu' ? variant : ops.backend === 'cpu' ? 'ref' : 'wasm'} ${layout} ${M}x${K}x${N}`;
  return { name, maxAbsError, tolerance, passed: maxAbsError <= tolerance };
}

/** GFLOPS of an n³ matmul (2n³ flops), median over runs, each ending in a readback. */
export async function matmulGflops(
  ops: Ops,
  n: number,
  runs: number,
  variant: MatmulVariant = 'auto',
): Promise<number> {
  const a = ops.alloc('gflops.a', n * n);
  const b = ops.alloc('gflops.b', n * n);
  const out = ops.alloc('gflops.out', n * n);
  ops.upload(a, randomArray(n * n, 1));
  ops.upload(b, randomArray(n * n, 2));
  ops.matmul(out, a, b, n, n, n, 'nn', { variant }); // warm-up: pipeline compilation
  await ops.read(out);
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    ops.matmul(out, a, b, n, n, n, 'nn', { variant });
    await ops.read(out);
    times.push(performance.now() - t0);
  }
  for (const t of [a, b, out]) ops.free(t);
  return (2 * n ** 3) / (median(times) / 1000) / 1e9;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function runSelfTest(ops: Ops): Promise<SelfTestResult> {
  const t0 = performance.now();
  const variants: MatmulVariant[] = ops.backend === 'webgpu' ? ['naive', 'tiled', 'register'] : ['auto'];
  const cases: SelfTestCase[] = [];
  for (const variant of variants) {
    for (const layout of MATMUL_LAYOUTS) {
      for (const [M, K, N] of SHAPES) cases.push(await runCase(ops, M, K, N, layout, variant));
    }
  }
  const gflops = await matmulGflops(ops, GFLOPS_SIZE, GFLOPS_RUNS);
  const maxAbsError = cases.reduce((m, c) => (Number.isNaN(c.maxAbsError) ? NaN : Math.max(m, c.maxAbsError)), 0);
  return {
    backend: ops.backend,
    passed: cases.every((c) => c.passed),
    maxAbsError,
    gflops,
    gflopsSize: GFLOPS_SIZE,
    cases,
    ms: performance.now() - t0,
  };
}
