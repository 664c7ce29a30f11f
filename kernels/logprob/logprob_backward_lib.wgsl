// logprob_backward_lib: the per-logit gradient of logprob_backward and logprob_backward_wide, the
// same formula walked by one invocation per row or by a workgroup per row.
//
// Formula, for row t with target id tgt, and logit l = l[t, v] at inverse temperature s = p.scale,
// with log p_v = s·l − lse[t] (lse of the tempered row, from the forward) and p_v = exp(log p_v):
//   logit_grad = s · ( dlogp[t] · (1[v = tgt] − p_v)              (0 when tgt < 0)
//                    − dentropy[t] · p_v · (log p_v + entropy[t]) ) (only when WITH_ENTROPY)
// since ∂logp_t/∂z_v = 1[v = tgt] − p_v and ∂H_t/∂z_v = −p_v (log p_v + H_t) for z = s·l.
// Reference: logprobBackwardRef in logprob.ref.ts.
// Needs from the including shader: the bindings dlogp, dentropy, targets, lse and entropy of the
// backward kernels' header, `p` (a Params uniform with `scale: f32`) and `override WITH_ENTROPY: bool`.

// What row t feeds into the gradient of each of its logits.
struct RowSeed {
  tgt: i32,  // target id; < 0 for a row without one
  seed: f32, // dlogp[t], or 0 without a target
  dent: f32, // dentropy[t] when WITH_ENTROPY, else 0
  h: f32,    // entropy[t] when WITH_ENTROPY, else 0
  lse: f32,  // lse[t]
}

fn row_seed(t: u32) -> RowSeed {
  let tgt = targets[t];
  // A row without a target contributes no log-prob gradient; its dlogp is never read.
  var seed = 0.0;
  if (tgt >= 0) { seed = dlogp[t]; }
  var dent = 0.0;
  var h = 0.0;
  if (WITH_ENTROPY) {
    dent = dentropy[t];
    h = entropy[t];
  }
  return RowSeed(tgt, seed, dent, h, lse[t]);
}

// The gradient of row r's seeds with respect to its logit l = l[t, v].
fn logit_grad(r: RowSeed, v: u32, l: f32) -> f32 {
  let logp_v = p.scale * l - r.lse;
  let p_v = exp(logp_v);
  var g = -r.seed * p_v;
  if (i32(v) == r.tgt) { g += r.seed; }
  if (WITH_ENTROPY) { g -= r.dent * p_v * (logp_v + r.h); }
  return p.scale * g;
}
