// widen_bf16: out[i] = the f32 of bf16 element i of `packed` (two to a word, element 2j the low
// half of word j), over n values; exact (the bf16 bits become an f32's top 16).
//
// Formula: out[i] = bitcast<f32>(((packed[i / 2] >> (16 * (i % 2))) & 0xffff) << 16).
// Reference: widenBf16Ref in bf16.ref.ts.
// Threading: one word (two values) per invocation, WG invocations a workgroup, 2-D grid of
// ceil(ceil(n / 2) / WG) workgroups.
// Bindings:
//   p:      Params uniform
//   packed: (ceil(n / 2)) u32
//   out:    (n) f32

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
}

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> packed: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn widen_bf16(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let j = group_index(wid, nwg) * WG + l;
  let i = 2u * j;
  if (i >= p.n) { return; }
  let w = packed[j];
  out[i] = bitcast<f32>(w << 16u);
  if (i + 1u < p.n) { out[i + 1u] = bitcast<f32>(w & 0xffff0000u); }
}
