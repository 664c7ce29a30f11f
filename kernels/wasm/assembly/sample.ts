// Ops.sample: one id per row of logits (N, V), bit for bit sampleRef (kernels/sample/sample.ref.ts):
// samplingDistribution (distribution.ref.ts) then sampleToken, in float64, with V8's exp and log
// (fdlibm.ts). Each step below is the reference's arithmetic in the reference's order; what it
// skips (the raw log-probs of ids never drawn, the sort when top-p is off) changes no value.
//
// Per row, with u = uniforms[r] (NaN: skipped, id −1):
//   m = max l (the first arg-max), also refusing NaN and +∞ (status 3, the index in ids[r]) and a
//   row with no finite logit (status 2);
//   T = 0 (greedy): the arg-max, log-prob 0;
//   nothing filters: lp_i = (l_i − m)/T − log Σ exp((l_i − m)/T), p_i = exp(lp_i), the first i with
//   u·Σp < the running Σp (ids of p = 0 skipped, the last positive one if u·Σp rounds up);
//   top-k/top-p: the finite ids sorted by (l desc, id asc) — a stable radix sort of ascending ids
//   on the logits' order-preserving bit keys — cut at the k-th value (ties kept) and at the
//   nucleus, then renormalised and drawn over in ascending id order as above.
// Outputs per row: ids (i32), logp (f64), flags (i32: 0 unfiltered, 1 filtered, 2/3 as above).
// `work`: scratch of sampleWorkBytes(V) bytes for this call's rows (one per thread).
import { fdlibmExp, fdlibmExp2, fdlibmLog } from './fdlibm';

/** Bytes of scratch one thread's rows need: p (f64) and two (key, id) pairs (u32, i32) per id, and a histogram. */
export function sampleWorkBytes(V: i32): i32 {
  return V * 24 + 1024;
}

@inline function logitAt(row: usize, i: i32): f64 {
  return <f64>load<f32>(row + (<usize>i << 2));
}

/** The order-preserving key of a finite f32 logit, complemented: ascending keys are descending logits (−0 as +0). */
@inline function descendingKey(row: usize, i: i32): u32 {
  const v = load<f32>(row + (<usize>i << 2));
  const b = v == 0 ? 0 : reinterpret<u32>(v);
  const key = b & 0x80000000 ? ~b : b | 0x80000000;
  return ~key;
}

/**
 * The draw over p[0..n) (positive or 0) in index order: the index sampleToken picks with uniform
 * u, or −1 when no p is positive.
 */
function drawIndex(p: usize, n: i32, u: f64): i32 {
  let total: f64 = 0;
  for (let j = 0; j < n; j++) total += load<f64>(p + (<usize>j << 3));
  const target = u * total;
  let cumulative: f64 = 0;
  let last = -1;
  for (let j = 0; j < n; j++) {
    const q = load<f64>(p + (<usize>j << 3));
    if (q == 0) continue;
    last = j;
    cumulative += q;
    if (target < cumulative) return j;
  }
  return last;
}

/** Sorts (keys, ids)[0..n) by key ascending, stably; 8 bits a pass. Returns where the sorted ids are (ids or ids2). */
function radixSort(keys: usize, ids: usize, keys2: usize, ids2: usize, n: i32, hist: usize): usize {
  let k0 = keys,
    i0 = ids,
    k1 = keys2,
    i1 = ids2;
  for (let shift: u32 = 0; shift < 32; shift += 8) {
    memory.fill(hist, 0, 1024);
    for (let j = 0; j < n; j++) {
      const h = hist + (<usize>((load<u32>(k0 + (<usize>j << 2)) >>> shift) & 255) << 2);
      store<u32>(h, load<u32>(h) + 1);
    }
    // A pass where every key has the same digit would leave the order as it is.
    if (load<u32>(hist + (<usize>((load<u32>(k0) >>> shift) & 255) << 2)) == <u32>n) continue;
    let sum: u32 = 0;
    for (let d = 0; d < 256; d++) {
      const h = hist + (<usize>d << 2);
      const c = load<u32>(h);
      store<u32>(h, sum);
      sum += c;
    }
    for (let j = 0; j < n; j++) {
      const key = load<u32>(k0 + (<usize>j << 2));
      const h = hist + (<usize>((key >>> shift) & 255) << 2);
      const at = load<u32>(h);
      store<u32>(h, at + 1);
      store<u32>(k1 + (<usize>at << 2), key);
      store<i32>(i1 + (<usize>at << 2), load<i32>(i0 + (<usize>j << 2)));
    }
    const k = k0;
    k0 = k1;
    k1 = k;
    const i = i0;
    i0 = i1;
    i1 = i;
  }
  return i0;
}

