// rope_forward: rotary position embedding, Llama / Hugging Face convention (rotate_half).
//
// Formula, for token n, head h, pair i in [0, hs/2), with x = inp[n, h, :] and half = hs/2:
//   inv_freq_i = theta^(-2i/hs),  a = positions[n] * inv_freq_i
//   out[n, h, i]        = x[i] * cos(a) - x[i + half] * sin(a)
//   out[n, h, i + half] = x[i + half] * cos(a) + x[i] * sin(a)
// This is transformers' `apply_rotary_pos_emb(q, k, cos, sin)` with `rotate_half` and
// `LlamaRotaryEmbedding` (default rope_type): pairs are (i, i + hs/2) within each head, not
// interleaved (2i, 2i + 1), so exported weights behave the same in `LlamaForCausalLM`.
// Reference: ropeForwardRef in rope.ref.ts.
// Threading: one invocation per (n, h, i) pair, WG invocations per workgroup over the flat pair
// index; the workgroup grid is 2D (x capped at 65535) for large N · NH.
// Bindings (out must not share a buffer with inp: WebGPU forbids read + write of one buffer):
//   p:         Params uniform
//   inp:       (N, NH, hs) f32
//   positions: (N) i32
//   out:       (N, NH, hs) f32

struct Params {
  N: u32,
  NH: u32,
  hs: u32,          // head size, even
  log2_theta: f32,  // log2(theta), rounded once on the host
}

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<f32>;
@group(0) @binding(2) var<storage, read> positions: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

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
fn rope_forward(
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
  let x0 = inp[lo];
  let x1 = inp[lo + half];
  out[lo] = x0 * cs.x - x1 * cs.y;
  out[lo + half] = x1 * cs.x + x0 * cs.y;
}
