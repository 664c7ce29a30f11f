// matmul_register's scalar loads (prepended to matmul_register.wgsl, which documents the scheme):
// any M, K, N.

@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;

// Offsets in a of op(A)[m + i, 0], i = 0..3, rows clamped to M - 1.
fn a_start(m: u32) -> vec4<u32> {
  let rows = min(vec4<u32>(m) + LANES, vec4<u32>(p.M - 1u));
  if (TRANS_A) { return rows; }
  return rows * p.K;
}

// Offsets in b of op(B)[0, n + j], j = 0..3, columns clamped to N - 1.
fn b_start(n: u32) -> vec4<u32> {
  let cols = min(vec4<u32>(n) + LANES, vec4<u32>(p.N - 1u));
  if (TRANS_B) { return cols * p.K; }
  return cols;
}

// op(A)[rows, k]: a column of four rows.
fn a_col(rows: vec4<u32>, k: u32) -> vec4<f32> {
  var step = 1u;
  if (TRANS_A) { step = p.M; }
  let o = rows + vec4<u32>(k * step);
  return vec4<f32>(a[o.x], a[o.y], a[o.z], a[o.w]);
}

// op(B)[k, cols]: a row of four columns.
fn b_row(cols: vec4<u32>, k: u32) -> vec4<f32> {
  var step = p.N;
  if (TRANS_B) { step = 1u; }
  let o = cols + vec4<u32>(k * step);
  return vec4<f32>(b[o.x], b[o.y], b[o.z], b[o.w]);
}

// op(A)[rows, k..k+3]: column kk is op(A)[rows, k + kk].
fn a_block(rows: vec4<u32>, k: u32) -> mat4x4<f32> {
  return mat4x4<f32>(a_col(rows, k), a_col(rows, k + 1u), a_col(rows, k + 2u), a_col(rows, k + 3u));
}

// op(B)[k..k+3, cols]: column j is op(B)[k..k+3, n + j], so a_block · b_block is the block product.
fn b_block(cols: vec4<u32>, k: u32) -> mat4x4<f32> {
  return transpose(mat4x4<f32>(b_row(cols, k), b_row(cols, k + 1u), b_row(cols, k + 2u), b_row(cols, k + 3u)));
}
