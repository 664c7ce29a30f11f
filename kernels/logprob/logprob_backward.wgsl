// logprob_backward: accumulates the gradient of the per-token seeds through the fused
// log-softmax into the logits' gradient, one invocation per row (the straightforward port of the
// reference; logprob_backward_wide is the variant for wide rows).
//
// Formula, at inverse temperature s = p.scale (z = s·l, the forward's tempered logits), with
// log p_v = s·l[t, v] − lse[t] and p_v = exp(log p_v):
//   dlogits[t, v] += s · ( dlogp[t] · (1[v = target[t]] − p_v)             (skipped when target[t] < 0)
//                        − dentropy[t] · p_v · (log p_v + entropy[t]) )    (only when WITH_ENTROPY)
// since ∂logp_t/∂z_v = 1[v = target] − p_v, ∂H_t/∂z_v = −p_v (log p_v + H_t) and ∂z_v/∂l_v = s.
// BACKWARD ACCUMULATES: dlogits is added to, never overwritten (the caller zeroes it once a step).
// Reference: logprobBackwardRef in logprob.ref.ts.
// Threading: invocation t = (wid.y · num_workgroups.x + wid.x) · WG + lid updates row t alone.
// Bindings (dentropy and entropy are bound to any tensor, e.g. dlogp, when !WITH_ENTROPY):
//   p:        Params uniform
//   dlogp:    (N) f32
//   dentropy: (N) f32
//   logits:   (N, V) f32, untempered (l)
//   targets:  (N) i32
//   lse:      (N) f32, from logprob_forward
//   entropy:  (N) f32, from logprob_forward
//   dlogits:  (N, V) f32, accumulated

#include "common/grid_lib.wgsl"
#include "logprob/logprob_lib.wgsl"
#include "logprob/logprob_backward_lib.wgsl"

struct Params {
  N: u32,
  V: u32,
  scale: f32, // s = 1 / temperature, finite and > 0
}

override WG: u32 = 64u;
override WITH_ENTROPY: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dlogp: array<f32>;
@group(0) @binding(2) var<storage, read> dentropy: array<f32>;
@group(0) @binding(3) var<storage, read> logits: array<f32>;
@group(0) @binding(4) var<storage, read> targets: array<i32>;
@group(0) @binding(5) var<storage, read> lse: array<f32>;
@group(0) @binding(6) var<storage, read> entropy: array<f32>;
@group(0) @binding(7) var<storage, read_write> dlogits: array<f32>;

@compute @workgroup_size(WG)
fn logprob_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let t = invocation_index(wid, groups, lid);
  if (t >= p.N) { return; }
  let r = row_seed(t);
  for (var v = 0u; v < p.V; v++) {
    let i = logit_index(t, v);
    dlogits[i] += logit_grad(r, v, logits[i]);
  }
}
