// logprob_forward: fused log-softmax over the LM head's logits at an inverse temperature, one
// invocation per row (the straightforward port of the reference; logprob_forward_wide is the
// variant for wide rows). Per row t it writes the log-prob of the target id, the entropy and the
// row's log-sum-exp, all of the tempered logits z = s·l (s = p.scale = 1/T; 1 = untempered).
//
// Formula, with m = max_v l[t, v], d_v = s·(l[t, v] − m), S = Σ_v exp d_v, T = Σ_v exp(d_v)·d_v:
//   lse[t]     = s·m + log S                         (= log Σ_v exp z[t, v])
//   logp[t]    = d_target − log S                    (0 when target[t] < 0; NaN when ≥ V)
//   entropy[t] = −Σ_v p_v log p_v = log S − T / S    (every row, padding included; p = softmax(z))
// Working relative to the max keeps every exponent ≤ 0 and every term bounded by the spread of
// the row, so logits of ±1e4 neither overflow nor cancel; scaling the difference l − m (not l)
// keeps s from rounding away that accuracy.
// Reference: logprobForwardRef in logprob.ref.ts.
// Threading: invocation t = (wid.y · num_workgroups.x + wid.x) · WG + lid handles row t alone:
// one pass over the row for m, one for S and T. No workgroup memory and no barriers, which is
// what a software adapter (SwiftShader) runs fastest when V is small.
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

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<i32>;
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

@compute @workgroup_size(WG)
fn logprob_forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let t = invocation_index(wid, groups, lid);
  if (t >= p.N) { return; }
  var m = logits[logit_index(t, 0u)];
  for (var v = 1u; v < p.V; v++) {
    m = max(m, logits[logit_index(t, v)]);
  }
  var s = 0.0;
  var tt = 0.0;
  for (var v = 0u; v < p.V; v++) {
    let d = p.scale * (logits[logit_index(t, v)] - m);
    let e = exp(d);
    s += e;
    tt += e * d;
  }
  let log_s = log(s);
  lse[t] = p.scale * m + log_s;
  entropy[t] = log_s - tt / s;
  let tgt = targets[t];
  if (tgt < 0) {
    logp[t] = 0.0;
  } else if (u32(tgt) >= p.V) {
    logp[t] = bitcast<f32>(p.nan_bits);
  } else {
    logp[t] = p.scale * (logits[logit_index(t, u32(tgt))] - m) - log_s;
  }
}
