/**
 * Seeded pseudo-random numbers (mulberry32): every random draw in worker/ and kernels/ comes from
 * an explicit seed, never Math.random.
 */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` values uniform in [lo, hi) from `seed`. */
export function randomArray(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const rand = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * rand();
  return out;
}
