/**
 * CPU reference for the residual add and gradient accumulation: plain loops from the formula,
 * the specification residual_forward.wgsl and accumulate.wgsl are tested against.
 *   residualForwardRef: out = a + b        accumulateRef: dst += src
 * Outputs may be Float32Array (the cpu backend) or Float64Array (finite-difference tests).
 */
export type RefOut = Float32Array | Float64Array;

/** Throws with expected and actual sizes when a buffer is shorter than n. */
export function checkElementwise(op: string, n: number, buffers: Record<string, { length: number }>): void {
  if (!Number.isInteger(n) || n < 0) throw new Error(`${op}: n must be a non-negative integer, got ${n}`);
  for (const [name, t] of Object.entries(buffers)) {
    if (t.length < n) throw new Error(`${op}: ${name} has ${t.length} elements, needs n = ${n}`);
  }
}

export function residualForwardRef(out: RefOut, a: ArrayLike<number>, b: ArrayLike<number>, n: number): void {
  checkElementwise('residualForward', n, { out, a, b });
  for (let i = 0; i < n; i++) out[i] = a[i] + b[i];
}

export function accumulateRef(dst: RefOut, src: ArrayLike<number>, n: number): void {
  checkElementwise('accumulate', n, { dst, src });
  for (let i = 0; i < n; i++) dst[i] += src[i];
}
