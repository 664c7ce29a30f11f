// exp and log as V8 computes Math.exp and Math.log: ports of fdlibm's e_exp.c and e_log.c in the
// form V8 ships them (nodejs/node deps/v8/src/base/ieee754.cc at 08b6ea8154e07ef2eeecd22bc30a7404acd04982,
// `exp` and `log`: fdlibm 5.3 with V8's exp(1) = E special case). AssemblyScript's own Math.exp
// and Math.log are musl's newer table-driven routines, which round differently in the last bit;
// the sampling kernel (sample.ts) needs the engine's bits, so that a seed draws the same ids on
// every backend. Every operation below is one IEEE-754 double operation in the order of the C
// source (WebAssembly neither fuses nor reorders them). The wasm backend checks these against the
// engine's Math.exp/Math.log when it loads and samples by the reference if any bit differs
// (kernels/backends/wasm.ts `sampleSelfCheck`).

const LN2_HI: f64 = reinterpret<f64>(0x3fe62e42fee00000); // 6.93147180369123816490e-01
const LN2_LO: f64 = reinterpret<f64>(0x3dea39ef35793c76); // 1.90821492927058770002e-10
const INV_LN2: f64 = reinterpret<f64>(0x3ff71547652b82fe); // 1.44269504088896338700e+00
const P1: f64 = reinterpret<f64>(0x3fc555555555553e);
const P2: f64 = reinterpret<f64>(0xbf66c16c16bebd93);
const P3: f64 = reinterpret<f64>(0x3f11566aaf25de2c);
const P4: f64 = reinterpret<f64>(0xbebbbd41c5d26bf1);
const P5: f64 = reinterpret<f64>(0x3e66376972bea4d0);
const O_THRESHOLD: f64 = reinterpret<f64>(0x40862e42fefa39ef); // 709.78…
const U_THRESHOLD: f64 = reinterpret<f64>(0xc0874910d52d3051); // -745.13…
const E: f64 = reinterpret<f64>(0x4005bf0a8b145769);
const TWOM1000: f64 = reinterpret<f64>(0x0170000000000000); // 2^-1000
const TWO1023: f64 = reinterpret<f64>(0x7fe0000000000000); // 2^1023
const HUGE: f64 = 1.0e300;

/** A double from its high word (the low word 0): fdlibm's INSERT_WORDS(d, hi, 0). */
@inline function fromHigh(hi: u32): f64 {
  return reinterpret<f64>(<u64>hi << 32);
}

/** e^x, bit for bit V8's `ieee754::exp` (fdlibm e_exp.c). */
export function fdlibmExp(x: f64): f64 {
  const bits = reinterpret<u64>(x);
  let hx = <u32>(bits >>> 32);
  const xsb = <i32>(hx >>> 31);
  hx &= 0x7fffffff;

  if (hx >= 0x40862e42) {
    // |x| ≥ 709.78…: non-finite, overflow or underflow.
    if (hx >= 0x7ff00000) {
      if (((hx & 0xfffff) | <u32>bits) != 0) return x + x; // NaN
      return xsb == 0 ? x : 0.0; // exp(±inf) = inf, 0
    }
    if (x > O_THRESHOLD) return HUGE * HUGE;
    if (x < U_THRESHOLD) return TWOM1000 * TWOM1000;
  }

  // Argument reduction: x = k·ln2 + r, |r| ≤ 0.5·ln2, r as hi − lo.
  let hi: f64 = 0;
  let lo: f64 = 0;
  let k: i32 = 0;
  if (hx > 0x3fd62e42) {
    if (hx < 0x3ff0a2b2) {
      if (x == 1.0) return E;
      hi = x - (xsb ? -LN2_HI : LN2_HI);
      lo = xsb ? -LN2_LO : LN2_LO;
      k = 1 - xsb - xsb;
    } else {
      k = <i32>(INV_LN2 * x + (xsb ? -0.5 : 0.5)); // C's truncation toward zero
      const t = <f64>k;
      hi = x - t * LN2_HI; // exact
      lo = t * LN2_LO;
    }
    x = hi - lo;
  } else if (hx < 0x3e300000) {
    if (HUGE + x > 1.0) return 1.0 + x; // |x| < 2^-28
  } else {
    k = 0;
  }

  const t = x * x;
  const twopk = k >= -1021 ? fromHigh(<u32>(0x3ff00000 + (k << 20))) : fromHigh(<u32>(0x3ff00000 + ((k + 1000) << 20)));
  const c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k >= -1021) {
    if (k == 1024) return y * 2.0 * TWO1023;
    return y * twopk;
  }
  return y * twopk * TWOM1000;
}

