// matmul_register's vec4 loads (prepended to matmul_register.wgsl, which documents the scheme),
// for shapes whose contiguous rows start on 16-byte boundaries: K % 4 == 0 for A (M, K) or B (N, K), M % 4 == 0
// for A stored (K, M), N % 4 == 0 for B (K, N); and K > 0. The wrapper checks this.
// Per step of 4 along K, op(A)[8 × 4] and op(B)[4 × 8] are 16 vec4 loads along whichever axis is
// contiguous (k for A (M, K) and B (N, K), m or n otherwise). Rows and columns are clamped when
// loading (whole vec4s when the vec4 runs along m or n); only a TRANS_A, !TRANS_B product can have
// a K % 4 remainder.

@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;

// vec4 index of op(A)[m + i, 0..3] for i = 0..3 (rows clamped to M - 1); when TRANS_A, of
// op(A)[m..m+3, 0] in every lane (clamped to the last vec4 of a row of A).
fn a_start(m: u32) -> vec4<u32> {
  if (TRANS_A) { return vec4<u32>(min(m, p.M - 4u) / 4u); }
  return min(vec4<u32>(m) + LANES, vec4<u32>(p.M - 1u)) * (p.K / 4u);
}

// vec4 index of op(B)[0..3, n + j] for j = 0..3 when TRANS_B, else of op(B)[0, n..n+3].
fn b_start(n: u32) -> vec4<u32> {
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

