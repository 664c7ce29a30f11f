// clip_scale: the gradient scale of torch.nn.utils.clip_grad_norm_ (max-norm clipping), computed
// on the GPU from Σ g² so that a whole step runs without a readback; adamw reads it as gradScale.
//
// Formula: scale[0] = min(1, max_norm / (sqrt(norm_sq[0]) + 1e-6))
// 1e-6 is PyTorch's epsilon (clip_coef = max_norm / (total_norm + 1e-6), clamped at 1.0): it
// keeps a zero norm finite; a norm within ~1e-6 of max_norm scales by a hair under 1, as in PyTorch.
// Non-finite norms follow PyTorch too: +∞ gives 0 (max_norm / ∞), NaN gives NaN. They are told
// apart by bit pattern because WGSL implementations may assume values are finite.
// Reference: clipScaleRef in gradnorm.ref.ts.
// Threading: one invocation; dispatch (1).
// Bindings:
//   p:       Params uniform
//   norm_sq: (1) f32, Σ g² from gradnorm_finish
//   scale:   (1) f32

struct Params {
  max_norm: f32,
}

const EXPONENT_MASK: u32 = 0x7f800000u;
const MANTISSA_MASK: u32 = 0x007fffffu;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> norm_sq: array<f32>;
@group(0) @binding(2) var<storage, read_write> scale: array<f32>;

fn is_finite_bits(bits: u32) -> bool {
  return (bits & EXPONENT_MASK) != EXPONENT_MASK;
}

fn is_nan_bits(bits: u32) -> bool {
  return !is_finite_bits(bits) && (bits & MANTISSA_MASK) != 0u;
}

@compute @workgroup_size(1)
fn clip_scale() {
  let ns = norm_sq[0];
  let bits = bitcast<u32>(ns);
  if (is_nan_bits(bits)) {
    scale[0] = ns; // NaN in, NaN out (torch.clamp propagates NaN)
  } else if (!is_finite_bits(bits)) {
    scale[0] = 0.0; // max_norm / ∞
  } else {
    scale[0] = min(1.0, p.max_norm / (sqrt(ns) + 1e-6));
  }
}
