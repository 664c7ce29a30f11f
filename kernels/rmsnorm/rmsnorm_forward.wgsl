// rmsnorm_forward: Llama RMSNorm of each row, out = x / sqrt(mean(x²) + eps) · weight (no bias,
// no mean subtraction), saving the per-row reciprocal RMS for the backward.
//
// Formula: r[n] = 1 / sqrt(Σ_c inp[n, c]² / C + eps); out[n, c] = inp[n, c] · r[n] · weight[c];
// rstd[n] = r[n]. Σ x² is accumulated in f32, so rows need Σ x² < 3.4e38 (|x| up to ~1e18).
// Reference: rmsnormForwardRef in rmsnorm.ref.ts.
// Threading: one invocation per row, two passes over its C values (sum of squares, then scale);
// WG rows per workgroup, 2-D grid of ceil(N / WG) workgroups. No workgroup barriers: on software
// adapters (SwiftShader) a workgroup-per-row tree reduction measured about 10× slower.
// Bindings:
//   p:      Params uniform
//   inp:    (N, C) f32
//   weight: (C) f32
//   out:    (N, C) f32
//   rstd:   (N) f32

#include "common/grid_lib.wgsl"

struct Params {
  N: u32,
  C: u32,
  eps: f32,
  _pad: u32,
}

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;

// 1 / sqrt(mean(x²) + eps) of row n, whose values start at `row`.
fn reciprocal_rms(row: u32) -> f32 {
  var ss = 0.0;
  for (var c = 0u; c < p.C; c++) {
    let x = inp[row + c];
    ss += x * x;
  }
  return inverseSqrt(ss / f32(p.C) + p.eps);
}

@compute @workgroup_size(WG)
fn rmsnorm_forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let n = invocation_index(wid, nwg, l);
  if (n >= p.N) { return; }
  let row = n * p.C;
  let r = reciprocal_rms(row);
  rstd[n] = r;
  for (var c = 0u; c < p.C; c++) {
    out[row + c] = inp[row + c] * r * weight[c];
  }
}
