// logprob_forward_wide: logprob_forward for wide rows (a real vocabulary): the same outputs,
// computed by a whole workgroup per row with a tree reduction. Per row t it writes the log-prob
// of the target id, the entropy of the distribution and the row's log-sum-exp (for the backward).
//
// Formula, with m = max_v z[t, v], S = Σ_v exp(z[t, v] − m), T = Σ_v exp(z[t, v] − m)·(z[t, v] − m):
//   lse[t]     = m + log S                           (= log Σ_v exp z[t, v])
//   logp[t]    = z[t, target[t]] − lse[t]            (0 when target[t] < 0; NaN when ≥ V)
//   entropy[t] = −Σ_v p_v log p_v = log S − T / S    (every row, padding included)
// Working relative to the max keeps every exponent ≤ 0 and every term bounded by the spread of
// the row, so logits of ±1e4 neither overflow nor cancel.
// Reference: logprobForwardRef in logprob.ref.ts.
// Threading: one workgroup of WG invocations per row (row = wid.y · num_workgroups.x + wid.x, so
// N may exceed 65535). Invocation i visits v = i, i + WG, ... twice: once for its own max m_i,
// once for S_i and T_i relative to m_i. A tree reduction then merges the triples (m, S, T):
//   m = max(m1, m2), a_k = exp(m_k − m), S = a1·S1 + a2·S2, T = a1·(T1 + (m1 − m)·S1) + (same for 2).
// Invocation 0 writes the three outputs.
// Bindings:
//   p:       Params uniform
//   logits:  (N, V) f32
//   targets: (N) i32
//   logp:    (N) f32
//   entropy: (N) f32
//   lse:     (N) f32

#include "common/grid_lib.wgsl"
#include "logprob/logprob_lib.wgsl"

struct Params {
  N: u32,
  V: u32,
  nan_bits: u32, // 0x7fc00000: a quiet NaN, supplied at run time (WGSL rejects NaN constants)
}

override WG: u32 = 64u; // a power of two, ≤ 256

// Stands in for −∞ as "no element yet": finite, so (m1 − m)·S1 is 0·finite, never 0·∞.
const LOWEST: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

var<workgroup> red_m: array<f32, WG>;
var<workgroup> red_s: array<f32, WG>;
var<workgroup> red_t: array<f32, WG>;

fn nan_f32() -> f32 {
  return bitcast<f32>(p.nan_bits);
}

// Merges the triple at slot j into slot i; each is relative to its own max, the result to theirs.
fn merge_into(i: u32, j: u32) {
  let m1 = red_m[i];
  let s1 = red_s[i];
  let t1 = red_t[i];
  let m2 = red_m[j];
  let s2 = red_s[j];
  let t2 = red_t[j];
  let m = max(m1, m2);
  let a1 = exp(m1 - m);
  let a2 = exp(m2 - m);
  red_m[i] = m;
  red_s[i] = a1 * s1 + a2 * s2;
  red_t[i] = a1 * (t1 + (m1 - m) * s1) + a2 * (t2 + (m2 - m) * s2);
}

@compute @workgroup_size(WG)
fn logprob_forward_wide(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let t = group_index(wid, groups);
  if (t >= p.N) { return; } // uniform across the workgroup

  var m = LOWEST;
  for (var v = li; v < p.V; v += WG) {
    m = max(m, logits[logit_index(t, v)]);
  }
  var s = 0.0;
  var tt = 0.0;
  for (var v = li; v < p.V; v += WG) {
    let d = logits[logit_index(t, v)] - m;
    let e = exp(d);
    s += e;
    tt += e * d;
  }
  red_m[li] = m;
  red_s[li] = s;
  red_t[li] = tt;
  workgroupBarrier();

  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (li < stride) { merge_into(li, li + stride); }
    workgroupBarrier();
  }

  if (li == 0u) {
    let mm = red_m[0];
    let ss = red_s[0];
    let log_s = log(ss);
    let row_lse = mm + log_s;
    lse[t] = row_lse;
    entropy[t] = log_s - red_t[0] / ss;
    let tgt = targets[t];
    if (tgt < 0) {
      logp[t] = 0.0;
    } else if (u32(tgt) >= p.V) {
      logp[t] = nan_f32();
    } else {
      logp[t] = (logits[logit_index(t, u32(tgt))] - mm) - log_s;
    }
  }
}
