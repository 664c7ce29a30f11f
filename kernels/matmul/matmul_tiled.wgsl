// matmul_tiled: out(M, N) = op(A) · op(B), optionally accumulated; the same contract as
// matmul_naive, computed with shared-memory tiles and a TM × TN block of outputs per invocation.
//
// Formula: out[m, n] (+)= Σ_k op(A)[m, k] · op(B)[k, n] (see matmul_naive.wgsl for the layouts).
// Reference: matmulRef in matmul.ref.ts.
// Threading: a workgroup of 16 × 16 invocations computes a BM × BN = 64 × 64 tile of out.
// For each K-slab of BK = 16 it loads op(A)[64 × 16] and op(B)[16 × 64] into workgroup memory
// (4 loads per invocation each, zero outside the matrix), then invocation (x, y) accumulates the
// 4 × 4 block at rows 4y..4y+3 and columns 4x..4x+3 of the tile in four vec4 registers: the slabs
// are stored as vec4 along m and n, so each step is two vec4 reads and four vec4 FMAs. (Scalar
// arrays indexed in a loop stay in memory on software adapters such as SwiftShader.)
// Dispatch (ceil(N / 64), ceil(M / 64)).
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

const WG: u32 = 16u;          // invocations per side
const BM: u32 = 64u;          // tile rows (m)
const BN: u32 = 64u;          // tile columns (n)
const BK: u32 = 16u;          // K-slab depth
const LOADS: u32 = 4u;        // (BM * BK) / (WG * WG) elements loaded per invocation per slab

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> tile_a: array<vec4<f32>, 256>; // [BK][BM / 4]: op(A) slab, k-major, vec4 along m
var<workgroup> tile_b: array<vec4<f32>, 256>; // [BK][BN / 4]: op(B) slab, k-major, vec4 along n

// op(A)[m, k], zero outside (M, K).
fn load_a(m: u32, k: u32) -> f32 {
  if (m >= p.M || k >= p.K) { return 0.0; }
  return a[a_index(m, k)];
}

// op(B)[k, n], zero outside (K, N).
fn load_b(k: u32, n: u32) -> f32 {
  if (k >= p.K || n >= p.N) { return 0.0; }
  return b[b_index(k, n)];
}

// Writes one output, overwriting or accumulating, if it lies inside (M, N).
fn store(m: u32, n: u32, v: f32) {
  if (m >= p.M || n >= p.N) { return; }
  store_out(out_index(m, n), v);
}

@compute @workgroup_size(16, 16)
fn matmul_tiled(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  var acc0 = vec4<f32>(0.0); // row 4y + 0, columns 4x..4x+3
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);

  for (var k0 = 0u; k0 < p.K; k0 += BK) {
    for (var i = 0u; i < LOADS; i++) {
      let e = li + i * WG * WG;
      // Walk the slab along whichever axis is contiguous in memory.
      var mm: u32; var ka: u32;
      if (TRANS_A) { ka = e / BM; mm = e % BM; } else { mm = e / BK; ka = e % BK; }
      tile_a[ka * (BM / 4u) + mm / 4u][mm % 4u] = load_a(m0 + mm, k0 + ka);
      var nn: u32; var kb: u32;
      if (TRANS_B) { nn = e / BK; kb = e % BK; } else { kb = e / BN; nn = e % BN; }
      tile_b[kb * (BN / 4u) + nn / 4u][nn % 4u] = load_b(k0 + kb, n0 + nn);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let av = tile_a[kk * (BM / 4u) + lid.y];
      let bv = tile_b[kk * (BN / 4u) + lid.x];
      acc0 += av.x * bv;
      acc1 += av.y * bv;
      acc2 += av.z * bv;
      acc3 += av.w * bv;
    }
    workgroupBarrier();
  }

  let m = m0 + lid.y * 4u;
  let n = n0 + lid.x * 4u;
  let rows = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) {
      store(m + i, n + j, rows[i][j]);
    }
  }
}
