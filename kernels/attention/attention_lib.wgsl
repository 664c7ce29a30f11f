// attention_lib: index math and small helpers shared by attention_forward, attention_backward and
// attention_backward_prep (one Params layout: B, T, NH, NKV, scale_log2e).
//
// Formula (head vectors are read as vec4, HS4 = hs / 4 of them per head):
//   head_vec4(b, t, h) = ((b · T + t) · NH + h) · HS4    element 0 of query head h in (B, T, NH, hs)
//   kv_vec4(b, t, j)   = ((b · T + t) · NKV + j) · HS4   element 0 of kv head j in (B, T, NKV, hs)
//   group_size()       = NH / NKV                        query head h reads kv head h / group_size(),
//                                                        as transformers' repeat_kv
//   row_index(b, h, t) = (b · NH + h) · T + t            (b, h, t) in a (B, NH, T) tensor (lse, rows)
//   hsum(x)            = x.x + x.y + x.z + x.w           in that order
// Reference: the layouts of attentionForwardRef / attentionBackwardRef in attention.ref.ts.
// Needs from the including shader: `p`, the attention Params uniform (T, NH, NKV: u32), and
// `override HS4: u32`.

const LN2: f32 = 0.6931471805599453;

fn head_vec4(b: u32, t: u32, h: u32) -> u32 {
  return ((b * p.T + t) * p.NH + h) * HS4;
}

fn kv_vec4(b: u32, t: u32, j: u32) -> u32 {
  return ((b * p.T + t) * p.NKV + j) * HS4;
}

fn group_size() -> u32 {
  return p.NH / p.NKV;
}

fn row_index(b: u32, h: u32, t: u32) -> u32 {
  return (b * p.NH + h) * p.T + t;
}

fn hsum(x: vec4<f32>) -> f32 {
  return x.x + x.y + x.z + x.w;
}
