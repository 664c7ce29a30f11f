// attention_backward_prep: the per-query values the attention backward needs, packed in one row
// so that attention_backward fits in 8 storage bindings (the WebGPU default limit).
//
// Formula, for row b, head h, query t:
//   rows[b, h, t] = (lse[b, h, t] · log2(e),  D = Σ_d dout[b, t, h, d] · out[b, t, h, d],
//                    seg[b, t],  0)
// stored as vec4<u32> (the two floats bit-cast), read back by attention_backward. D_t is the
// flash-attention identity D_t = Σ_s P[t, s] · dP[t, s] = dout_t · out_t.
// Reference: the D and lse terms of attentionBackwardRef in attention.ref.ts.
// Threading: one invocation per (b, t, h); dispatch (ceil(T / WG), NH, B) as attention_backward.
// Bindings:
//   p:           Params uniform
//   dout, out:   (B, T, NH, hs) f32, read as vec4
//   lse:         (B, NH, T) f32
//   segment_ids: (B, T) i32
//   rows:        (B, NH, T) vec4<u32> scratch

#include "attention/attention_lib.wgsl"

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  NKV: u32, // unused here; the Params of the attention kernels are one struct
  scale_log2e: f32, // unused here
}

override WG: u32 = 64u;
override HS4: u32 = 4u; // hs / 4
const LOG2E: f32 = 1.4426950408889634;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> out: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> lse: array<f32>;
@group(0) @binding(4) var<storage, read> segment_ids: array<i32>;
@group(0) @binding(5) var<storage, read_write> rows: array<vec4<u32>>;

@compute @workgroup_size(WG)
fn attention_backward_prep(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = wid.x * WG + li;
  let h = wid.y;
  let b = wid.z;
  if (t >= p.T) { return; }
  let base = head_vec4(b, t, h);
  var dot4 = vec4<f32>(0.0);
  for (var d = 0u; d < HS4; d++) { dot4 += dout[base + d] * out[base + d]; }
  let r = row_index(b, h, t);
  let dsum = hsum(dot4);
  rows[r] = vec4<u32>(bitcast<u32>(lse[r] * LOG2E), bitcast<u32>(dsum), bitcast<u32>(segment_ids[b * p.T + t]), 0u);
}
