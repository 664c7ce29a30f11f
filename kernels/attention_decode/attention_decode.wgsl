// attention_decode: the attention step of sampling with a KV cache. The new token of row b
// (query q[b, h]) attends to the cached keys/values of its own row, slots 0..n_b−1.
//
// Formula, for row b, head h reading kv head j = h / (NH / NKV) (grouped-query attention, as
// attention_forward.wgsl; NKV = NH is multi-head), with n_b = clamp(lengths[b], 0, L):
//   S[s] = scale · q[b, h, :] · k_cache[b, s, j, :]   for s < n_b,  scale = 1/sqrt(hs)
//   out[b, h, :] = Σ_{s < n_b} exp(S[s] − max S) / Σ_s exp(S[s] − max S) · v_cache[b, s, j, :]
// n_b = 0 (an inactive row) gives out = 0. The cache already holds the new token's own k/v at
// slot n_b − 1; slots ≥ n_b are never read. A length outside 0..L is clamped (the reference
// throws; lengths live on the GPU and are not checked by the wrapper).
// Reference: attentionDecodeRef in attention-decode.ref.ts.
// Threading: one invocation per (b, h), WG of them per workgroup, a 2-D grid of
// ceil(B·NH / WG) workgroups (flat index wid.y · nwg.x + wid.x). Each invocation walks its n_b
// keys once with an online softmax (running max m and sum l) in base 2, as attention_forward
// does: scores are taken as S · log2(e) so exp2 can be used (exp loses ~2e-6 relative on
// SwiftShader). The head vectors live in named vec4 registers q0..q15 and a0..a15, each use
// guarded by `HS4 > d` (HS4 = hs / 4 is an override, so the guards are constants and the unused
// registers compile out): written out by hand because private arrays indexed in a loop over HS4,
// as attention_forward has them, measured 2–2.5× slower on SwiftShader (B = 64..256, L = 64..128,
// NH = 4, hs = 16..32). No workgroup memory and no barriers (costly on SwiftShader); the
// workgroup size made no measurable difference there (4, 16 or 64; 1 is 3× slower).
// Bindings (out must not share a buffer with any input):
//   p:        Params uniform
//   q:        (B, NH, hs) f32, read as vec4
//   k_cache:  (B, L, NKV, hs) f32, read as vec4
//   v_cache:  (B, L, NKV, hs) f32, read as vec4
//   lengths:  (B) i32, valid slots per row
//   out:      (B, NH, hs) f32, written as vec4

#include "common/grid_lib.wgsl"

struct Params {
  B: u32,
  L: u32,
  NH: u32,
  NKV: u32, // kv heads; divides NH
  scale_log2e: f32, // log2(e) / sqrt(hs)
}

override WG: u32 = 64u;
override HS4: u32 = 4u; // hs / 4, at most 16 (registers q0..q15, a0..a15)
const NEG_BIG: f32 = -3.0e38; // running max before the first key; exp2(NEG_BIG − s) == 0

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k_cache: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v_cache: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> lengths: array<i32>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<f32>>;

// vec4 index of element 0 of head h at row b in a (B, NH, hs) tensor (q, out).
fn query_vec4(b: u32, h: u32) -> u32 {
  return (b * p.NH + h) * HS4;
}

// vec4 index of element 0 of the kv head that query head h reads (h / (NH / NKV)) at slot s of
// row b in a (B, L, NKV, hs) cache.
fn slot_vec4(b: u32, s: u32, h: u32) -> u32 {
  return ((b * p.L + s) * p.NKV + h / (p.NH / p.NKV)) * HS4;
}

// Valid slots of row b, clamped to 0..L.
fn valid_slots(b: u32) -> u32 {
  return u32(clamp(lengths[b], 0, i32(p.L)));
}

fn hsum(x: vec4<f32>) -> f32 {
  return x.x + x.y + x.z + x.w;
}