const TWO54: f64 = reinterpret<f64>(0x4350000000000000);
const LG1: f64 = reinterpret<f64>(0x3fe5555555555593);
const LG2: f64 = reinterpret<f64>(0x3fd999999997fa04);
const LG3: f64 = reinterpret<f64>(0x3fd2492494229359);
const LG4: f64 = reinterpret<f64>(0x3fcc71c51d8e78af);
const LG5: f64 = reinterpret<f64>(0x3fc7466496cb03de);
const LG6: f64 = reinterpret<f64>(0x3fc39a09d078c69f);
const LG7: f64 = reinterpret<f64>(0x3fc2f112df3e5244);
const THIRD: f64 = 0.33333333333333333;

/** x with its high word replaced: fdlibm's SET_HIGH_WORD(x, hi). */
@inline function withHigh(x: f64, hi: u32): f64 {
  return reinterpret<f64>((<u64>hi << 32) | (reinterpret<u64>(x) & 0xffffffff));
}

/** ln x, bit for bit V8's `ieee754::log` (fdlibm e_log.c); NaN for x < 0 (its payload aside). */
export function fdlibmLog(x: f64): f64 {
  const bits = reinterpret<u64>(x);
  let hx = <i32>(bits >>> 32);
  const lx = <u32>bits;
  let k: i32 = 0;
  if (hx < 0x00100000) {
    // x < 2^-1022: zero, negative or subnormal.
    if (((hx & 0x7fffffff) | lx) == 0) return -Infinity;
    if (hx < 0) return NaN;
    k -= 54;
    x *= TWO54;
    hx = <i32>(reinterpret<u64>(x) >>> 32);
  }
  if (hx >= 0x7ff00000) return x + x;
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  x = withHigh(x, <u32>(hx | (i ^ 0x3ff00000))); // x or x/2 into [sqrt(2)/2, sqrt(2))
  k += i >> 20;
  const f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {
    // -2^-20 ≤ f < 2^-20
    if (f == 0) {
      if (k == 0) return 0;
      const dk = <f64>k;
      return dk * LN2_HI + dk * LN2_LO;
    }
    const r = f * f * (0.5 - THIRD * f);
    if (k == 0) return f - r;
    const dk = <f64>k;
    return dk * LN2_HI - ((r - dk * LN2_LO) - f);
  }
  const s = f / (2.0 + f);
  const dk = <f64>k;
  const z = s * s;
  i = hx - 0x6147a;
  const w = z * z;
  const j = 0x6b851 - hx;
  const t1 = w * (LG2 + w * (LG4 + w * LG6));
  const t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
  i |= j;
  const r = t2 + t1;
  if (i > 0) {
    const hfsq = 0.5 * f * f;
    if (k == 0) return f - (hfsq - s * (hfsq + r));
    return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
  }
  if (k == 0) return f - s * (f - r);
  return dk * LN2_HI - ((s * (f - r) - dk * LN2_LO) - f);
}

