// matmul_register: out(M, N) = op(A) · op(B), optionally accumulated; the same contract as
// matmul_naive, with an 8 × 8 block of outputs in registers per invocation and no workgroup memory.
//
// This file is the kernel's body; its loads come first, from one of two files the wrapper
// prepends: matmul_register_loads.wgsl (scalar loads, any shape) or matmul_register_vec4.wgsl
// (vec4 loads, for 16-byte-aligned rows). Each declares the bindings a and b and the functions
// a_start, b_start (where four rows of op(A) and four columns of op(B) start), a_block, b_block
// (a 4 × 4 block along k..k+3) and a_col, b_row (one k, for the K % 4 remainder).
//
// Formula: out[m, n] (+)= Σ_k op(A)[m, k] · op(B)[k, n] (see matmul_naive.wgsl for the layouts).
// Reference: matmulRef in matmul.ref.ts.
// Threading: invocation (x, y) computes rows 8y..8y+7, columns 8x..8x+7 of out as four 4 × 4
// sub-blocks in mat4x4 registers. Per step of 4 along K it loads op(A)[8 × 4] and op(B)[4 × 8] as
// four mat4x4 and adds four mat4x4 products: each loaded value feeds 4 FMAs from registers. No
// barriers or workgroup tiles: on CPU adapters (SwiftShader) they cost more than the reuse they
// buy, and neighbouring invocations read the same rows and columns from cache anyway.
// Layouts are strides: op(A)[m, k] = a[m·K + k], or a[k·M + m] when TRANS_A; op(B)[k, n] =
// b[k·N + n], or b[n·K + k] when TRANS_B.
// Edges: rows past M and columns past N are clamped to the last one when loading (every load in
// bounds, no branch in the K loop) and dropped when storing; the K % 4 remainder runs one k at a
// time. Dispatch (ceil(N / (8 · WG_X)), ceil(M / (8 · WG_Y))).
// Bindings:
//   p:   Params uniform
//   a:   (M, K) f32, or (K, M) when TRANS_A
//   b:   (K, N) f32, or (N, K) when TRANS_B
//   out: (M, N) f32

#include "matmul/matmul_lib.wgsl"

struct Params {
  M: u32,
  K: u32,
  N: u32,
  accumulate: u32, // 1: out += A·B, 0: out = A·B
}

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override WG_X: u32 = 4u;
override WG_Y: u32 = 4u;

const LANES = vec4<u32>(0u, 1u, 2u, 3u);

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// Column j = x · y[j]: the rank-1 update of one k.
fn outer(x: vec4<f32>, y: vec4<f32>) -> mat4x4<f32> {
  return mat4x4<f32>(x * y.x, x * y.y, x * y.z, x * y.w);
}

// out[m, n..n+3] (+)= v inside (M, N); the caller checks n < N.
fn store_row(m: u32, n: u32, v: vec4<f32>) {
  if (m >= p.M) { return; }
  let o = out_index(m, n);
  store_out(o, v.x);
  if (n + 1u < p.N) { store_out(o + 1u, v.y); }
  if (n + 2u < p.N) { store_out(o + 2u, v.z); }
  if (n + 3u < p.N) { store_out(o + 3u, v.w); }
}

// The 4 × 4 block c (c[j][i] = out[m + i, n + j]), row by row with constant indices so that c
// stays in registers.
fn store_block(m: u32, n: u32, c: mat4x4<f32>) {
  if (n >= p.N) { return; }
  let rows = transpose(c);
  store_row(m, n, rows[0]);
  store_row(m + 1u, n, rows[1]);
  store_row(m + 2u, n, rows[2]);
  store_row(m + 3u, n, rows[3]);
}

@compute @workgroup_size(WG_X, WG_Y)
fn matmul_register(@builtin(global_invocation_id) gid: vec3u) {
  let m0 = gid.y * 8u;
  let n0 = gid.x * 8u;
  if (m0 >= p.M || n0 >= p.N) { return; }
  let r0 = a_start(m0);
  let r1 = a_start(m0 + 4u);
  let c0 = b_start(n0);
  let c1 = b_start(n0 + 4u);
  var acc00 = mat4x4<f32>(); // rows m0..m0+3, columns n0..n0+3
  var acc01 = mat4x4<f32>(); // rows m0..m0+3, columns n0+4..n0+7
  var acc10 = mat4x4<f32>();
  var acc11 = mat4x4<f32>();
  var k = 0u;
  for (; k + 4u <= p.K; k += 4u) {
    let a0 = a_block(r0, k);
    let a1 = a_block(r1, k);
    let b0 = b_block(c0, k);
    let b1 = b_block(c1, k);
    acc00 += a0 * b0;
    acc01 += a0 * b1;
    acc10 += a1 * b0;
    acc11 += a1 * b1;
  }
  for (; k < p.K; k++) {
    let a0 = a_col(r0, k);
    let a1 = a_col(r1, k);
    let b0 = b_row(c0, k);
    let b1 = b_row(c1, k);
    acc00 += outer(a0, b0);
    acc01 += outer(a0, b1);
    acc10 += outer(a1, b0);
    acc11 += outer(a1, b1);
  }
  store_block(m0, n0, acc00);
  store_block(m0, n0 + 4u, acc01);
  store_block(m0 + 4u, n0, acc10);
  store_block(m0 + 4u, n0 + 4u, acc11);
}
