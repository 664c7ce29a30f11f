// matmul_register's loads for f16 operands (prepended, after one of the two storage files, to
// matmul_register.wgsl, which documents the scheme): any M, K, N. The same loads as
// matmul_register_loads.wgsl, element by element through `a_at` / `b_at`, which the storage file
// defines: matmul_f16_native.wgsl (WGSL f16, where the device has `shader-f16`) or
// matmul_f16_packed.wgsl (two f16 to a u32, unpacked with core WGSL). Each returns the operand as
// an f32, exactly (every f16 is an f32), so the products and sums are f32 whichever file it is.
// Reference: matmulF16Ref in matmul-f16.ts's tests (matmulRef of the operands' f16 values).
// Needs from the storage file: `fn a_at(i: u32) -> f32` and `fn b_at(i: u32) -> f32`, element i
// of a and b in their (M, K) / (K, M) and (K, N) / (N, K) layouts.

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
  return vec4<f32>(a_at(o.x), a_at(o.y), a_at(o.z), a_at(o.w));
}

// op(B)[k, cols]: a row of four columns.
fn b_row(cols: vec4<u32>, k: u32) -> vec4<f32> {
  var step = p.N;
  if (TRANS_B) { step = 1u; }
  let o = cols + vec4<u32>(k * step);
  return vec4<f32>(b_at(o.x), b_at(o.y), b_at(o.z), b_at(o.w));
}

// op(A)[rows, k..k+3]: column kk is op(A)[rows, k + kk].
fn a_block(rows: vec4<u32>, k: u32) -> mat4x4<f32> {
  return mat4x4<f32>(a_col(rows, k), a_col(rows, k + 1u), a_col(rows, k + 2u), a_col(rows, k + 3u));
}

// op(B)[k..k+3, cols]: column j is op(B)[k..k+3, n + j], so a_block · b_block is the block product.
fn b_block(cols: vec4<u32>, k: u32) -> mat4x4<f32> {
  return transpose(mat4x4<f32>(b_row(cols, k), b_row(cols, k + 1u), b_row(cols, k + 2u), b_row(cols, k + 3u)));
}
