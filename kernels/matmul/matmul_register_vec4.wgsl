// matmul_register_vec4: matmul_register (read its header) with vec4 loads of A and B, for shapes
// whose contiguous rows start on 16-byte boundaries: K % 4 == 0 for A (M, K) or B (N, K), M % 4 == 0
// for A stored (K, M), N % 4 == 0 for B (K, N); and K > 0. The wrapper checks this.
//
// Formula: out[m, n] (+)= Σ_k op(A)[m, k] · op(B)[k, n]. Reference: matmulRef in matmul.ref.ts.
// Threading: invocation (x, y) computes out[8y..8y+7, 8x..8x+7] as four mat4x4 blocks. Per step of
// 4 along K it reads op(A)[8 × 4] and op(B)[4 × 8] as 16 vec4 loads along whichever axis is
// contiguous (k for A (M, K) and B (N, K), m or n otherwise) and adds four mat4x4 products. Edges as in matmul_register: rows and columns clamped when loading (whole
// vec4s when the vec4 runs along m or n) and dropped when storing; only a TRANS_A, !TRANS_B
// product can have a K % 4 remainder, run one k at a time.
// Dispatch (ceil(N / (8 · WG_X)), ceil(M / (8 · WG_Y))).
// Bindings:
//   p:   Params uniform
//   a:   (M, K) f32, or (K, M) when TRANS_A, read as vec4
//   b:   (K, N) f32, or (N, K) when TRANS_B, read as vec4
//   out: (M, N) f32

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
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// vec4 index of op(A)[m + i, 0..3] for i = 0..3 (rows clamped to M - 1); when TRANS_A, of
// op(A)[m..m+3, 0] in every lane (clamped to the last vec4 of a row of A).
fn a_base(m: u32) -> vec4<u32> {
  if (TRANS_A) { return vec4<u32>(min(m, p.M - 4u) / 4u); }
  return min(vec4<u32>(m) + LANES, vec4<u32>(p.M - 1u)) * (p.K / 4u);
}

// vec4 index of op(B)[0..3, n + j] for j = 0..3 when TRANS_B, else of op(B)[0, n..n+3].
fn b_base(n: u32) -> vec4<u32> {
  if (TRANS_B) { return min(vec4<u32>(n) + LANES, vec4<u32>(p.N - 1u)) * (p.K / 4u); }
  return vec4<u32>(min(n, p.N - 4u) / 4u);
}

// op(A)[4 rows, k..k+3], k % 4 == 0: column kk is op(A)[rows, k + kk].
fn a_block(r: vec4<u32>, k: u32) -> mat4x4<f32> {
  if (TRANS_A) {
    let s = p.M / 4u;
    let o = k * s + r.x;
    return mat4x4<f32>(a[o], a[o + s], a[o + 2u * s], a[o + 3u * s]);
  }
  let k4 = k / 4u;
  return transpose(mat4x4<f32>(a[r.x + k4], a[r.y + k4], a[r.z + k4], a[r.w + k4]));
}

// op(B)[k..k+3, 4 columns], k % 4 == 0: column j is op(B)[k..k+3, n + j].
fn b_block(c: vec4<u32>, k: u32) -> mat4x4<f32> {
  if (TRANS_B) {
    let k4 = k / 4u;
    return mat4x4<f32>(b[c.x + k4], b[c.y + k4], b[c.z + k4], b[c.w + k4]);
  }
  let s = p.N / 4u;
  let o = k * s + c.x;
  return transpose(mat4x4<f32>(b[o], b[o + s], b[o + 2u * s], b[o + 3u * s]));
}

// op(A)[4 rows, k] and op(B)[k, 4 columns] for the K % 4 remainder.
fn a_col(r: vec4<u32>, k: u32) -> vec4<f32> {
  if (TRANS_A) { return a[k * (p.M / 4u) + r.x]; }
  let i = r + vec4<u32>(k / 4u);
  return vec4<f32>(a[i.x][k % 4u], a[i.y][k % 4u], a[i.z][k % 4u], a[i.w][k % 4u]);
}
fn b_row(c: vec4<u32>, k: u32) -> vec4<f32> {
  if (!TRANS_B) { return b[k * (p.N / 4u) + c.x]; }
  let i = c + vec4<u32>(k / 4u);
  return vec4<f32>(b[i.x][k % 4u], b[i.y][k % 4u], b[i.z][k % 4u], b[i.w][k % 4u]);
}

// Column j = x · y[j]: the rank-1 update of one k.
fn outer(x: vec4<f32>, y: vec4<f32>) -> mat4x4<f32> {
  return mat4x4<f32>(x * y.x, x * y.y, x * y.z, x * y.w);
}

fn store(o: u32, v: f32) {
  if (p.accumulate != 0u) { out[o] += v; } else { out[o] = v; }
}
// out[m, n..n+3] (+)= v inside (M, N); the caller checks n < N.
fn store_row(m: u32, n: u32, v: vec4<f32>) {
  if (m >= p.M) { return; }
  let o = m * p.N + n;
  store(o, v.x);
  if (n + 1u < p.N) { store(o + 1u, v.y); }
  if (n + 2u < p.N) { store(o + 2u, v.z); }
  if (n + 3u < p.N) { store(o + 3u, v.w); }
}

// The 4 × 4 block c (c[j][i] = out[m + i, n + j]), row by row (see matmul_register.wgsl).
fn store_block(m: u32, n: u32, c: mat4x4<f32>) {
  if (n >= p.N) { return; }
  let rows = transpose(c);
  store_row(m, n, rows[0]);
  store_row(m + 1u, n, rows[1]);
  store_row(m + 2u, n, rows[2]);
  store_row(m + 3u, n, rows[3]);
}

@compute @workgroup_size(WG_X, WG_Y)
fn matmul_register_vec4(@builtin(global_invocation_id) gid: vec3u) {
  let m0 = gid.y * 8u;
  let n0 = gid.x * 8u;
  if (m0 >= p.M || n0 >= p.N) { return; }
  let r0 = a_base(m0);
  let r1 = a_base(m0 + 4u);
  let c0 = b_base(n0);
  let c1 = b_base(n0 + 4u);
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
