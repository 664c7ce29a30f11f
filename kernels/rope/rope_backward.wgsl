// rope_backward: gradient of rope_forward, accumulated: dinp += Rᵀ · dout.
//
// rope_forward rotates each pair (x[i], x[i + half]) of a head by the angle a (see
// rope_forward.wgsl for a, inv_freq and the Hugging Face convention); the transpose rotates back:
//   dinp[n, h, i]        += dout[i] * cos(a) + dout[i + half] * sin(a)
//   dinp[n, h, i + half] += dout[i + half] * cos(a) - dout[i] * sin(a)
// Reference: ropeBackwardRef in rope.ref.ts.
// Threading: one invocation per (n, h, i) pair, as in rope_forward.
// Bindings (dinp must not share a buffer with dout):
//   p:         Params uniform
//   dout:      (N, NH, hs) f32
//   positions: (N) i32
//   dinp:      (N, NH, hs) f32, accumulated (+=)

#include "common/grid_lib.wgsl"
#include "rope/rope_lib.wgsl"

struct Params {
  N: u32,
  NH: u32,
  hs: u32,          // head size, even
  log2_theta: f32,  // log2(theta), rounded once on the host
}

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read_write> dinp: array<f32>;

@compute @workgroup_size(WG)
fn rope_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let half = p.hs / 2u;
  let g = invocation_index(wid, nwg, li);
  if (g >= p.N * p.NH * half) { return; }
  let i = g % half;
  let nh = g / half;            // n · NH + h
  let n = nh / p.NH;
  let lo = nh * p.hs + i;       // element i of the head; its partner is lo + half
  let cs = rope_cos_sin(positions[n], i, p.hs, p.log2_theta);
  let d0 = dout[lo];
  let d1 = dout[lo + half];
  dinp[lo] += d0 * cs.x + d1 * cs.y;
  dinp[lo + half] += d1 * cs.x - d0 * cs.y;
}
