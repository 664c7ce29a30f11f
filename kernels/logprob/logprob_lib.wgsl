// logprob_lib: index math shared by the four log-prob kernels (logprob_forward, its _wide variant
// and their backwards).
//
// Formula: logit_index(t, v) = t · V + v, the flat index of logits[t, v] (and dlogits[t, v]) in a
// row-major (N, V) tensor.
// Reference: the (N, V) layout of logprobForwardRef / logprobBackwardRef in logprob.ref.ts.
// Needs from the including shader: `p`, a Params uniform with the vocabulary size `V: u32`.

fn logit_index(t: u32, v: u32) -> u32 {
  return t * p.V + v;
}
