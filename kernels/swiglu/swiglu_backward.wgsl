// swiglu_backward: gradients of out = silu(gate) · up, accumulated into dgate and dup.
//
// Formula: with g = gate[i], u = up[i], s = σ(g), s̄ = 1 − s = σ(−g):
//   dgate[i] += dout[i] · u · s · (1 + g · s̄)     (d silu/dg = s + g·s·(1 − s))
//   dup[i]   += dout[i] · g · s                   (silu(g))
// s and s̄ both come from e = e^(−|g|) ∈ (0, 1] (one is 1/(1+e), the other e/(1+e)), so neither
// loses precision to 1 − s nor overflows: for g ≫ 0, s̄ ≈ e and g·s̄ → 0; for g ≪ 0, s → 0.
// Reference: swigluBackwardRef in swiglu.ref.ts.
// Threading: as swiglu_forward: WG invocations per block of WG * 4 elements, invocation l
// handles block + l + k * WG for k = 0..3; 2-D grid of ceil(n / (WG * 4)) workgroups.
// Bindings:
//   p:     Params uniform
//   dout:  (n) f32
//   gate:  (n) f32
//   up:    (n) f32
//   dgate: (n) f32, accumulated
//   dup:   (n) f32, accumulated

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> gate: array<f32>;
@group(0) @binding(3) var<storage, read> up: array<f32>;
@group(0) @binding(4) var<storage, read_write> dgate: array<f32>;
@group(0) @binding(5) var<storage, read_write> dup: array<f32>;

// (σ(g), σ(−g)) without overflow or cancellation.
fn sigmoid_pair(g: f32) -> vec2<f32> {
  let e = exp(-abs(g));
  let r = 1.0 / (1.0 + e);
  if (g >= 0.0) { return vec2<f32>(r, e * r); }
  return vec2<f32>(e * r, r);
}

fn swiglu_grad_at(i: u32) {
  if (i >= p.n) { return; }
  let g = gate[i];
  let d = dout[i];
  let s = sigmoid_pair(g);
  dgate[i] += d * up[i] * s.x * (1.0 + g * s.y);
  dup[i] += d * g * s.x;
}

@compute @workgroup_size(WG)
fn swiglu_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = group_index(wid, nwg) * WG * PER_INVOCATION + l;
  swiglu_grad_at(i);
  swiglu_grad_at(i + WG);
  swiglu_grad_at(i + 2u * WG);
  swiglu_grad_at(i + 3u * WG);
}
