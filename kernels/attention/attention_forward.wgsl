// attention_forward: segment-aware causal self-attention over packed rows, one head at a time,
// with grouped-query attention: query head h reads kv head j = h / (NH / NKV) (NKV = NH: MHA).
//
// Formula, for row b, head h, query t with segment id g = seg[b, t]:
//   allowed(t) = { s ≤ t : seg[b, s] == g }, and a padding query (g == 0) has none;
//   S[t, s] = scale · q[b, t, h, :] · k[b, s, j, :],  scale = 1/sqrt(hs)
//   lse[b, h, t] = log Σ_{s ∈ allowed(t)} exp(S[t, s])
//   out[b, t, h, :] = Σ_{s ∈ allowed(t)} exp(S[t, s] − lse[b, h, t]) · v[b, s, j, :]
// A padding query gets out = 0 and lse = 0. A non-padding query always attends to itself.
// Reference: attentionForwardRef in attention.ref.ts.
// Threading: one invocation per (b, t, h) query, WG consecutive queries of one (b, h) per
// workgroup; dispatch (ceil(T / WG), NH, B). Each invocation walks keys s = 0..t once, skipping
// other segments, with an online softmax (running max m and sum l) in base 2: scores are taken
// as S · log2(e) so exp2 can be used (exp loses ~2e-6 relative on SwiftShader). The head vectors live
// in vec4 registers (HS4 = hs / 4 is an override, so loops over it have a constant trip count).
// Bindings (out and lse must not share a buffer with any input):
//   p:           Params uniform
//   q:           (B, T, NH, hs) f32, read as vec4
//   k, v:        (B, T, NKV, hs) f32, read as vec4
//   segment_ids: (B, T) i32, 0 = padding
//   out:         (B, T, NH, hs) f32, written as vec4
//   lse:         (B, NH, T) f32, natural log

#include "attention/attention_lib.wgsl"

struct Params {
  B: u32,
  T: u32,
  NH: u32,
  NKV: u32, // kv heads; divides NH
  scale_log2e: f32, // log2(e) / sqrt(hs)
}

override WG: u32 = 64u;
override HS4: u32 = 4u; // hs / 4, at most MAX_HS4
const MAX_HS4: u32 = 16u;
const NEG_BIG: f32 = -3.0e38; // running max before the first key; exp2(NEG_BIG − s) == 0

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> segment_ids: array<i32>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> lse: array<f32>;

fn segment(b: u32, t: u32) -> i32 {
  return segment_ids[b * p.T + t];
}

@compute @workgroup_size(WG)
fn attention_forward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let t = wid.x * WG + li;
  let h = wid.y;
  let b = wid.z;
  if (t >= p.T) { return; }
  let qi = head_vec4(b, t, h);
  let g = segment(b, t);
  if (g == 0) {
    for (var d = 0u; d < HS4; d++) { out[qi + d] = vec4<f32>(0.0); }
    lse[row_index(b, h, t)] = 0.0;
    return;
  }

  var qs: array<vec4<f32>, MAX_HS4>; // q · scale · log2(e)
  var acc: array<vec4<f32>, MAX_HS4>; // Σ exp2(score − m) · v
  for (var d = 0u; d < HS4; d++) { qs[d] = q[qi + d] * p.scale_log2e; }
  let j = h / group_size(); // the kv head that query head h reads
  var m = NEG_BIG;
  var l = 0.0;
  for (var s = 0u; s <= t; s++) {
    if (segment(b, s) != g) { continue; }
    let ki = kv_vec4(b, s, j);
    var dot4 = vec4<f32>(0.0);
    for (var d = 0u; d < HS4; d++) { dot4 += qs[d] * k[ki + d]; }
    let score = hsum(dot4);
    let m_new = max(m, score);
    let corr = exp2(m - m_new);
    let w = exp2(score - m_new);
    l = l * corr + w;
    for (var d = 0u; d < HS4; d++) { acc[d] = acc[d] * corr + w * v[ki + d]; }
    m = m_new;
  }
  let inv_l = 1.0 / l;
  for (var d = 0u; d < HS4; d++) { out[qi + d] = acc[d] * inv_l; }
  lse[row_index(b, h, t)] = (m + log2(l)) * LN2;
}
