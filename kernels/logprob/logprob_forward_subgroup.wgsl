// logprob_forward_subgroup: logprob_forward_wide (same outputs, same contract) with the row's max
// and sums reduced by subgroup operations instead of a shared-memory tree; chosen for wide rows
// where the device has the `subgroups` feature (logprob.ts).
//
// Formula, with m = max_v l[t, v], d_v = s·(l[t, v] − m), S = Σ_v exp d_v, T = Σ_v exp(d_v)·d_v:
//   lse[t]     = s·m + log S                         (= log Σ_v exp z[t, v])
//   logp[t]    = d_target − log S                    (0 when target[t] < 0; NaN when ≥ V)
//   entropy[t] = −Σ_v p_v log p_v = log S − T / S    (every row, padding included; p = softmax(z))
// As in logprob_forward: every exponent is ≤ 0 and s scales the difference l − m, not l.
// Reference: logprobForwardRef in logprob.ref.ts.
// Threading: one workgroup of WG invocations per row (row = wid.y · num_workgroups.x + wid.x).
// Invocation i visits v = i, i + WG, ... twice: first for its max, which the workgroup reduces to
// m (workgroup_max, common/subgroup_lib.wgsl); then for its S_i and T_i relative to that m, which
// it sums as one vec2 (workgroup_sum). Unlike the tree of logprob_forward_wide no triple is
// rescaled: every term is relative to the row's own max, as in logprob_forward. An invocation
// that saw no logit (V < WG) contributes LOWEST to the max and 0 to the sums.
// Bindings:
//   p:       Params uniform
//   logits:  (N, V) f32, untempered (l)
//   targets: (N) i32
//   logp:    (N) f32
//   entropy: (N) f32
//   lse:     (N) f32

enable subgroups;

#include "common/grid_lib.wgsl"
#include "common/subgroup_lib.wgsl"
#include "logprob/logprob_lib.wgsl"

struct Params {
  N: u32,
  V: u32,
  nan_bits: u32, // 0x7fc00000: a quiet NaN, supplied at run time (WGSL rejects NaN constants)
  scale: f32,    // s = 1 / temperature, finite and > 0
}

override WG: u32 = 64u;

// Stands in for −∞ (finite: WGSL leaves infinities undefined).
const LOWEST: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

var<workgroup> sg_part: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn logprob_forward_subgroup(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) li: u32,
  @builtin(subgroup_invocation_id) lane: u32,
) {
  let t = group_index(wid, groups);
  if (t >= p.N) { return; } // uniform across the workgroup

  var mi = LOWEST;
  for (var v = li; v < p.V; v += WG) {
    mi = max(mi, logits[logit_index(t, v)]);
  }
  let m = workgroup_max(mi, LOWEST, li, lane);
  var st = vec2<f32>(0.0); // (S_i, T_i)
  for (var v = li; v < p.V; v += WG) {
    let d = p.scale * (logits[logit_index(t, v)] - m);
    let e = exp(d);
    st += vec2<f32>(e, e * d);
  }
  let sums = workgroup_sum(st, li, lane);

  if (li == 0u) {
    let log_s = log(sums.x);
    lse[t] = p.scale * m + log_s;
    entropy[t] = log_s - sums.y / sums.x;
    let tgt = targets[t];
    if (tgt < 0) {
      logp[t] = 0.0;
    } else if (u32(tgt) >= p.V) {
      logp[t] = bitcast<f32>(p.nan_bits);
    } else {
      logp[t] = p.scale * (logits[logit_index(t, u32(tgt))] - m) - log_s;
    }
  }
}
