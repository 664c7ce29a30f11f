/**
 * Forward pass of the velocity MLP, one line per kernel call per layer, in order:
 *   z_l = a_{l−1} · W_lᵀ + 1 · b_l      (matmul nt, then the bias as a K = 1 matmul accumulated)
 *   a_l = silu(z_l) = swiglu(z_l, 1)    (swigluForward with up ≡ 1: silu(z)·1 is exact)
 *   v   = a_{L−1} · W_Lᵀ + 1 · b_L
 * with a_{−1} = [x, temb(t)]. Existing ops only: no bias or SiLU kernel is needed.
 */
import type { Ops } from '../../kernels/ops';
import type { FlowModelConfig } from './config';
import { layerDims } from './config';
import type { FlowActs, FlowParamSet } from './tensors';

export function flowForward(ops: Ops, c: FlowModelConfig, p: FlowParamSet, a: FlowActs): void {
  const N = a.N;
  const dims = layerDims(c);
  for (let l = 0; l < c.hidden; l++) {
    const [i, o] = dims[l];
    const x = l === 0 ? a.inp : a.a[l - 1];
    ops.matmul(a.z[l], x, p.w[l], N, i, o, 'nt'); // (N, i) · (o, i)ᵀ
    ops.matmul(a.z[l], a.ones, p.b[l], N, 1, o, 'nn', { accumulate: true }); // += (N, 1) · (1, o)
    ops.swigluForward(a.a[l], a.z[l], a.onesH, N * o); // silu(z) · 1
  }
  const L = c.hidden;
  const [i, o] = dims[L];
  ops.matmul(a.out, a.a[L - 1], p.w[L], N, i, o, 'nt');
  ops.matmul(a.out, a.ones, p.b[L], N, 1, o, 'nn', { accumulate: true });
}
