// embedding_forward: out(N, C) = the rows of wte(V, C) picked by ids(N), a token-embedding gather.
//
// Formula: out[n, c] = wte[ids[n], c] for 0 ≤ ids[n] < V; out[n, :] = 0 for any other id (never
// an out-of-bounds read; the reference throws for such an id instead).
// Reference: embeddingForwardRef in embedding.ref.ts.
// Threading: flat over the N * C outputs: a workgroup of WG invocations covers a block of WG * 4
// consecutive outputs, invocation l handles block + l + k * WG for k = 0..3, straight-line.
// 2-D grid of ceil(N * C / (WG * 4)) workgroups.
// Bindings:
//   p:   Params uniform
//   ids: (N) i32
//   wte: (V, C) f32
//   out: (N, C) f32

#include "common/grid_lib.wgsl"

struct Params {
  N: u32,
  C: u32,
  V: u32,
  _pad: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read> wte: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// wte[id, c], or 0 when id lies outside 0..V-1.
fn table_value(id: i32, c: u32) -> f32 {
  if (id < 0 || u32(id) >= p.V) { return 0.0; }
  return wte[u32(id) * p.C + c];
}

fn gather_at(i: u32) {
  if (i >= p.N * p.C) { return; }
  let n = i / p.C;
  out[i] = table_value(ids[n], i - n * p.C);
}

@compute @workgroup_size(WG)
fn embedding_forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = group_index(wid, nwg) * WG * PER_INVOCATION + l;
  gather_at(i);
  gather_at(i + WG);
  gather_at(i + 2u * WG);
  gather_at(i + 3u * WG);
}
