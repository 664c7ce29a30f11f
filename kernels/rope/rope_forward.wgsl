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

#include "common/grid_lib.wgsl"
#include "rope/rope_lib.wgsl"

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

@compute @workgroup_size(WG)
fn rope_forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let half = p.hs / 2u;
  let g = invocation_index(wid, nwg, li);
  if (g >= p.N * p.NH * half) { return; }
  let i = g % half;
  let nh = g / half;            // n · NH + h
  let n = nh / p.NH;
  let lo = nh * p.hs + i;       // element i of the head; its partner is lo + half
  let cs = rope_cos_sin(positions[n], i, p.hs, p.log2_theta);
  let x0 = inp[lo];
  let x1 = inp[lo + half];
  out[lo] = x0 * cs.x - x1 * cs.y;
  out[lo + half] = x1 * cs.x + x0 * cs.y;
}
