// out(M, N) (+)= op(A) · op(B) in f32 with SIMD (f32x4). Layouts as kernels/matmul/layout.ts:
// nn A(M,K)·B(K,N) (matmulRows) and tn A(K,M)ᵀ·B(K,N) (matmulTnRows, A packed per block) read B as
// (K, N) rows in a 4 × 8 register tile, K in blocks; nt A(M,K)·B(N,K)ᵀ takes dot products of rows
// of A and B (matmulNtRows). Rows [m0, m1) only: threads split M (nt: or N's columns [n0, n1), for
// a decoding step's few rows, so each thread streams half the weights). Multiply-adds are vec.ts `madd`
// (fused in the relaxed builds).
// Accumulating (nn, tn), each element's sum starts from its value in `out` and goes on over k in
// order, so a sum over k split into several calls (a batch's weight gradient over passes, an LM
// head in chunks) is bit for bit the sum in one call.
import { dot, dotFinish, madd } from './vec';

@inline function tile4x8(out: usize, a: usize, sam: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  const bstep = N << 2;
  const o1 = out + bstep, o2 = o1 + bstep, o3 = o2 + bstep;
  let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
  let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
  let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
  let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
  if (acc) {
    c00 = v128.load(out); c01 = v128.load(out, 16);
    c10 = v128.load(o1); c11 = v128.load(o1, 16);
    c20 = v128.load(o2); c21 = v128.load(o2, 16);
    c30 = v128.load(o3); c31 = v128.load(o3, 16);
  }
  let pa = a;
  let pb = b;
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
  v128.store(out, c00); v128.store(out, c01, 16);
  v128.store(o1, c10); v128.store(o1, c11, 16);
  v128.store(o2, c20); v128.store(o2, c21, 16);
  v128.store(o3, c30); v128.store(o3, c31, 16);
}

@inline function tile1x4(out: usize, a: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  let c = acc ? v128.load(out) : f32x4.splat(0);
  let pa = a;
  let pb = b;
  for (let k = 0; k < K; k++) {
    c = madd(f32x4.splat(load<f32>(pa)), v128.load(pb), c);
    pa += sak << 2;
    pb += N << 2;
  }
  v128.store(out, c);
}

@inline function cell(out: usize, a: usize, sak: usize, b: usize, N: usize, K: i32, acc: bool): void {
  let s: f32 = acc ? load<f32>(out) : 0;
  let pa = a;
  let pb = b;
  for (let k = 0; k < K; k++) {
    s += load<f32>(pa) * load<f32>(pb);
    pa += sak << 2;
    pb += N << 2;
  }
  store<f32>(out, s);
}

const ROW_BLOCK = 64;
/** k steps a block of matmulRows and matmulTnRows holds: an 8-column strip of B (256 lines) and a 64-row panel of A (64 KiB) stay in cache. */
const K_BLOCK = 256;

/**
 * Rows m0..m1 of out (M, N) (+)= A (M, K) · B (K, N). K goes in blocks of K_BLOCK so that an
 * 8-column strip of B (K_BLOCK lines) stays in L1 while the 4 × 8 tiles of a block of 64 rows pass
 * over it; over the whole of K (an LM head's backward, K the vocabulary) it came from memory for
 * every tile. Sums stored between blocks in f32, as the registers hold them: the same bits.
 */
export function matmulRows(out: usize, a: usize, b: usize, M: i32, K: i32, N: i32, acc: bool, m0: i32, m1: i32): void {
  const sam: usize = <usize>K;
  const n8 = N & ~7;
  const n4 = N & ~3;
  for (let mb = m0; mb < m1; mb += ROW_BLOCK) {
    const me = min(mb + ROW_BLOCK, m1);
    const me4 = mb + ((me - mb) & ~3);
    for (let kb = 0; kb < K; kb += K_BLOCK) {
      const kn = min(K_BLOCK, K - kb);
      const accb = acc || kb > 0;
      const ak = a + (<usize>kb << 2);
      const bk = b + ((<usize>kb * N) << 2);
      for (let n = 0; n < n8; n += 8) {
        for (let m = mb; m < me4; m += 4) {
          tile4x8(out + ((<usize>m * N + n) << 2), ak + ((<usize>m * sam) << 2), sam, 1, bk + (<usize>n << 2), <usize>N, kn, accb);
        }
      }
      for (let m = me4; m < me; m++) {
        for (let n = 0; n < n8; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), ak + ((<usize>m * sam) << 2), 1, bk + (<usize>n << 2), <usize>N, kn, accb);
      }
      for (let m = mb; m < me; m++) {
        for (let n = n8; n < n4; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), ak + ((<usize>m * sam) << 2), 1, bk + (<usize>n << 2), <usize>N, kn, accb);
        for (let n = n4; n < N; n++) cell(out + ((<usize>m * N + n) << 2), ak + ((<usize>m * sam) << 2), 1, bk + (<usize>n << 2), <usize>N, kn, accb);
      }
    }
  }
}

