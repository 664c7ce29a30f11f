// accumulate: dst += src, elementwise over n floats. The backward of a residual add (each branch
// receives the incoming gradient), and the way any kernel's gradient is added to another.
//
// Formula: dst[i] = dst[i] + src[i].
// Reference: accumulateRef in residual.ref.ts.
// Threading: as residual_forward: WG invocations per block of WG * 4 elements, invocation l
// handles block + l + k * WG for k = 0..3; 2-D grid of ceil(n / (WG * 4)) workgroups.
// Bindings:
//   p:   Params uniform
//   src: (n) f32
//   dst: (n) f32, read and written, aliasing src nowhere

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

fn add_at(i: u32) {
  if (i < p.n) { dst[i] += src[i]; }
}

@compute @workgroup_size(WG)
fn accumulate(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = group_index(wid, nwg) * WG * PER_INVOCATION + l;
  add_at(i);
  add_at(i + WG);
  add_at(i + 2u * WG);
  add_at(i + 3u * WG);
}
