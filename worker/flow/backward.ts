/**
 * Backward pass of the velocity MLP: forward.ts's list reversed, written by hand. Reads the seed
 * ∂loss/∂v from `a.dout` (N, D) and ACCUMULATES into the parameter gradients (callers zero them):
 *   dW_l += dz_lᵀ · a_{l−1}      db_l += 1ᵀ · dz_l      da_{l−1} = dz_l · W_l
 *   dz_l  = da_l ⊙ silu′(z_l)    (swigluBackward with up ≡ 1; its ∂/∂up goes to scratch)
 * No gradient flows to the input rows (x and t are data).
 */
import type { Ops } from '../../kernels/ops';
import type { FlowModelConfig } from './config';
import { layerDims } from './config';
import type { FlowActs, FlowParamSet } from './tensors';

export function flowBackward(ops: Ops, c: FlowModelConfig, p: FlowParamSet, g: FlowParamSet, a: FlowActs): void {
  const N = a.N;
  const dims = layerDims(c);
  const L = c.hidden;
  const [i, o] = dims[L];
  ops.matmul(g.w[L], a.dout, a.a[L - 1], o, N, i, 'tn', { accumulate: true }); // (o, i) += doutᵀ · a
  ops.matmul(g.b[L], a.ones, a.dout, 1, N, o, 'tn', { accumulate: true }); // (1, o) += 1ᵀ · dout
  ops.matmul(a.da, a.dout, p.w[L], N, o, i, 'nn'); // (N, i) = dout · W
  for (let l = L - 1; l >= 0; l--) {
    const [li, lo] = dims[l];
    ops.zero(a.dz);
    ops.zero(a.dscratch);
    ops.swigluBackward(a.dz, a.dscratch, a.da, a.z[l], a.onesH, N * lo); // dz = da · silu′(z)
    ops.matmul(g.w[l], a.dz, l === 0 ? a.inp : a.a[l - 1], lo, N, li, 'tn', { accumulate: true });
    ops.matmul(g.b[l], a.ones, a.dz, 1, N, lo, 'tn', { accumulate: true });
    if (l > 0) ops.matmul(a.da, a.dz, p.w[l], N, lo, li, 'nn');
  }
}