@compute @workgroup_size(WG)
fn attention_decode(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let i = invocation_index(wid, nwg, li);
  if (i >= p.B * p.NH) { return; }
  let b = i / p.NH;
  let h = i % p.NH;
  let qi = query_vec4(b, h);
  let n = valid_slots(b);

  // qd = q[b, h, 4d..4d+3] · scale · log2(e); ad = Σ_s exp2(score_s − m) · v[b, s, h, 4d..4d+3].
  // Registers d ≥ HS4 stay zero and their statements are compiled out (HS4 is an override).
  var q0: vec4<f32>; var a0: vec4<f32>;
  var q1: vec4<f32>; var a1: vec4<f32>;
  var q2: vec4<f32>; var a2: vec4<f32>;
  var q3: vec4<f32>; var a3: vec4<f32>;
  var q4: vec4<f32>; var a4: vec4<f32>;
  var q5: vec4<f32>; var a5: vec4<f32>;
  var q6: vec4<f32>; var a6: vec4<f32>;
  var q7: vec4<f32>; var a7: vec4<f32>;
  var q8: vec4<f32>; var a8: vec4<f32>;
  var q9: vec4<f32>; var a9: vec4<f32>;
  var q10: vec4<f32>; var a10: vec4<f32>;
  var q11: vec4<f32>; var a11: vec4<f32>;
  var q12: vec4<f32>; var a12: vec4<f32>;
  var q13: vec4<f32>; var a13: vec4<f32>;
  var q14: vec4<f32>; var a14: vec4<f32>;
  var q15: vec4<f32>; var a15: vec4<f32>;
  q0 = q[qi + 0u] * p.scale_log2e;
  if (HS4 > 1u) { q1 = q[qi + 1u] * p.scale_log2e; }
  if (HS4 > 2u) { q2 = q[qi + 2u] * p.scale_log2e; }
  if (HS4 > 3u) { q3 = q[qi + 3u] * p.scale_log2e; }
  if (HS4 > 4u) { q4 = q[qi + 4u] * p.scale_log2e; }
  if (HS4 > 5u) { q5 = q[qi + 5u] * p.scale_log2e; }
  if (HS4 > 6u) { q6 = q[qi + 6u] * p.scale_log2e; }
  if (HS4 > 7u) { q7 = q[qi + 7u] * p.scale_log2e; }
  if (HS4 > 8u) { q8 = q[qi + 8u] * p.scale_log2e; }
  if (HS4 > 9u) { q9 = q[qi + 9u] * p.scale_log2e; }
  if (HS4 > 10u) { q10 = q[qi + 10u] * p.scale_log2e; }
  if (HS4 > 11u) { q11 = q[qi + 11u] * p.scale_log2e; }
  if (HS4 > 12u) { q12 = q[qi + 12u] * p.scale_log2e; }
  if (HS4 > 13u) { q13 = q[qi + 13u] * p.scale_log2e; }
  if (HS4 > 14u) { q14 = q[qi + 14u] * p.scale_log2e; }
  if (HS4 > 15u) { q15 = q[qi + 15u] * p.scale_log2e; }
  var m = NEG_BIG;
  var l = 0.0;
  for (var s = 0u; s < n; s++) {
    let ki = slot_vec4(b, s, h);
    var dot4 = q0 * k_cache[ki];
    if (HS4 > 1u) { dot4 += q1 * k_cache[ki + 1u]; }
    if (HS4 > 2u) { dot4 += q2 * k_cache[ki + 2u]; }
    if (HS4 > 3u) { dot4 += q3 * k_cache[ki + 3u]; }
    if (HS4 > 4u) { dot4 += q4 * k_cache[ki + 4u]; }
    if (HS4 > 5u) { dot4 += q5 * k_cache[ki + 5u]; }
    if (HS4 > 6u) { dot4 += q6 * k_cache[ki + 6u]; }
    if (HS4 > 7u) { dot4 += q7 * k_cache[ki + 7u]; }
    if (HS4 > 8u) { dot4 += q8 * k_cache[ki + 8u]; }
    if (HS4 > 9u) { dot4 += q9 * k_cache[ki + 9u]; }
    if (HS4 > 10u) { dot4 += q10 * k_cache[ki + 10u]; }
    if (HS4 > 11u) { dot4 += q11 * k_cache[ki + 11u]; }
    if (HS4 > 12u) { dot4 += q12 * k_cache[ki + 12u]; }
    if (HS4 > 13u) { dot4 += q13 * k_cache[ki + 13u]; }
    if (HS4 > 14u) { dot4 += q14 * k_cache[ki + 14u]; }
    if (HS4 > 15u) { dot4 += q15 * k_cache[ki + 15u]; }
    let score = hsum(dot4);
    let m_new = max(m, score);
    let corr = exp2(m - m_new);
    let w = exp2(score - m_new);
    l = l * corr + w;
    a0 = a0 * corr + w * v_cache[ki + 0u];
    if (HS4 > 1u) { a1 = a1 * corr + w * v_cache[ki + 1u]; }
    if (HS4 > 2u) { a2 = a2 * corr + w * v_cache[ki + 2u]; }
    if (HS4 > 3u) { a3 = a3 * corr + w * v_cache[ki + 3u]; }
    if (HS4 > 4u) { a4 = a4 * corr + w * v_cache[ki + 4u]; }
    if (HS4 > 5u) { a5 = a5 * corr + w * v_cache[ki + 5u]; }
    if (HS4 > 6u) { a6 = a6 * corr + w * v_cache[ki + 6u]; }
    if (HS4 > 7u) { a7 = a7 * corr + w * v_cache[ki + 7u]; }
    if (HS4 > 8u) { a8 = a8 * corr + w * v_cache[ki + 8u]; }
    if (HS4 > 9u) { a9 = a9 * corr + w * v_cache[ki + 9u]; }
    if (HS4 > 10u) { a10 = a10 * corr + w * v_cache[ki + 10u]; }
    if (HS4 > 11u) { a11 = a11 * corr + w * v_cache[ki + 11u]; }
    if (HS4 > 12u) { a12 = a12 * corr + w * v_cache[ki + 12u]; }
    if (HS4 > 13u) { a13 = a13 * corr + w * v_cache[ki + 13u]; }
    if (HS4 > 14u) { a14 = a14 * corr + w * v_cache[ki + 14u]; }
    if (HS4 > 15u) { a15 = a15 * corr + w * v_cache[ki + 15u]; }
    m = m_new;
  }
  let inv_l = select(0.0, 1.0 / l, n > 0u); // an inactive row (n = 0) writes zeros
  out[qi + 0u] = a0 * inv_l;
  if (HS4 > 1u) { out[qi + 1u] = a1 * inv_l; }
  if (HS4 > 2u) { out[qi + 2u] = a2 * inv_l; }
  if (HS4 > 3u) { out[qi + 3u] = a3 * inv_l; }
  if (HS4 > 4u) { out[qi + 4u] = a4 * inv_l; }
  if (HS4 > 5u) { out[qi + 5u] = a5 * inv_l; }
  if (HS4 > 6u) { out[qi + 6u] = a6 * inv_l; }
  if (HS4 > 7u) { out[qi + 7u] = a7 * inv_l; }
  if (HS4 > 8u) { out[qi + 8u] = a8 * inv_l; }
  if (HS4 > 9u) { out[qi + 9u] = a9 * inv_l; }
  if (HS4 > 10u) { out[qi + 10u] = a10 * inv_l; }
  if (HS4 > 11u) { out[qi + 11u] = a11 * inv_l; }
  if (HS4 > 12u) { out[qi + 12u] = a12 * inv_l; }
  if (HS4 > 13u) { out[qi + 13u] = a13 * inv_l; }
  if (HS4 > 14u) { out[qi + 14u] = a14 * inv_l; }
  if (HS4 > 15u) { out[qi + 15u] = a15 * inv_l; }
}
