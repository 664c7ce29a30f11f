// residual_forward: out = a + b, elementwise over n floats (the residual stream add).
//
// Formula: out[i] = a[i] + b[i].
// Reference: residualForwardRef in residual.ref.ts.
// Threading: a workgroup of WG invocations covers a block of WG * 4 elements; invocation l handles
// block + l + k * WG for k = 0..3, straight-line (neighbouring invocations touch neighbouring
// addresses). Workgroups lie on a 2-D grid (group_index) so the count may exceed one dimension's
// limit; dispatch (x, y) with x * y >= ceil(n / (WG * 4)).
// Bindings:
//   p:   Params uniform
//   a:   (n) f32
//   b:   (n) f32
//   out: (n) f32, aliasing neither a nor b

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn add_at(i: u32) {
  if (i < p.n) { out[i] = a[i] + b[i]; }
}

@compute @workgroup_size(WG)
fn residual_forward(
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
