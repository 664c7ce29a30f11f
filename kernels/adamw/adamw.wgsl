// adamw: one AdamW step (decoupled weight decay, bias-corrected), in place on param, m and v,
// following torch.optim.AdamW's single-tensor path operation by operation.
//
// Formula, with g = grad · scale (scale: a number, or the clip scale in a tensor):
//   param = param · (1 − lr·wd)                   decay first, as PyTorch does
//   m     = m + (1 − β1)·(g − m)                  torch.lerp(m, g, 1 − β1)
//   v     = β2·v + (1 − β2)·g²
//   param = param − step_size · m / (sqrt(v) / bc2_sqrt + eps)
// where 1 − lr·wd, 1 − β1, 1 − β2, step_size = lr / (1 − β1^t) and bc2_sqrt = sqrt(1 − β2^t)
// are computed on the CPU in float64 and rounded once, as PyTorch does with its Python floats
// (1 − f32(0.999) in f32 would be off by 1e-5 relative).
// Reference: adamwRef in adamw.ref.ts.
// Threading: K = num_workgroups.x · WG invocations; invocation k updates i = k, k + K, k + 2K, ...
// (about 16 elements each, so the workgroup count stays within limits for any n).
// Bindings (scale is bound to any tensor, e.g. grad, when !SCALE_FROM_TENSOR):
//   p:     Params uniform
//   grad:  (n) f32
//   scale: (1) f32, the gradient scale (e.g. written by clip_scale)
//   param: (n) f32, updated in place
//   m:     (n) f32, first moment, updated in place
//   v:     (n) f32, second moment, updated in place

struct Params {
  n: u32,
  decay: f32,       // 1 − lr·wd
  beta2: f32,
  one_m_beta1: f32, // 1 − β1 (the lerp weight)
  one_m_beta2: f32, // 1 − β2
  step_size: f32,   // lr / (1 − β1^t)
  bc2_sqrt: f32,    // sqrt(1 − β2^t)
  eps: f32,
  scale: f32,       // the gradient scale when !SCALE_FROM_TENSOR
}

override WG: u32 = 256u;
override SCALE_FROM_TENSOR: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@group(0) @binding(2) var<storage, read> scale: array<f32>;
@group(0) @binding(3) var<storage, read_write> param: array<f32>;
@group(0) @binding(4) var<storage, read_write> m: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;

// One element's update, in the order of torch.optim.AdamW.
fn update(i: u32, scale_g: f32) {
  let g = grad[i] * scale_g;
  let mi = m[i] + p.one_m_beta1 * (g - m[i]);
  let vi = p.beta2 * v[i] + p.one_m_beta2 * g * g;
  let denom = sqrt(vi) / p.bc2_sqrt + p.eps;
  param[i] = param[i] * p.decay - p.step_size * (mi / denom);
  m[i] = mi;
  v[i] = vi;
}

fn grad_scale() -> f32 {
  if (SCALE_FROM_TENSOR) { return scale[0]; }
  return p.scale;
}

@compute @workgroup_size(WG)
fn adamw(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let s = grad_scale();
  let stride = groups.x * WG;
  for (var i = wid.x * WG + lid; i < p.n; i += stride) {
    update(i, s);
  }
}
