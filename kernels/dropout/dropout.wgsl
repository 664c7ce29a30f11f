// dropout: a seeded dropout mask applied to x, written or added onto out, over n floats.
//
// Formula: out[i] (+)= keep(offset + i) ? x[i] * scale : 0, keep(j) = mix32(key ^ j) >= threshold,
// mix32 the lowbias32 hash, key = mix32(seed), threshold = floor(p * 2^32), scale = 1 / (1 - p)
// (the host computes key, threshold and scale: dropoutScalars in dropout.ref.ts).
// Reference: dropoutRef in dropout.ref.ts (32-bit integer hashing: the masks are identical).
// Threading: as residual_forward: WG invocations per block of WG * 4 elements, invocation l
// handles block + l + k * WG for k = 0..3; 2-D grid of ceil(n / (WG * 4)) workgroups.
// Bindings:
//   p:   Params uniform
//   x:   (n) f32
//   out: (n) f32, written (read too when accumulating), aliasing x nowhere

#include "common/grid_lib.wgsl"

struct Params {
  n: u32,
  key: u32,
  threshold: u32,
  offset: u32,
  scale: f32,
  accumulate: u32,
}

override WG: u32 = 256u;
const PER_INVOCATION: u32 = 4u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

fn mix32(v: u32) -> u32 {
  var h = v;
  h ^= h >> 16u;
  h *= 0x7feb352du;
  h ^= h >> 15u;
  h *= 0x846ca68bu;
  h ^= h >> 16u;
  return h;
}

fn drop_at(i: u32) {
  if (i >= p.n) { return; }
  var v = 0.0;
  if (mix32(p.key ^ (p.offset + i)) >= p.threshold) { v = x[i] * p.scale; }
  if (p.accumulate != 0u) { out[i] += v; } else { out[i] = v; }
}

@compute @workgroup_size(WG)
fn dropout(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let i = group_index(wid, nwg) * WG * PER_INVOCATION + l;
  drop_at(i);
  drop_at(i + WG);
  drop_at(i + 2u * WG);
  drop_at(i + 3u * WG);
}