/**
 * Rows m0..m1 of out (M, N) (+)= A (M, K) · B (N, K)ᵀ as dot products of rows, reading B as it is:
 * a transposed copy of B (K·N, every call) cost as much as the product for a decoding step's few
 * rows, and this runs faster than the (K, N) tile at every size measured (8 to 1024 rows).
 * A 4 × 2 tile of rows of A and B per inner loop; every element is summed as vec.ts `dot` sums it
 * (four lanes over k, then `dotFinish`), so the result does not depend on how the rows, or the
 * columns [n0, n1), are split between threads.
 */
export function matmulNtRows(out: usize, a: usize, b: usize, K: i32, N: i32, acc: bool, m0: i32, m1: i32, n0: i32, n1: i32): void {
  const row = <usize>K << 2;
  const k4 = K & ~3;
  const m4 = m0 + ((m1 - m0) & ~3);
  // Blocks of B's rows stay in cache while every row of A passes over them (B may be the LM head's, megabytes).
  for (let nb = n0; nb < n1; nb += NT_BLOCK) {
    const ne = min(nb + NT_BLOCK, n1);
    const ne2 = nb + ((ne - nb) & ~1);
    for (let m = m0; m < m4; m += 4) {
      const a0 = a + <usize>m * row, a1 = a0 + row, a2 = a1 + row, a3 = a2 + row;
      const o0 = out + (<usize>m * N << 2), o1 = o0 + (<usize>N << 2), o2 = o1 + (<usize>N << 2), o3 = o2 + (<usize>N << 2);
      for (let n = nb; n < ne2; n += 2) {
        const b0 = b + <usize>n * row, b1 = b0 + row;
        let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
        let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
        let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
        let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
        for (let k = 0; k < k4; k += 4) {
          const o = <usize>k << 2;
          const v0 = v128.load(b0 + o), v1 = v128.load(b1 + o);
          const u0 = v128.load(a0 + o), u1 = v128.load(a1 + o), u2 = v128.load(a2 + o), u3 = v128.load(a3 + o);
          c00 = madd(u0, v0, c00); c01 = madd(u0, v1, c01);
          c10 = madd(u1, v0, c10); c11 = madd(u1, v1, c11);
          c20 = madd(u2, v0, c20); c21 = madd(u2, v1, c21);
          c30 = madd(u3, v0, c30); c31 = madd(u3, v1, c31);
        }
        const on = <usize>n << 2;
        put(o0 + on, dotFinish(c00, a0, b0, k4, K), acc); put(o0 + on + 4, dotFinish(c01, a0, b1, k4, K), acc);
        put(o1 + on, dotFinish(c10, a1, b0, k4, K), acc); put(o1 + on + 4, dotFinish(c11, a1, b1, k4, K), acc);
        put(o2 + on, dotFinish(c20, a2, b0, k4, K), acc); put(o2 + on + 4, dotFinish(c21, a2, b1, k4, K), acc);
        put(o3 + on, dotFinish(c30, a3, b0, k4, K), acc); put(o3 + on + 4, dotFinish(c31, a3, b1, k4, K), acc);
      }
      for (let n = ne2; n < ne; n++) {
        const bn = b + <usize>n * row, on = <usize>n << 2;
        put(o0 + on, dot(a0, bn, K), acc); put(o1 + on, dot(a1, bn, K), acc);
        put(o2 + on, dot(a2, bn, K), acc); put(o3 + on, dot(a3, bn, K), acc);
      }
    }
    for (let m = m4; m < m1; m++) {
      const am = a + <usize>m * row;
      for (let n = nb; n < ne; n++) put(out + ((<usize>m * N + n) << 2), dot(am, b + <usize>n * row, K), acc);
    }
  }
}