/** The id at position j of a sorted id list. */
@inline function idAt(sorted: usize, j: i32): i32 {
  return load<i32>(sorted + (<usize>j << 2));
}

/** Logits i, i + 1 as f64x2 (exactly). */
@inline function logitPair(row: usize, i: i32): v128 {
  return f64x2.promote_low_f32x4(v128.load64_zero(row + (<usize>i << 2)));
}

/**
 * The unfiltered row (distribution.ref.ts's fast path, then sampleToken): the id drawn; its log-prob
 * in `lpOut`. Two ids at a time through fdlibmExp2, their terms added to the sum one by one, in id
 * order, as the reference adds them.
 */
function drawUnfiltered(row: usize, V: i32, m: f64, T: f64, u: f64, p: usize, lpOut: usize): i32 {
  const mv = f64x2.splat(m);
  const tv = f64x2.splat(T);
  const V2 = V & ~1;
  let z: f64 = 0;
  for (let i = 0; i < V2; i += 2) {
    const e = fdlibmExp2(f64x2.div(f64x2.sub(logitPair(row, i), mv), tv));
    z += f64x2.extract_lane(e, 0);
    z += f64x2.extract_lane(e, 1);
  }
  if (V2 < V) z += fdlibmExp((logitAt(row, V2) - m) / T);
  const logZ = fdlibmLog(z);
  const lz = f64x2.splat(logZ);
  for (let i = 0; i < V2; i += 2)
    v128.store(p + (<usize>i << 3), fdlibmExp2(f64x2.sub(f64x2.div(f64x2.sub(logitPair(row, i), mv), tv), lz)));
  if (V2 < V) store<f64>(p + (<usize>V2 << 3), fdlibmExp((logitAt(row, V2) - m) / T - logZ));
  const id = drawIndex(p, V, u);
  store<f64>(lpOut, (logitAt(row, id) - m) / T - logZ);
  return id;
}

