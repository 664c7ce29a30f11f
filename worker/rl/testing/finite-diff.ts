/**
 * Central finite differences in float64, for checking analytic gradients of RL-core functions:
 * ∂f/∂x_i ≈ (f(x + h e_i) − f(x − h e_i)) / 2h.
 */
export function centralDiff(f: (x: Float64Array) => number, x: ArrayLike<number>, h = 1e-6): Float64Array {
  const base = Float64Array.from(x);
  const g = new Float64Array(base.length);
  for (let i = 0; i < base.length; i++) {
    const xi = base[i];
    base[i] = xi + h;
    const fp = f(base);
    base[i] = xi - h;
    const fm = f(base);
    base[i] = xi;
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}
