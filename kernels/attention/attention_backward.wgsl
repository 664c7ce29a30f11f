// attention_backward: gradients of attention_forward, accumulated into dq, dk, dv (+=).
//
// Formula (flash-attention backward), for row b, query head h reading kv head j = h / G (G = NH / NKV,
// as in attention_forward.wgsl), P[t, s] = exp(S[t, s] − lse_t) over the allowed pairs (s ≤ t,
// same non-zero segment) and 0 elsewhere:
//   dP[t, s] = dout_t · v_s,   D_t = dout_t · out_t,   dS[t, s] = P[t, s] · (dP[t, s] − D_t)
//   dq_t += scale · Σ_s dS[t, s] · k_s
//   dk_s += scale · Σ_{h in group j} Σ_t dS[t, s] · q_t
//   dv_s += Σ_{h in group j} Σ_t P[t, s] · dout_t
// Padding positions (segment 0) are neither queries nor keys: their gradients stay untouched.
// Reference: attentionBackwardRef in attention.ref.ts.
// Threading: one invocation per position i of (b, h), WG consecutive positions per workgroup;
// dispatch (ceil(T / WG), NH, B). Invocation i owns dq_i of query head h and, when h < NKV, dk_i
// and dv_i of kv head h, so no atomics: it walks the keys s = 0..i (as the query i, for dq_i),
// then, for each query head of group h, the queries t = i..T−1 (as the key i, for dk_i and dv_i),
// skipping other segments. Each walk costs the segment's length in total, so the work is
// balanced across positions; with G > 1 the workgroups of heads h < NKV do G walks as keys and
// the others none (whole workgroups, so no invocation waits on another). With G = 1 it is the
// multi-head kernel exactly. Scores are in base 2 (S · log2 e), as in the forward.
// Bindings (8 storage buffers: lse, D and the segment ids come packed in `rows`):
//   p:            Params uniform
//   q, dout:      (B, T, NH, hs) f32, read as vec4
//   k, v:         (B, T, NKV, hs) f32, read as vec4
//   rows:         (B, NH, T) vec4<u32> from attention_backward_prep: (lse·log2 e, D, seg, 0)
//   dq:           (B, T, NH, hs) f32, accumulated as vec4
//   dk, dv:       (B, T, NKV, hs) f32, accumulated as vec4

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

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> dout: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> rows: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> dq: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dk: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> dv: array<vec4<f32>>;

struct QueryRow {
  lse2: f32, // lse · log2(e)
  dsum: f32, // D = dout · out
  seg: i32,
}

fn query_row(b: u32, h: u32, t: u32) -> QueryRow {
  let r = rows[row_index(b, h, t)];
  return QueryRow(bitcast<f32>(r.x), bitcast<f32>(r.y), bitcast<i32>(r.z));
}

@compute @workgroup_size(WG)
fn attention_backward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let i = wid.x * WG + li;
  let h = wid.y;
  let b = wid.z;
  if (i >= p.T) { return; }
  let me = query_row(b, h, i);
  if (me.seg == 0) { return; }
  let ii = head_vec4(b, i, h);
  let G = group_size();
  let scale = p.scale_log2e * LN2;

  // As the query i: dq_i = scale · Σ_s dS[i, s] · k_s.
  var qs: array<vec4<f32>, MAX_HS4>; // q_i · scale · log2(e)
  var gout: array<vec4<f32>, MAX_HS4>; // dout_i
  var acc: array<vec4<f32>, MAX_HS4>;
  for (var d = 0u; d < HS4; d++) {
    qs[d] = q[ii + d] * p.scale_log2e;
    gout[d] = dout[ii + d];
  }
  for (var s = 0u; s <= i; s++) {
    if (query_row(b, h, s).seg != me.seg) { continue; }
    let si = kv_vec4(b, s, h / G);
    var sc4 = vec4<f32>(0.0);
    var dp4 = vec4<f32>(0.0);
    for (var d = 0u; d < HS4; d++) {
      sc4 += qs[d] * k[si + d];
      dp4 += gout[d] * v[si + d];
    }
    let ds = exp2(hsum(sc4) - me.lse2) * (hsum(dp4) - me.dsum);
    for (var d = 0u; d < HS4; d++) { acc[d] += ds * k[si + d]; }
  }
  for (var d = 0u; d < HS4; d++) { dq[ii + d] += scale * acc[d]; }

  // As the key i of kv head j = h (heads h ≥ NKV own no kv head): over the query heads hq of
  // group j, dk_i = scale · Σ_hq Σ_t dS[t, i] · q_t and dv_i = Σ_hq Σ_t P[t, i] · dout_t.
  if (h >= p.NKV) { return; }
  let ji = kv_vec4(b, i, h);
  var ks: array<vec4<f32>, MAX_HS4>; // k_i · scale · log2(e)
  var vi: array<vec4<f32>, MAX_HS4>;
  var acc_k: array<vec4<f32>, MAX_HS4>;
  var acc_v: array<vec4<f32>, MAX_HS4>;
  for (var d = 0u; d < HS4; d++) {
    ks[d] = k[ji + d] * p.scale_log2e;
    vi[d] = v[ji + d];
  }
  for (var hq = h * G; hq < (h + 1u) * G; hq++) {
    for (var t = i; t < p.T; t++) {
      let row = query_row(b, hq, t);
      if (row.seg != me.seg) { continue; }
      let ti = head_vec4(b, t, hq);
      var sc4 = vec4<f32>(0.0);
      var dp4 = vec4<f32>(0.0);
      for (var d = 0u; d < HS4; d++) {
        sc4 += q[ti + d] * ks[d];
        dp4 += dout[ti + d] * vi[d];
      }
      let pr = exp2(hsum(sc4) - row.lse2);
      let ds = pr * (hsum(dp4) - row.dsum);
      for (var d = 0u; d < HS4; d++) {
        acc_k[d] += ds * q[ti + d];
        acc_v[d] += pr * dout[ti + d];
      }
    }
  }
  for (var d = 0u; d < HS4; d++) {
    dk[ji + d] += scale * acc_k[d];
    dv[ji + d] += acc_v[d];
  }
}