/** The filtered row (top-k/top-p, distribution.ref.ts's general path, then sampleToken): the id drawn; its log-prob in `lpOut`. */
function drawFiltered(row: usize, V: i32, m: f64, T: f64, topK: i32, topP: f64, u: f64, work: usize, lpOut: usize): i32 {
  const p = work;
  const keys = p + (<usize>V << 3);
  const ids = keys + (<usize>V << 2);
  const keys2 = ids + (<usize>V << 2);
  const ids2 = keys2 + (<usize>V << 2);
  const hist = ids2 + (<usize>V << 2);
  let n = 0;
  for (let i = 0; i < V; i++) {
    if (!(logitAt(row, i) > -Infinity)) continue;
    store<u32>(keys + (<usize>n << 2), descendingKey(row, i));
    store<i32>(ids + (<usize>n << 2), i);
    n++;
  }
  const sorted = radixSort(keys, ids, keys2, ids2, n, hist);
  let kept = n;
  if (topK > 0 && topK < n) {
    const threshold = logitAt(row, idAt(sorted, topK - 1));
    kept = topK;
    while (kept < n && logitAt(row, idAt(sorted, kept)) >= threshold) kept++;
  }
  if (topP < 1) {
    // nucleusSize: softmax of the kept scaled logits, in sorted order, relative to the first.
    const top = (logitAt(row, idAt(sorted, 0)) - m) / T;
    let z: f64 = 0;
    for (let j = 0; j < kept; j++) z += fdlibmExp((logitAt(row, idAt(sorted, j)) - m) / T - top);
    let cumulative: f64 = 0;
    let size = kept;
    for (let j = 0; j < kept; j++) {
      cumulative += fdlibmExp((logitAt(row, idAt(sorted, j)) - m) / T - top) / z;
      if (cumulative >= topP) {
        size = j + 1;
        break;
      }
    }
    kept = size;
  }
  // The kept ids in ascending order (marked, then scanned); those whose scaled logit is −∞ are dropped.
  const marks = sorted == ids ? keys : keys2;
  memory.fill(marks, 0, <usize>V);
  for (let j = 0; j < kept; j++) store<u8>(marks + <usize>idAt(sorted, j), 1);
  const support = sorted == ids ? ids2 : ids;
  let count = 0;
  let z: f64 = 0;
  for (let i = 0; i < V; i++) {
    if (!load<u8>(marks + <usize>i)) continue;
    const s = (logitAt(row, i) - m) / T;
    if (!(s > -Infinity)) continue;
    store<i32>(support + (<usize>count << 2), i);
    store<f64>(p + (<usize>count << 3), s);
    count++;
  }
  for (let j = 0; j < count; j++) z += fdlibmExp(load<f64>(p + (<usize>j << 3)));
  const logZ = fdlibmLog(z);
  for (let j = 0; j < count; j++) {
    const q = p + (<usize>j << 3);
    store<f64>(q, fdlibmExp(load<f64>(q) - logZ));
  }
  const id = load<i32>(support + (<usize>drawIndex(p, count, u) << 2));
  store<f64>(lpOut, (logitAt(row, id) - m) / T - logZ);
  return id;
}

/** Rows [0, N) of the arguments (the caller offsets the pointers for a thread's rows). */
export function sampleRows(
  ids: usize, logp: usize, flags: usize, logits: usize, uniforms: usize,
  N: i32, V: i32, T: f64, topK: i32, topP: f64, work: usize,
): void {
  for (let r = 0; r < N; r++) {
    const idOut = ids + (<usize>r << 2);
    const lpOut = logp + (<usize>r << 3);
    const flagOut = flags + (<usize>r << 2);
    const u = load<f64>(uniforms + (<usize>r << 3));
    store<i32>(idOut, -1);
    store<f64>(lpOut, NaN);
    store<i32>(flagOut, 0);
    if (isNaN(u)) continue;
    const row = logits + ((<usize>r * <usize>V) << 2);
    let m: f64 = -Infinity;
    let argmax = -1;
    let finite = 0;
    let bad = -1;
    for (let i = 0; i < V; i++) {
      const v = logitAt(row, i);
      if (isNaN(v) || v == Infinity) {
        bad = i;
        break;
      }
      if (v > m) {
        m = v;
        argmax = i;
      }
      if (v > -Infinity) finite++;
    }
    if (bad >= 0) {
      store<i32>(flagOut, 3);
      store<i32>(idOut, bad);
      continue;
    }
    if (argmax < 0) {
      store<i32>(flagOut, 2);
      continue;
    }
    if (T == 0) {
      store<i32>(idOut, argmax);
      store<f64>(lpOut, 0);
      store<i32>(flagOut, 1);
      continue;
    }
    const filtered = (topK > 0 && topK < finite) || topP < 1;
    store<i32>(flagOut, filtered ? 1 : 0);
    store<i32>(idOut, filtered ? drawFiltered(row, V, m, T, topK, topP, u, work, lpOut) : drawUnfiltered(row, V, m, T, u, work, lpOut));
  }
}
