// subgroup_lib: workgroup-wide sums and maxima built on the `subgroups` feature (subgroupAdd,
// subgroupMax), for shaders that reduce one row per workgroup.
//
// Formula, over the WG invocations of a workgroup, each holding x_i:
//   workgroup_sum(x) = Σ_i x_i (per component of a vec2)   workgroup_max(x) = max_i x_i
// Scheme: a subgroup reduces its own values (subgroupAdd / subgroupMax); its lane 0 writes the
// result to slot `li` of `sg_part` (its own local index) and every other invocation writes the
// identity there; after a barrier every invocation combines all WG slots in index order. So the
// result is the same in every invocation, the order of the additions is fixed for a given
// adapter, and nothing assumes a subgroup size (the adapter's is 4 to 128 and may vary between
// pipelines) or which local indices a subgroup holds (WebGPU does not promise consecutive ones).
// The final loop reads WG slots of workgroup memory, as a tree of log2(WG) barrier steps would.
// A second barrier lets the caller reduce again with the same slots.
// Reference: plain sums and maxima; the callers' references (rmsnormForwardRef, logprobForwardRef).
// Needs from the including shader: `enable subgroups;` first, `override WG: u32`, and
// `var<workgroup> sg_part: array<vec2<f32>, WG>;`. Call from uniform control flow only (every
// invocation of the workgroup, as for workgroupBarrier).

fn workgroup_sum(x: vec2<f32>, li: u32, lane: u32) -> vec2<f32> {
  let s = subgroupAdd(x);
  sg_part[li] = select(vec2<f32>(0.0), s, lane == 0u);
  workgroupBarrier();
  var total = vec2<f32>(0.0);
  for (var i = 0u; i < WG; i++) {
    total += sg_part[i];
  }
  workgroupBarrier();
  return total;
}

// `lowest` is the identity: a value no real input is below (WGSL leaves infinities undefined).
fn workgroup_max(x: f32, lowest: f32, li: u32, lane: u32) -> f32 {
  let m = subgroupMax(x);
  sg_part[li] = vec2<f32>(select(lowest, m, lane == 0u), 0.0);
  workgroupBarrier();
  var best = lowest;
  for (var i = 0u; i < WG; i++) {
    best = max(best, sg_part[i].x);
  }
  workgroupBarrier();
  return best;
}
