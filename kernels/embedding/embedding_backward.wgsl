// embedding_backward: dwte(V, C) += the dout(N, C) rows summed per token id, without atomics.
//
// Formula: dwte[v, c] += Σ_{n : ids[n] = v} dout[n, c]; ids outside 0..V-1 contribute nothing.
// Reference: embeddingBackwardRef in embedding.ref.ts.
// Threading: the vocabulary is cut into ranges of ROWS consecutive rows, and LANES invocations
// share a range (workgroup (LANES, RANGES_PER_WG): x = lane, y = range). Each invocation walks
// all N ids in token order, four at a time; when an id falls in its range it adds that dout row
// into dwte[id, :] at its own columns lane, lane + LANES, ... So every dwte element has a single
// writer, sums run in token order (deterministic), and the lanes of a range take the same
// branches while touching adjacent columns.
// Cost: ceil(V / ROWS) · LANES · N id tests + N · C adds, instead of V · N · C for one invocation
// per (v, c) testing every token. No workgroup barriers: on software adapters (SwiftShader) a
// barrier-based scan-and-compact per vocabulary row measured about 10× slower.
// Dispatch: (1, ceil(ceil(V / ROWS) / RANGES_PER_WG)).
// Bindings:
//   p:    Params uniform
//   dout: (N, C) f32
//   ids:  (N) i32
//   dwte: (V, C) f32, accumulated

struct Params {
  N: u32,
  C: u32,
  V: u32,
  _pad: u32,
}

override ROWS: u32 = 16u;         // vocabulary rows per range
override LANES: u32 = 4u;         // invocations per range (they split the columns)
override RANGES_PER_WG: u32 = 1u; // ranges per workgroup

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;
@group(0) @binding(2) var<storage, read> ids: array<i32>;
@group(0) @binding(3) var<storage, read_write> dwte: array<f32>;

// ids[n], or −1 (in no range) past the end.
fn id_at(n: u32) -> i32 {
  if (n < p.N) { return ids[n]; }
  return -1;
}

// dwte[v, :] += dout[n, :] at columns lane, lane + LANES, ... when v = id lies in [lo, hi).
fn add_if_in_range(id: i32, n: u32, lo: i32, hi: i32, lane: u32) {
  if (id < lo || id >= hi) { return; }
  let v = u32(id);
  for (var c = lane; c < p.C; c += LANES) {
    dwte[v * p.C + c] += dout[n * p.C + c];
  }
}

@compute @workgroup_size(LANES, RANGES_PER_WG)
fn embedding_backward(@builtin(global_invocation_id) gid: vec3u) {
  let lane = gid.x;
  let first = gid.y * ROWS;
  if (first >= p.V) { return; }
  let lo = i32(first);
  let hi = i32(min(first + ROWS, p.V));
  for (var n = 0u; n < p.N; n += 4u) {
    let q = vec4<i32>(id_at(n), id_at(n + 1u), id_at(n + 2u), id_at(n + 3u));
    if (any((q >= vec4<i32>(lo)) & (q < vec4<i32>(hi)))) {
      add_if_in_range(q.x, n, lo, hi, lane);
      add_if_in_range(q.y, n + 1u, lo, hi, lane);
      add_if_in_range(q.z, n + 2u, lo, hi, lane);
      add_if_in_range(q.w, n + 3u, lo, hi, lane);
    }
  }
}
