// rope_backward: gradient of rope_forward, accumulated: dinp += Rᵀ · dout.
//
// rope_forward rotates each pair (x[i], x[i + half]) of a head by the angle a (see
// rope_forward.wgsl for a, inv_freq and the Hugging Face convention); the transpose rotates back:
//   dinp[n, h, i]        += dout[i] * cos(a) + dout[i + half] * sin(a)
//   dinp[n, h, i + half] += dout[i + half] * cos(a) - dout[i] * sin(a)
// Reference: ropeBackwardRef in rope.ref.ts.
// Threading: one invocation per (n, h, i) pair, as in rope_forward.
// Bindings (dinp must not share a buffer with dout):
//   p:         Params uniform
//   dout:      (N, NH, hs) f32
//   positions: (N) i32
//   dinp:      (N, NH, hs) f32, accumulated (+=)

struct Params {
  N: u32,
  NH: u32,
  hs: u32,          // head size, even
  log2_theta: f32,  // log2(theta), rounded once on the host
}

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read_write> dinp: array<f32>;

const TWO_OVER_PI: f32 = 0.6366197723675814;
const PIO2_HI: f32 = 1.5703125;                 // π/2 split for Cody-Waite range reduction:
const PIO2_LO: f32 = 0.00048382679489661923;    // k · PIO2_HI is exact for |k| < 2^16

// Flat invocation index over a 2D workgroup grid.
fn flat_index(wid: vec3u, nwg: vec3u, li: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + li;
}

// (cos a, sin a) to about 1e-7 absolute. The built-in sin/cos need only be within 2^-11 (on
// SwiftShader they are off by 2e-4), so: quadrant k = round(a · 2/π), r = a − k · π/2 with
// |r| ≤ π/4, then Taylor polynomials (truncation error < 2e-9) and the quadrant's symmetry.
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

// (cos a, sin a) for a = pos · theta^(-2i/hs), the angle formed in f32 as transformers does.
fn rope_cos_sin(pos: i32, i: u32) -> vec2<f32> {
  let inv_freq = exp2(-(f32(2u * i) / f32(p.hs)) * p.log2_theta);
  return cos_sin(f32(pos) * inv_freq);
}

@compute @workgroup_size(WG)
fn rope_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let half = p.hs / 2u;
  let g = flat_index(wid, nwg, li);
  if (g >= p.N * p.NH * half) { return; }
  let i = g % half;
  let nh = g / half;            // n · NH + h
  let n = nh / p.NH;
  let lo = nh * p.hs + i;       // element i of the head; its partner is lo + half
  let cs = rope_cos_sin(positions[n], i);
  let d0 = dout[lo];
  let d1 = dout[lo + half];
  dinp[lo] += d0 * cs.x + d1 * cs.y;
  dinp[lo + half] += d1 * cs.x - d0 * cs.y;
}
