// matmul_lib: index math and the output write shared by matmul_naive, matmul_tiled and
// matmul_register (one contract, one Params layout: M, K, N, accumulate).
//
// Formula, for out(M, N) (+)= op(A) · op(B):
//   a_index(m, k) = m · K + k, or k · M + m when TRANS_A (A stored (K, M))   op(A)[m, k] = a[a_index]
//   b_index(k, n) = k · N + n, or n · K + k when TRANS_B (B stored (N, K))   op(B)[k, n] = b[b_index]
//   out_index(m, n) = m · N + n
//   store_out(o, v): out[o] = v, or out[o] += v when accumulate != 0
// Reference: the layouts of matmulRef in matmul.ref.ts.
// Needs from the including shader: `p`, the matmul Params uniform (M, K, N, accumulate: u32),
// `override TRANS_A: bool`, `override TRANS_B: bool` and the binding `out: array<f32>`.

fn a_index(m: u32, k: u32) -> u32 {
  if (TRANS_A) { return k * p.M + m; }
  return m * p.K + k;
}

fn b_index(k: u32, n: u32) -> u32 {
  if (TRANS_B) { return n * p.K + k; }
  return k * p.N + n;
}

fn out_index(m: u32, n: u32) -> u32 {
  return m * p.N + n;
}

fn store_out(o: u32, v: f32) {
  if (p.accumulate != 0u) { out[o] += v; } else { out[o] = v; }
}
