// logprob_forward_wide: logprob_forward for wide rows (a real vocabulary): the same outputs,
// computed by a whole workgroup per row with a tree reduction. Per row t it writes the log-prob
// of the target id, the entropy of the distribution and the row's log-sum-exp (for the backward),
// all of the tempered logits z = s·l (s = p.scale = 1/T; 1 = untempered).
//
// Formula, with m = max_v l[t, v], d_v = s·(l[t, v] − m), S = Σ_v exp d_v, T = Σ_v exp(d_v)·d_v:
//   lse[t]     = s·m + log S                         (= log Σ_v exp z[t, v])
//   logp[t]    = d_target − log S                    (0 when target[t] < 0; NaN when ≥ V)
//   entropy[t] = −Σ_v p_v log p_v = log S − T / S    (every row, padding included; p = softmax(z))
// Working relative to the max keeps every exponent ≤ 0 and every term bounded by the spread of
// the row, so logits of ±1e4 neither overflow nor cancel; scaling the difference l − m (not l)
// keeps s from rounding away that accuracy.
// Reference: logprobForwardRef in logprob.ref.ts.
// Threading: one workgroup of WG invocations per row (row = wid.y · num_workgroups.x + wid.x, so
// N may exceed 65535). Invocation i visits v = i, i + WG, ... twice: once for its own max m_i,
// once for S_i and T_i relative to m_i. A tree reduction then merges the triples (m, S, T):
//   m = max(m1, m2), a_k = exp(s·(m_k − m)), S = a1·S1 + a2·S2,
//   T = a1·(T1 + s·(m1 − m)·S1) + (same for 2).
// A slot that saw no logit (V < WG) has S = 0 (any other has S ≥ 1, its max's own term) and is
// skipped, so its sentinel max never enters a product. Invocation 0 writes the three outputs.
// Bindings:
//   p:       Params uniform
//   logits:  (N, V) f32, untempered (l)
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
  scale: f32,    // s = 1 / temperature, finite and > 0
}

override WG: u32 = 64u; // a power of two, ≤ 256

// Stands in for −∞ as "no element yet" (finite: WGSL leaves infinities undefined); a slot still
// holding it has S = 0 and is never merged.
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
// An empty slot (S = 0) contributes nothing: j is skipped, and an empty i takes j's triple.
fn merge_into(i: u32, j: u32) {
  let m1 = red_m[i];
  let s1 = red_s[i];
  let t1 = red_t[i];
  let m2 = red_m[j];
  let s2 = red_s[j];
  let t2 = red_t[j];
  if (s2 == 0.0) { return; }
  if (s1 == 0.0) {
    red_m[i] = m2;
    red_s[i] = s2;
    red_t[i] = t2;
    return;
  }
  let m = max(m1, m2);
  let g1 = p.scale * (m1 - m);
  let g2 = p.scale * (m2 - m);
  let a1 = exp(g1);
  let a2 = exp(g2);
  red_m[i] = m;
  red_s[i] = a1 * s1 + a2 * s2;
  red_t[i] = a1 * (t1 + g1 * s1) + a2 * (t2 + g2 * s2);
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
    let d = p.scale * (logits[logit_index(t, v)] - m);
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
    let row_lse = p.scale * mm + log_s;
    lse[t] = row_lse;
    entropy[t] = log_s - red_t[0] / ss;
    let tgt = targets[t];
    if (tgt < 0) {
      logp[t] = 0.0;
    } else if (u32(tgt) >= p.V) {
      logp[t] = nan_f32();
    } else {
      logp[t] = p.scale * (logits[logit_index(t, u32(tgt))] - mm) - log_s;
    }
  }
}
