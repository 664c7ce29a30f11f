// rmsnorm_backward: gradients of out = x · r · w (r = 1 / sqrt(mean(x²) + eps), saved as rstd),
// accumulated into dinp (N, C) and dweight (C), in one dispatch and without atomics.
//
// Formula (y = x·r·w per row, Σ over the row's C columns):
//   dinp[n, c]  += r · w[c] · dout[n, c] − x[n, c] · r³ · (Σ_j dout[n, j] · w[j] · x[n, j]) / C
//   dweight[c]  += Σ_n dout[n, c] · x[n, c] · r[n]
// Computed as dinp += r · (w·dout − x̂ · Σ_j (dout·w·x̂)_j / C) with x̂ = x·r, so every
// intermediate stays O(|dout|·|w|): r³ alone underflows f32 for |x| ≳ 1e13.
// Reference: rmsnormBackwardRef in rmsnorm.ref.ts.
// Threading: a flat index over C + N invocations, WG per workgroup, 2-D grid of
// ceil((C + N) / WG) workgroups. Invocation c < C owns dweight[c] and loops over the N rows
// (neighbouring invocations read neighbouring columns); invocation C + n owns row n of dinp (two
// passes over its C values). The long column loops come first so that they start first. Each
// output has a single writer, so no atomics and no barriers (barriers are slow on software
// adapters such as SwiftShader; see rmsnorm_forward).
// Bindings:
//   p:       Params uniform
//   dout:    (N, C) f32
//   inp:     (N, C) f32
//   weight:  (C) f32
//   rstd:    (N) f32, from rmsnorm_forward
//   dinp:    (N, C) f32, accumulated
//   dweight: (C) f32, accumulated

#include "common/grid_lib.wgsl"

struct Params {
  N: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> inp: array<f32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;
@group(0) @binding(4) var<storage, read> rstd: array<f32>;
@group(0) @binding(5) var<storage, read_write> dinp: array<f32>;
@group(0) @binding(6) var<storage, read_write> dweight: array<f32>;

// dinp[n, :] += ∂L/∂x for row n.
fn row_gradient(n: u32) {
  let row = n * p.C;
  let r = rstd[n];
  var dot = 0.0; // Σ_j dout · w · x̂
  for (var c = 0u; c < p.C; c++) {
    dot += dout[row + c] * weight[c] * (inp[row + c] * r);
  }
  let mean_dot = dot / f32(p.C);
  for (var c = 0u; c < p.C; c++) {
    dinp[row + c] += r * (weight[c] * dout[row + c] - inp[row + c] * r * mean_dot);
  }
}

// dweight[c] += Σ_n dout[n, c] · x[n, c] · r[n].
fn weight_gradient(c: u32) {
  var acc = 0.0;
  for (var n = 0u; n < p.N; n++) {
    let i = n * p.C + c;
    acc += dout[i] * inp[i] * rstd[n];
  }
  dweight[c] += acc;
}

@compute @workgroup_size(WG)
fn rmsnorm_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = invocation_index(wid, nwg, l);
  if (i < p.C) {
    weight_gradient(i);
  } else if (i - p.C < p.N) {
    row_gradient(i - p.C);
  }
}
