// out(M, N) (+)= op(A) · op(B) in f32 with SIMD (f32x4): a 4 × 8 register tile per inner loop.
// Layouts as kernels/matmul/layout.ts: nn A(M,K)·B(K,N); nt A(M,K)·B(N,K)ᵀ; tn A(K,M)ᵀ·B(K,N).
// nt transposes B into `scratch` (K·N floats) first, so every layout reads B as (K, N) rows.
// Rows [m0, m1) only: threads split M. Multiply-adds are vec.ts `madd` (fused in the relaxed builds).
import { madd } from './vec';

@inline function tile4x8(out: usize, a: usize, sam: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  let pa = a;
  let pb = b;
  const bstep = N << 2;
  const astep = sak << 2;
  const r1 = sam << 2, r2 = sam << 3, r3 = r1 + r2;
  for (let k = 0; k < K; k++) {
    const b0 = v128.load(pb);
    const b1 = v128.load(pb, 16);
    const a0 = f32x4.splat(load<f32>(pa));
    const a1 = f32x4.splat(load<f32>(pa + r1));
    const a2 = f32x4.splat(load<f32>(pa + r2));
    const a3 = f32x4.splat(load<f32>(pa + r3));
    c00 = madd(a0, b0, c00); c01 = madd(a0, b1, c01);
    c10 = madd(a1, b0, c10); c11 = madd(a1, b1, c11);
    c20 = madd(a2, b0, c20); c21 = madd(a2, b1, c21);
    c30 = madd(a3, b0, c30); c31 = madd(a3, b1, c31);
    pa += astep;
    pb += bstep;
  }
  const o1 = out + bstep, o2 = o1 + bstep, o3 = o2 + bstep;
  if (acc) {
    c00 = f32x4.add(c00, v128.load(out)); c01 = f32x4.add(c01, v128.load(out, 16));
    c10 = f32x4.add(c10, v128.load(o1)); c11 = f32x4.add(c11, v128.load(o1, 16));
    c20 = f32x4.add(c20, v128.load(o2)); c21 = f32x4.add(c21, v128.load(o2, 16));
    c30 = f32x4.add(c30, v128.load(o3)); c31 = f32x4.add(c31, v128.load(o3, 16));
  }
  v128.store(out, c00); v128.store(out, c01, 16);
  v128.store(o1, c10); v128.store(o1, c11, 16);
  v128.store(o2, c20); v128.store(o2, c21, 16);
  v128.store(o3, c30); v128.store(o3, c31, 16);
}

@inline function tile1x4(out: usize, a: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  let c = f32x4.splat(0);
  let pa = a;
  let pb = b;
  for (let k = 0; k < K; k++) {
    c = madd(f32x4.splat(load<f32>(pa)), v128.load(pb), c);
    pa += sak << 2;
    pb += N << 2;
  }
  if (acc) c = f32x4.add(c, v128.load(out));
  v128.store(out, c);
}

@inline function cell(out: usize, a: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  let s: f32 = 0;
  let pa = a;
  let pb = b;
  for (let k = 0; k < K; k++) {
    s += load<f32>(pa) * load<f32>(pb);
    pa += sak << 2;
    pb += N << 2;
  }
  store<f32>(out, acc ? load<f32>(out) + s : s);
}

/** B (N, K) → scratch (K, N). */
export function transpose(dst: usize, src: usize, rows: i32, cols: i32): void {
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) store<f32>(dst + ((<usize>c * rows + r) << 2), load<f32>(src + ((<usize>r * cols + c) << 2)));
  }
}

const ROW_BLOCK = 64;

/** Rows m0..m1 of out; layout 0 nn, 1 nt (b already transposed to (K, N)), 2 tn. */
export function matmulRows(out: usize, a: usize, b: usize, M: i32, K: i32, N: i32, transA: bool, acc: bool, m0: i32, m1: i32): void {
  const sam: usize = transA ? 1 : <usize>K;
  const sak: usize = transA ? <usize>M : 1;
  const n8 = N & ~7;
  const n4 = N & ~3;
  for (let mb = m0; mb < m1; mb += ROW_BLOCK) {
    const me = min(mb + ROW_BLOCK, m1);
    const me4 = mb + ((me - mb) & ~3);
    for (let n = 0; n < n8; n += 8) {
      for (let m = mb; m < me4; m += 4) {
        tile4x8(out + ((<usize>m * N + n) << 2), a + ((<usize>m * sam) << 2), sam, sak, b + (<usize>n << 2), <usize>N, K, acc);
      }
    }
    for (let m = me4; m < me; m++) {
      for (let n = 0; n < n8; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), a + ((<usize>m * sam) << 2), sak, b + (<usize>n << 2), <usize>N, K, acc);
    }
    for (let m = mb; m < me; m++) {
      for (let n = n8; n < n4; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), a + ((<usize>m * sam) << 2), sak, b + (<usize>n << 2), <usize>N, K, acc);
      for (let n = n4; n < N; n++) cell(out + ((<usize>m * N + n) << 2), a + ((<usize>m * sam) << 2), sak, b + (<usize>n << 2), <usize>N, K, acc);
    }
  }
}
