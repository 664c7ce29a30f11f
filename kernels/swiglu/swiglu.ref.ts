/**
 * CPU reference for SwiGLU, the gated unit of the Llama MLP: plain loops from the formula, the
 * specification swiglu_forward.wgsl and swiglu_backward.wgsl are tested against.
 *   forward:  out = silu(gate) · up, silu(g) = g · σ(g), σ(g) = 1 / (1 + e^(−g))
 *   backward: dgate += dout · up · σ(g)·(1 + g·(1 − σ(g))),  dup += dout · silu(g)   (accumulated)
 * Float64 arithmetic per element, the plain formula (in float64, e^(−g) overflowing to Infinity
 * still gives σ = 0 and silu = −0, so no guard is needed here; the WGSL guards its f32 exp).
 * Outputs may be Float32Array (the cpu backend) or Float64Array (finite-difference tests).
 * Not the matmuls around it (gate/up/down projections are matmul calls).
 */
import type { RefOut } from '../residual/residual.ref';
import { checkElementwise } from '../residual/residual.ref';

function sigmoid(g: number): number {
  return 1 / (1 + Math.exp(-g));
}

export function swigluForwardRef(out: RefOut, gate: ArrayLike<number>, up: ArrayLike<number>, n: number): void {
  checkElementwise('swigluForward', n, { out, gate, up });
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    out[i] = g * sigmoid(g) * up[i];
  }
}

export function swigluBackwardRef(
  dgate: RefOut,
  dup: RefOut,
  dout: ArrayLike<number>,
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
  n: number,
): void {
  checkElementwise('swigluBackward', n, { dgate, dup, dout, gate, up });
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    const s = sigmoid(g);
    dgate[i] += dout[i] * up[i] * (s + g * s * (1 - s));
    dup[i] += dout[i] * g * s;
  }
}
