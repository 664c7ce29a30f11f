/**
 * The velocity MLP's tensors, named the llm.c way: parameters (and, with the same structure, their
 * gradients and AdamW moments) and the activations of one batch of N rows that backward reads.
 * Specs are data (config.ts); allocation goes through `Ops`, one buffer per tensor.
 */
import type { Ops, Tensor } from '../../kernels/ops';
import type { FlowModelConfig } from './config';
import { flowParamSpecs, inputWidth, layerDims } from './config';

export interface FlowParamSet {
  /** Per layer l: (out, in). */
  w: Tensor[];
  /** Per layer l: (out). */
  b: Tensor[];
  /** Every tensor by spec name, in spec order. */
  byName: Map<string, Tensor>;
}

export function allocFlowParamSet(ops: Ops, c: FlowModelConfig, prefix: string): FlowParamSet {
  const byName = new Map<string, Tensor>();
  for (const s of flowParamSpecs(c))
    byName.set(
      s.name,
      ops.alloc(
        `${prefix}:${s.name}`,
        s.shape.reduce((a, b) => a * b, 1),
      ),
    );
  const L = layerDims(c).length;
  const w = Array.from({ length: L }, (_, l) => byName.get(`layers.${l}.weight`)!);
  const b = Array.from({ length: L }, (_, l) => byName.get(`layers.${l}.bias`)!);
  return { w, b, byName };
}

/** Activations and backward scratch for N rows. */
export interface FlowActs {
  N: number;
  inp: Tensor; // (N, D + E) [x, temb(t)]
  z: Tensor[]; // per hidden layer l: (N, H) pre-activation
  a: Tensor[]; // per hidden layer l: (N, H) silu(z_l)
  out: Tensor; // (N, D) velocity
  ones: Tensor; // (N) 1s: bias broadcast (N,1)·(1,out) and its reduction
  onesH: Tensor; // (N, H) 1s: the `up` of swiglu, so swiglu(z, 1) = silu(z)
  dout: Tensor; // (N, D) seed ∂loss/∂v
  da: Tensor; // (N, H) ∂loss/∂a_l
  dz: Tensor; // (N, H) ∂loss/∂z_l
  dscratch: Tensor; // (N, H) swiglu's ∂/∂up, unused
}

export function allocFlowActs(ops: Ops, c: FlowModelConfig, N: number): FlowActs {
  const H = c.width;
  const f = (label: string, n: number) => ops.alloc(`flow:${label}:${N}`, n);
  const ones = f('ones', N);
  ops.upload(ones, new Float32Array(N).fill(1));
  const onesH = f('onesH', N * H);
  ops.upload(onesH, new Float32Array(N * H).fill(1));
  return {
    N,
    inp: f('inp', N * inputWidth(c)),
    z: Array.from({ length: c.hidden }, (_, l) => f(`z${l}`, N * H)),
    a: Array.from({ length: c.hidden }, (_, l) => f(`a${l}`, N * H)),
    out: f('out', N * c.dim),
    ones,
    onesH,
    dout: f('dout', N * c.dim),
    da: f('da', N * H),
    dz: f('dz', N * H),
    dscratch: f('dscratch', N * H),
  };
}

export function freeFlowActs(ops: Ops, a: FlowActs): void {
  for (const t of [a.inp, ...a.z, ...a.a, a.out, a.ones, a.onesH, a.dout, a.da, a.dz, a.dscratch]) ops.free(t);
}
