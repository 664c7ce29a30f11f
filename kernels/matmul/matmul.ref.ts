/**
 * CPU reference for matmul: plain loops from the formula, the specification the WGSL kernels are
 * tested against. out(M, N) (+)= op(A) · op(B), with op given by `layout`:
 *   nn: A (M, K), B (K, N)     nt: A (M, K), B (N, K)     tn: A (K, M), B (K, N)
 * Sums in float64 per output, then stores float32; accumulating (+=), the sum goes on from the
 * output's value in float32, k in order.
 */
import type { MatmulLayout } from './layout';

export function matmulRef(
  out: Float32Array,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
  accumulate = false,
): void {
  checkMatmulShapes(out.length, a.length, b.length, M, K, N, layout);
  const transA = layout === 'tn';
  const transB = layout === 'nt';
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      if (accumulate) {
        // On from out's value in float32, k in order: a sum over k split into several calls (a
        // weight gradient over passes, an LM head in chunks) is bit for bit the sum in one call.
        let acc = out[m * N + n];
        for (let k = 0; k < K; k++) {
          const av = transA ? a[k * M + m] : a[m * K + k];
          const bv = transB ? b[n * K + k] : b[k * N + n];
          acc = Math.fround(acc + av * bv);
        }
        out[m * N + n] = acc;
        continue;
      }
      let acc = 0;
      for (let k = 0; k < K; k++) {
        const av = transA ? a[k * M + m] : a[m * K + k];
        const bv = transB ? b[n * K + k] : b[k * N + n];
        acc += av * bv;
      }
      out[m * N + n] = acc;
    }
  }
}

/** Throws with expected and actual sizes when the buffers do not match (M, K, N). */
export function checkMatmulShapes(
  outLen: number,
  aLen: number,
  bLen: number,
  M: number,
  K: number,
  N: number,
  layout: MatmulLayout,
): void {
  for (const [name, v] of [
    ['M', M],
    ['K', K],
    ['N', N],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`matmul: ${name} must be a non-negative integer, got ${v}`);
  }
  if (layout !== 'nn' && layout !== 'nt' && layout !== 'tn')
    throw new Error(`matmul: layout must be 'nn', 'nt' or 'tn', got '${String(layout)}'`);
  if (outLen < M * N) throw new Error(`matmul ${layout}: out has ${outLen} elements, needs M*N = ${M}*${N} = ${M * N}`);
  if (aLen < M * K) throw new Error(`matmul ${layout}: a has ${aLen} elements, needs M*K = ${M}*${K} = ${M * K}`);
  if (bLen < K * N) throw new Error(`matmul ${layout}: b has ${bLen} elements, needs K*N = ${K}*${N} = ${K * N}`);
}
