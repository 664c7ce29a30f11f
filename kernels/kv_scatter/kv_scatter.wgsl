// kv_scatter: appends one vector per row to a KV cache. Row b's new key (or value) vector goes to
// slot slots[b] of that row; the rest of the cache is untouched.
//
// Formula: cache[b, slots[b], i] = rows[b, i]   for b < B, i < KV, when 0 ≤ slots[b] < L.
// A slot outside 0..L−1 writes nothing for that row (the reference throws; slots live on the GPU
// and are not checked by the wrapper), so a bad slot can never write into another row.
// Reference: kvScatterRef in kv-scatter.ref.ts.
// Threading: one invocation per element (b, i) of rows, WG of them per workgroup, a 2-D grid of
// ceil(B·KV / WG) workgroups (flat index as grid_lib.wgsl). Reads and writes are contiguous
// within a row; no workgroup memory, no barriers. The values move as u32 words, not f32, so
// the copy is bit for bit as the buffer copies it replaces were (WGSL lets an implementation
// flush f32 subnormals; no arithmetic on u32 does).
// Bindings (cache must not share a buffer with rows or slots):
//   p:      Params uniform
//   rows:   (B, KV) f32, read as u32 words
//   slots:  (B) i32, the destination slot of each row
//   cache:  (B, L, KV) f32, written as u32 words

#include "common/grid_lib.wgsl"

struct Params {
  B: u32,
  L: u32,
  KV: u32,
}

override WG: u32 = 256u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> slots: array<i32>;
@group(0) @binding(3) var<storage, read_write> cache: array<u32>;

// Index of element i of slot s of row b in the (B, L, KV) cache.
fn cache_index(b: u32, s: u32, i: u32) -> u32 {
  return (b * p.L + s) * p.KV + i;
}

@compute @workgroup_size(WG)
fn kv_scatter(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) l: u32,
) {
  let j = invocation_index(wid, nwg, l);
  if (j >= p.B * p.KV) { return; }
  let b = j / p.KV;
  let s = slots[b];
  if (s < 0 || u32(s) >= p.L) { return; }
  cache[cache_index(b, u32(s), j % p.KV)] = rows[j];
}
