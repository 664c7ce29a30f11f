// swiglu_forward: out = silu(gate) · up, elementwise over n floats (the Llama MLP's gated unit).
//
// Formula: out[i] = silu(g) · u with g = gate[i], u = up[i], silu(g) = g · σ(g),
// σ(g) = 1 / (1 + e^(−g)). σ is evaluated from e^(−|g|) ∈ (0, 1], so no exp overflows for any
// finite g: silu(g) → g for g ≫ 0 and → −0 for g ≪ 0.
// Reference: swigluForwardRef in swiglu.ref.ts.
// Threading: a workgroup of WG invocations covers a block of WG * 4 elements; invocation l handles
// block + l + k * WG for k = 0..3, straight-line. 2-D grid of ceil(n / (WG * 4)) workgroups.
// Bindings:
//   p:    Params uniform
//   gate: (n) f32
//   up:   (n) f32
//   out:  (n) f32

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// σ(g) without overflow: e = e^(−|g|); σ = 1/(1+e) for g ≥ 0, e/(1+e) for g < 0.
fn sigmoid(g: f32) -> f32 {
  let e = exp(-abs(g));
  return select(e, 1.0, g >= 0.0) / (1.0 + e);
}

fn swiglu_at(i: u32) {
  if (i >= p.n) { return; }
  let g = gate[i];
  out[i] = g * sigmoid(g) * up[i];
}

@compute @workgroup_size(WG)
fn swiglu_forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = group_index(wid, nwg) * WG * PER_INVOCATION + l;
  swiglu_at(i);
  swiglu_at(i + WG);
  swiglu_at(i + 2u * WG);
  swiglu_at(i + 3u * WG);
}
