/**
 * Central finite differences in float64, for the reference tests' gradient checks: the backward
 * references are compared against the forward reference differenced entry by entry.
 */

export interface NumericGradOptions {
  /** The step: h itself, or h·max(1, |x_i|) with `relative` (for entries far from unit scale). Default 1e-6. */
  h?: number;
  relative?: boolean;
}

/**
 * ∂f/∂x_i ≈ (f(x + s·e_i) − f(x − s·e_i)) / 2s for every entry of `x`, where `f` reads `x` (a
 * closure over it). Each entry is restored exactly after its two evaluations.
 */
export function numericGrad(
  x: Float64Array,
  f: () => number,
  { h = 1e-6, relative = false }: NumericGradOptions = {},
): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i];
    const step = relative ? h * Math.max(1, Math.abs(x0)) : h;
    x[i] = x0 + step;
    const up = f();
    x[i] = x0 - step;
    const down = f();
    x[i] = x0;
    g[i] = (up - down) / (2 * step);
  }
  return g;
}

/**
 * `numericGrad` of an asynchronous `f` (a model's loss through `Ops`) over float32 weights `x`, a
 * fixed step `h`: `f` must load `x` itself (a model's setWeights) before it scores.
 */
export async function numericGradAsync(x: Float32Array, f: () => Promise<number>, h: number): Promise<Float64Array> {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const x0 = x[i];
    x[i] = x0 + h;
    const up = await f();
    x[i] = x0 - h;
    const down = await f();
    x[i] = x0;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

/** ‖g − fd‖ / ‖fd‖, and ‖fd‖² (near 0 the check would be vacuous: the caller asserts it is not). */
export function relativeError(g: ArrayLike<number>, fd: ArrayLike<number>): { error: number; fdNormSq: number } {
  let num = 0,
    den = 0;
  for (let i = 0; i < g.length; i++) {
    num += (g[i] - fd[i]) ** 2;
    den += fd[i] ** 2;
  }
  return { error: Math.sqrt(num / den), fdNormSq: den };
}
