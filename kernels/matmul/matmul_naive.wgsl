// matmul_naive: out(M, N) = op(A) · op(B), optionally accumulated into out.
//
// Formula: out[m, n] (+)= Σ_k op(A)[m, k] · op(B)[k, n], where op(A) = A (M, K) or Aᵀ with
// A stored (K, M) when TRANS_A, and op(B) = B (K, N) or Bᵀ with B stored (N, K) when TRANS_B.
// Layouts used by training: nn (A·B), nt (A·Bᵀ), tn (Aᵀ·B).
// Reference: matmulRef in matmul.ref.ts.
// Threading: one invocation per output element; workgroup WG_X × WG_Y over (n, m);
// dispatch (ceil(N / WG_X), ceil(M / WG_Y)).
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
override WG_X: u32 = 16u;
override WG_Y: u32 = 16u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn matmul_naive(@builtin(global_invocation_id) gid: vec3u) {
  let n = gid.x;
  let m = gid.y;
  if (m >= p.M || n >= p.N) { return; }
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    acc += a[a_index(m, k)] * b[b_index(k, n)];
  }
  store_out(out_index(m, n), acc);
}
