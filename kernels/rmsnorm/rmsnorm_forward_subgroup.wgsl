// rmsnorm_forward_subgroup: rmsnorm_forward (same outputs, same contract) with one workgroup per
// row and the sum of squares reduced by subgroup operations; chosen where the device has the
// `subgroups` feature (rmsnorm.ts).
//
// Formula: r[n] = 1 / sqrt(Σ_c inp[n, c]² / C + eps); out[n, c] = inp[n, c] · r[n] · weight[c];
// rstd[n] = r[n]. Σ x² is accumulated in f32 (rows need Σ x² < 3.4e38), in a different order from
// rmsnorm_forward: WG partial sums, combined by common/subgroup_lib.wgsl.
// Reference: rmsnormForwardRef in rmsnorm.ref.ts.
// Threading: workgroup n (row = wid.y · num_workgroups.x + wid.x) of WG invocations; invocation i
// squares c = i, i + WG, ... (neighbouring invocations read neighbouring values), the workgroup
// sums them (workgroup_sum), then invocation i scales the same columns. 2-D grid of N workgroups.
// Bindings:
//   p:      Params uniform
//   inp:    (N, C) f32
//   weight: (C) f32
//   out:    (N, C) f32
//   rstd:   (N) f32

enable subgroups;

#include "common/grid_lib.wgsl"
#include "common/subgroup_lib.wgsl"

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

var<workgroup> sg_part: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn rmsnorm_forward_subgroup(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
  @builtin(subgroup_invocation_id) lane: u32,
) {
  let n = group_index(wid, nwg);
  if (n >= p.N) { return; } // uniform across the workgroup
  let row = n * p.C;
  var ss = 0.0;
  for (var c = li; c < p.C; c += WG) {
    let x = inp[row + c];
    ss += x * x;
  }
  let total = workgroup_sum(vec2<f32>(ss, 0.0), li, lane).x;
  let r = inverseSqrt(total / f32(p.C) + p.eps);
  if (li == 0u) { rstd[n] = r; }
  for (var c = li; c < p.C; c += WG) {
    out[row + c] = inp[row + c] * r * weight[c];
  }
}
