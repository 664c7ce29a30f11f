// gradnorm_partial: stage 1 of the global gradient norm. Every invocation writes the sum of
// squares of its share of one gradient tensor to its own slot of `partials`; gradnorm_finish adds
// the slots of all tensors.
//
// Formula: partials[offset + k] = Σ_{i ≡ k (mod K), i < n} grad[i]²,   K = num_workgroups.x · WG
// Invocation k reads i = k, k + K, k + 2K, k + 3K, then steps by 4K, squaring into four f32
// accumulators (one vec4), so each accumulator adds ⌈n / 4K⌉ terms in order.
// Reference: gradNormSquaredRef in gradnorm.ref.ts (stages 1 and 2 together).
// Threading: K invocations, k = wid.x · WG + lid; no workgroup memory and no barriers (barriers
// are what a software adapter such as SwiftShader runs slowest). Neighbouring invocations read
// neighbouring elements.
// Bindings:
//   p:        Params uniform
//   grad:     (n) f32
//   partials: (offset + K) f32, slots offset .. offset + K − 1 written

struct Params {
  n: u32,
  offset: u32, // first slot of `partials` this dispatch writes
}

override WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;

// grad[i], or 0 past the end.
fn load(i: u32) -> f32 {
  if (i < p.n) { return grad[i]; }
  return 0.0;
}

@compute @workgroup_size(WG)
fn gradnorm_partial(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let k = wid.x * WG + lid;
  let stride = groups.x * WG;
  var acc = vec4<f32>(0.0);
  for (var i = k; i < p.n; i += 4u * stride) {
    let g = vec4<f32>(load(i), load(i + stride), load(i + 2u * stride), load(i + 3u * stride));
    acc += g * g;
  }
  partials[p.offset + k] = (acc.x + acc.y) + (acc.z + acc.w);
}