/** Rows of B a block of matmulNtRows holds: 32 rows of K floats (48 KiB at K = 384) stay in L2. */
const NT_BLOCK = 32;

@inline function put(p: usize, s: f32, acc: bool): void {
  store<f32>(p, acc ? load<f32>(p) + s : s);
}

/** Columns of out a part of a column-split matmulNtRows starts on a multiple of: its block of B's rows. */
export function matmulNtColumnAlign(): i32 {
  return NT_BLOCK;
}

/** Bytes of matmulTnRows' `pack` for a part of `rows` rows over K: min(K, K_BLOCK) k steps × min(ROW_BLOCK, rows rounded up to 4) floats. */
export function matmulTnPackBytes(K: i32, rows: i32): i32 {
  return min(K, K_BLOCK) * min(ROW_BLOCK, (rows + 3) & ~3) * 4;
}

/**
 * Rows m0..m1 of out (M, N) (+)= A (K, M)ᵀ · B (K, N), a weight gradient's shape (K the tokens, in
 * the thousands). matmulRows read A's 4 rows of a tile with a stride of M floats per k, a new cache
 * line (and page, M ≥ 1024) every step, over all of K; here K goes in blocks of K_BLOCK, and each
 * block's panel of 64 rows of A is first copied to `pack` (K_BLOCK · ROW_BLOCK floats, the
 * part's own) tile by tile, 4 rows contiguous per k, so the 4 × 8 tiles read it in order. Each
 * element's sum still starts from `out` (acc) or 0 and goes on over k in order, stored between
 * blocks in f32 as the registers hold it: bit for bit matmulRows'.
 */
export function matmulTnRows(out: usize, a: usize, b: usize, M: i32, K: i32, N: i32, acc: bool, m0: i32, m1: i32, pack: usize): void {
  const n8 = N & ~7;
  const n4 = N & ~3;
  const sak = <usize>M;
  for (let mb = m0; mb < m1; mb += ROW_BLOCK) {
    const me = min(mb + ROW_BLOCK, m1);
    const me4 = mb + ((me - mb) & ~3);
    for (let kb = 0; kb < K; kb += K_BLOCK) {
      const kn = min(K_BLOCK, K - kb);
      const accb = acc || kb > 0;
      const ak = a + ((<usize>kb * sak) << 2);
      const bk = b + ((<usize>kb * N) << 2);
      // The panel: tile t's k-th 4 values at pack + (t·kn + k)·16.
      for (let m = mb; m < me4; m += 4) {
        let src = ak + (<usize>m << 2);
        let dst = pack + ((<usize>((m - mb) >> 2) * kn) << 4);
        for (let k = 0; k < kn; k++) {
          v128.store(dst, v128.load(src));
          src += sak << 2;
          dst += 16;
        }
      }
      for (let n = 0; n < n8; n += 8) {
        for (let m = mb; m < me4; m += 4) {
          tile4x8(out + ((<usize>m * N + n) << 2), pack + ((<usize>((m - mb) >> 2) * kn) << 4), 1, 4, bk + (<usize>n << 2), <usize>N, kn, accb);
        }
      }
      for (let m = me4; m < me; m++) {
        for (let n = 0; n < n8; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), ak + (<usize>m << 2), sak, bk + (<usize>n << 2), <usize>N, kn, accb);
      }
      for (let m = mb; m < me; m++) {
        for (let n = n8; n < n4; n += 4) tile1x4(out + ((<usize>m * N + n) << 2), ak + (<usize>m << 2), sak, bk + (<usize>n << 2), <usize>N, kn, accb);
        for (let n = n4; n < N; n++) cell(out + ((<usize>m * N + n) << 2), ak + (<usize>m << 2), sak, bk + (<usize>n << 2), <usize>N, kn, accb);
      }
    }
  }
}
