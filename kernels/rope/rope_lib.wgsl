// rope_lib: the rotation of rope_forward and rope_backward, (cos a, sin a) for the angle
// a = pos · theta^(-2i/hs) of pair i in a head of size hs.
//
// Formula: inv_freq_i = exp2(−(2i / hs) · log2(theta)), a = f32(pos) · inv_freq_i, both in f32 as
// transformers' LlamaRotaryEmbedding forms them; then (cos a, sin a) to about 1e-7 absolute. The
// built-in sin/cos need only be within 2^-11 (on SwiftShader they are off by 2e-4), so cos_sin
// reduces the range itself: quadrant k = round(a · 2/π), r = a − k · π/2 with |r| ≤ π/4 (Cody-Waite,
// π/2 split in two), then Taylor polynomials (truncation error < 2e-9) and the quadrant's symmetry.
// Reference: the angle, cos and sin of ropeForwardRef / ropeBackwardRef in rope.ref.ts.
// Needs nothing from the including shader.

const TWO_OVER_PI: f32 = 0.6366197723675814;
const PIO2_HI: f32 = 1.5703125;                 // π/2 split for Cody-Waite range reduction:
const PIO2_LO: f32 = 0.00048382679489661923;    // k · PIO2_HI is exact for |k| < 2^16

// (cos a, sin a) to about 1e-7 absolute.
fn cos_sin(a: f32) -> vec2<f32> {
  let k = round(a * TWO_OVER_PI);
  let r = (a - k * PIO2_HI) - k * PIO2_LO;
  let r2 = r * r;
  let s = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0)))));
  let c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0 - r2 / 3628800.0))));
  switch (i32(k) & 3) { // a = r + q · π/2
    case 0: { return vec2<f32>(c, s); }
    case 1: { return vec2<f32>(-s, c); }
    case 2: { return vec2<f32>(-c, -s); }
    default: { return vec2<f32>(s, -c); }
  }
}

// (cos a, sin a) for a = pos · theta^(-2i/hs), the angle formed in f32 as transformers does;
// log2_theta = log2(theta), rounded once on the host.
fn rope_cos_sin(pos: i32, i: u32, hs: u32, log2_theta: f32) -> vec2<f32> {
  let inv_freq = exp2(-(f32(2u * i) / f32(hs)) * log2_theta);
  return cos_sin(f32(pos) * inv_freq);
}