/**
 * fdlibmExp of both lanes of `x` (f64x2), bit for bit: lanes in (−707, 0] take every branch of
 * fdlibmExp at once (|x| < 2⁻²⁸: 1 + x; |x| ≤ ln2/2: k = 0; ≤ 1.5·ln2: k = −1; beyond: k from
 * x/ln2), the same IEEE operations lane by lane, selected per lane; a pair with a lane elsewhere
 * (NaN, ±∞, overflow, subnormal results, positive x) goes through fdlibmExp one lane at a time.
 */
export function fdlibmExp2(x: v128): v128 {
  const inRange = v128.and(f64x2.gt(x, f64x2.splat(-707)), f64x2.le(x, f64x2.splat(0)));
  if (!i64x2.all_true(inRange)) return f64x2(fdlibmExp(f64x2.extract_lane(x, 0)), fdlibmExp(f64x2.extract_lane(x, 1)));
  const hx = v128.and(i64x2.shr_u(x, 32), i64x2.splat(0x7fffffff));
  const big = i64x2.ge_s(hx, i64x2.splat(0x3ff0a2b2));
  const mid = v128.andnot(i64x2.gt_s(hx, i64x2.splat(0x3fd62e42)), big);
  const tiny = i64x2.lt_s(hx, i64x2.splat(0x3e300000));
  // k as a double: big lanes trunc(x/ln2 − 0.5) (x < 0), mid lanes −1, the others 0 (hi = x, lo = 0).
  const kBig = f64x2.trunc(f64x2.add(f64x2.mul(f64x2.splat(INV_LN2), x), f64x2.splat(-0.5)));
  const t = v128.bitselect(kBig, v128.and(mid, f64x2.splat(-1.0)), big);
  const hi = f64x2.sub(x, f64x2.mul(t, f64x2.splat(LN2_HI)));
  const lo = f64x2.mul(t, f64x2.splat(LN2_LO));
  const r = f64x2.sub(hi, lo);
  const rr = f64x2.mul(r, r);
  let poly = f64x2.add(f64x2.splat(P4), f64x2.mul(rr, f64x2.splat(P5)));
  poly = f64x2.add(f64x2.splat(P3), f64x2.mul(rr, poly));
  poly = f64x2.add(f64x2.splat(P2), f64x2.mul(rr, poly));
  poly = f64x2.add(f64x2.splat(P1), f64x2.mul(rr, poly));
  const c = f64x2.sub(r, f64x2.mul(rr, poly));
  const one = f64x2.splat(1.0);
  const two = f64x2.splat(2.0);
  const rc = f64x2.mul(r, c);
  // k ≠ 0: (1 − ((lo − r·c/(2 − c)) − hi)) · 2^k, with k ≥ −1020 here (x > −707): 2^k is normal.
  const yk = f64x2.sub(one, f64x2.sub(f64x2.sub(lo, f64x2.div(rc, f64x2.sub(two, c))), hi));
  const k = i64x2.extend_low_i32x4_s(i32x4.trunc_sat_f64x2_s_zero(t));
  const twopk = i64x2.shl(i64x2.add(k, i64x2.splat(1023)), 52);
  const resK = f64x2.mul(yk, twopk);
  // k = 0: 1 − (r·c/(c − 2) − r); |x| < 2⁻²⁸: 1 + x.
  const res0 = f64x2.sub(one, f64x2.sub(f64x2.div(rc, f64x2.sub(c, two)), r));
  const kZero = v128.not(v128.or(big, mid));
  return v128.bitselect(f64x2.add(one, x), v128.bitselect(res0, resK, kZero), tiny);
}

/** exp of p[0..n) in place by pairs (fdlibmExp2), the last alone: the self-check's and the tests' view of the vector path. */
export function fdlibmExpInPlace(p: usize, n: i32): void {
  let i = 0;
  for (; i + 1 < n; i += 2) v128.store(p + (<usize>i << 3), fdlibmExp2(v128.load(p + (<usize>i << 3))));
  if (i < n) store<f64>(p + (<usize>i << 3), fdlibmExp(load<f64>(p + (<usize>i << 3))));
}
