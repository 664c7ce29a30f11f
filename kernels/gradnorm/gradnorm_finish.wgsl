// gradnorm_finish: stage 2 of the global gradient norm: adds the per-invocation sums of squares
// that gradnorm_partial wrote (for every gradient tensor) into the global Σ g².
//
// Formula: out[0] = Σ_{j < count} partials[j]    (0 when count = 0)
// Float32: invocation l adds slots l, l + WG, ... into four accumulators in turn (as in
// gradnorm_partial), then a tree of log2(WG) levels adds the invocations' sums.
// Reference: gradNormSquaredRef in gradnorm.ref.ts (stages 1 and 2 together).
// Threading: one workgroup of WG invocations; dispatch (1). The only barriers of the two stages.
// Bindings:
//   p:        Params uniform
//   partials: (count) f32
//   out:      (1) f32, Σ g² (overwritten, not accumulated)

struct Params {
  count: u32,
}

override WG: u32 = 64u; // a power of two, ≤ 256

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> partials: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> red: array<f32, WG>;

// partials[j], or 0 past the end.
fn load(j: u32) -> f32 {
  if (j < p.count) { return partials[j]; }
  return 0.0;
}

// Adds slot l + stride into slot l at every level, halving the live slots; returns the total.
fn tree_sum(lid: u32) -> f32 {
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    if (lid < stride) { red[lid] += red[lid + stride]; }
    workgroupBarrier();
  }
  return red[0];
}

@compute @workgroup_size(WG)
fn gradnorm_finish(@builtin(local_invocation_index) lid: u32) {
  var acc = vec4<f32>(0.0);
  for (var j = lid; j < p.count; j += 4u * WG) {
    acc += vec4<f32>(load(j), load(j + WG), load(j + 2u * WG), load(j + 3u * WG));
  }
  red[lid] = (acc.x + acc.y) + (acc.z + acc.w);
  workgroupBarrier();
  let total = tree_sum(lid);
  if (lid == 0u) {
    out[0] = total;
  }
}
