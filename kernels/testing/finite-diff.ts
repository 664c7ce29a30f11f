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
