// Vector helpers over f32 arrays at byte offsets: f32x4 over the first n & ~3 elements, scalar tail.

/**
 * a·b + c, lane by lane: one fused multiply-add (relaxed SIMD's f32x4.relaxed_madd, rounded once
 * where the hardware fuses) in the binaries built with relaxed-simd, a multiply then an add
 * (rounded twice) in the plain ones. The branch is resolved when compiling.
 */
@inline export function madd(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, c);
  return f32x4.add(f32x4.mul(a, b), c);
}

/** Σ a[i]·b[i], i < n. */
@inline export function dot(a: usize, b: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) acc = madd(v128.load(a + (<usize>i << 2)), v128.load(b + (<usize>i << 2)), acc);
  return dotFinish(acc, a, b, n4, n);
}

/** A dot product from its four-lane accumulator over i < n4: the lanes in order, then the scalar tail n4..n. */
@inline export function dotFinish(acc: v128, a: usize, b: usize, n4: i32, n: i32): f32 {
  let s = f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
  for (let i = n4; i < n; i++) s += load<f32>(a + (<usize>i << 2)) * load<f32>(b + (<usize>i << 2));
  return s;
}

/** y[i] += alpha·x[i], i < n. */
@inline export function axpy(y: usize, alpha: f32, x: usize, n: i32): void {
  const va = f32x4.splat(alpha);
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const p = y + (<usize>i << 2);
    v128.store(p, madd(va, v128.load(x + (<usize>i << 2)), v128.load(p)));
  }
  for (; i < n; i++) {
    const p = y + (<usize>i << 2);
    store<f32>(p, load<f32>(p) + alpha * load<f32>(x + (<usize>i << 2)));
  }
}

/** y[i] = alpha·y[i], i < n. */
@inline export function scale(y: usize, alpha: f32, n: i32): void {
  const va = f32x4.splat(alpha);
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const p = y + (<usize>i << 2);
    v128.store(p, f32x4.mul(va, v128.load(p)));
  }
  for (; i < n; i++) store<f32>(y + (<usize>i << 2), alpha * load<f32>(y + (<usize>i << 2)));
}

/** y[i] = 0, i < n. */
@inline export function zero(y: usize, n: i32): void {
  memory.fill(y, 0, <usize>n << 2);
}

@inline export function f32at(p: usize, i: i32): f32 {
  return load<f32>(p + (<usize>i << 2));
}

@inline export function i32at(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}

@inline export function setf32(p: usize, i: i32, v: f32): void {
  store<f32>(p + (<usize>i << 2), v);
}
