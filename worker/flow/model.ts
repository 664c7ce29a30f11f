/**
 * The rectified-flow policy's velocity field v_θ(x, t) on `Ops`: parameters, gradients and AdamW
 * moments, activations cached for the last few row counts, and the phases of a training step: `forward` (one
 * readback: the velocities), `backward(dv)` (accumulates gradients), `step` (global-norm clipping
 * and AdamW, worker/model/adamw.ts, one scalar readback). Weights and AdamW state read and load by
 * parameter name (a checkpoint, flow/checkpoint.ts). Not the SDE, the objective or a trainer.
 *
 * Velocity convention (SD3 / Flow-GRPO): x_t = (1 − t)·x_0 + t·ε, so v = dx/dt = ε − x_0, t = 1
 * noise and t = 0 data; sampling integrates from t = 1 down to 0.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { Ops } from '../../kernels/ops';
import type { AdamWScratch, AdamWSlot, StepOptions } from '../model/adamw';
import { adamwStep } from '../model/adamw';
import type { OptimizerState } from '../model/model';
import { flowBackward } from './backward';
import type { FlowModelConfig } from './config';
import { buildInputs, flowParamSpecs, layerDims, validateFlowModelConfig } from './config';
import { flowForward } from './forward';
import type { FlowActs, FlowParamSet } from './tensors';
import { allocFlowActs, allocFlowParamSet, freeFlowActs } from './tensors';

/** Row counts whose activations stay allocated (least recently used freed first). */
const MAX_ACTS = 4;

export class VelocityField {
  readonly params: FlowParamSet;
  readonly grads: FlowParamSet;
  private readonly m: FlowParamSet;
  private readonly v: FlowParamSet;
  private readonly acts = new Map<number, FlowActs>();
  /** The activations of the last forward, which backward reads. */
  private last: FlowActs | null = null;
  private readonly scratch: AdamWScratch;
  /** What `step` updates: every parameter in spec order. */
  private readonly slots: AdamWSlot[];
  /** AdamW step count of the last update (0: none yet). */
  private t = 0;

  constructor(
    readonly ops: Ops,
    readonly config: FlowModelConfig,
  ) {
    const problems = validateFlowModelConfig(config);
    if (problems.length) throw new Error(`invalid flow model config: ${problems.join('; ')}`);
    this.params = allocFlowParamSet(ops, config, 'param');
    this.grads = allocFlowParamSet(ops, config, 'grad');
    this.m = allocFlowParamSet(ops, config, 'adam_m');
    this.v = allocFlowParamSet(ops, config, 'adam_v');
    this.scratch = { normSq: ops.alloc('flow:grad_norm_sq', 1), clip: ops.alloc('flow:clip_scale', 1) };
    this.slots = flowParamSpecs(config).map((s) => ({
      param: this.params.byName.get(s.name)!,
      grad: this.grads.byName.get(s.name)!,
      m: this.m.byName.get(s.name)!,
      v: this.v.byName.get(s.name)!,
      decay: s.decay,
    }));
  }

  /** Number of parameters. */
  get size(): number {
    let n = 0;
    for (const t of this.params.byName.values()) n += t.length;
    return n;
  }

  /** Seeded torch.nn.Linear init: layer l's weight and bias uniform in ±1/√in_l. */
  initWeights(seed: number): void {
    const rand = mulberry32(seed);
    layerDims(this.config).forEach(([i], l) => {
      const bound = 1 / Math.sqrt(i);
      for (const t of [this.params.w[l], this.params.b[l]]) {
        const data = new Float32Array(t.length);
        for (let k = 0; k < data.length; k++) data[k] = (2 * rand() - 1) * bound;
        this.ops.upload(t, data);
      }
    });
  }

  /** v_θ(x_i, t_i) for N rows: x (N, D), t (N); returns (N, D). Keeps the activations for backward. */
  async forward(x: ArrayLike<number>, t: ArrayLike<number>): Promise<Float32Array> {
    const N = t.length;
    if (N < 1) throw new Error('VelocityField.forward: no rows');
    let a = this.acts.get(N);
    if (!a) {
      // A run uses a few row counts (rollout, padded mini-batch, preview): keep the last MAX_ACTS.
      if (this.acts.size >= MAX_ACTS) {
        const [oldest, acts] = this.acts.entries().next().value!;
        freeFlowActs(this.ops, acts);
        this.acts.delete(oldest);
      }
      a = allocFlowActs(this.ops, this.config, N);
    } else this.acts.delete(N);
    this.acts.set(N, a); // most recently used last
    this.ops.upload(a.inp, buildInputs(x, t, this.config));
    flowForward(this.ops, this.config, this.params, a);
    this.last = a;
    return this.ops.read(a.out);
  }

  /** Accumulates ∂loss/∂θ from `dv` = ∂loss/∂v (N, D) of the last forward. */
  backward(dv: ArrayLike<number>): void {
    const a = this.last;
    if (!a) throw new Error('VelocityField.backward() before forward(): run a forward first');
    if (dv.length !== a.N * this.config.dim)
      throw new Error(`VelocityField.backward: dv has ${dv.length} values, expected N·D = ${a.N}·${this.config.dim}`);
    this.ops.upload(a.dout, dv instanceof Float32Array ? dv : Float32Array.from(dv));
    flowBackward(this.ops, this.config, this.params, this.grads, a);
  }

  zeroGrad(): void {
    for (const t of this.grads.byName.values()) this.ops.zero(t);
  }

  /** Clips to `maxGradNorm` and applies AdamW to every parameter (model/adamw.ts); returns the pre-clip norm. */
  async step(o: StepOptions): Promise<number> {
    const norm = adamwStep(this.ops, this.slots, this.scratch, o);
    this.t = o.step;
    return norm;
  }

  /** AdamW step count of the last update. */
  get optimizerSteps(): number {
    return this.t;
  }

  /** Every parameter by spec name (one read per tensor; between steps only). */
  async getWeights(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [name, t] of this.params.byName) out.set(name, await this.ops.read(t));
    return out;
  }

  /** Loads weights by spec name; every parameter must be present with its exact size. */
  setWeights(weights: ReadonlyMap<string, ArrayLike<number>>): void {
    for (const s of flowParamSpecs(this.config)) {
      const w = weights.get(s.name);
      const n = s.shape.reduce((a, b) => a * b, 1);
      if (!w) throw new Error(`setWeights: missing tensor '${s.name}' (shape [${s.shape}])`);
      if (w.length !== n)
        throw new Error(`setWeights: '${s.name}' has ${w.length} values, expected ${n} (shape [${s.shape}])`);
      this.ops.upload(this.params.byName.get(s.name)!, w);
    }
  }

  /** AdamW's state: the step count and both moments by spec name (one read per tensor; between steps only). */
  async getOptimizerState(): Promise<OptimizerState> {
    const m = new Map<string, Float32Array>();
    const v = new Map<string, Float32Array>();
    for (const [name, t] of this.m.byName) {
      m.set(name, await this.ops.read(t));
      v.set(name, await this.ops.read(this.v.byName.get(name)!));
    }
    return { t: this.t, m, v };
  }

  /** Restores AdamW's state; every moment must be present with its exact size (the next step passes `step: t + 1`). */
  setOptimizerState(s: OptimizerState): void {
    if (!Number.isInteger(s.t) || s.t < 0)
      throw new Error(`setOptimizerState: t = ${s.t}; expected a non-negative integer`);
    for (const [name, t] of this.m.byName) {
      for (const [which, data] of [
        ['m', s.m.get(name)],
        ['v', s.v.get(name)],
      ] as const) {
        if (!data) throw new Error(`setOptimizerState: missing ${which} of '${name}' (${t.length} values)`);
        if (data.length !== t.length)
          throw new Error(`setOptimizerState: ${which} of '${name}' has ${data.length} values, expected ${t.length}`);
      }
    }
    for (const name of [...s.m.keys(), ...s.v.keys()])
      if (!this.m.byName.has(name))
        throw new Error(`setOptimizerState: unknown tensor '${name}' (a state of another flow model config?)`);
    for (const [name, t] of this.m.byName) {
      this.ops.upload(t, s.m.get(name)!);
      this.ops.upload(this.v.byName.get(name)!, s.v.get(name)!);
    }
    this.t = s.t;
  }

  /** The gradients by spec name (tests, views). */
  async getGradients(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [name, t] of this.grads.byName) out.set(name, await this.ops.read(t));
    return out;
  }

  /** Frees every tensor; the model must not be used after. */
  dispose(): void {
    for (const set of [this.params, this.grads, this.m, this.v]) for (const t of set.byName.values()) this.ops.free(t);
    for (const a of this.acts.values()) freeFlowActs(this.ops, a);
    this.acts.clear();
    this.ops.free(this.scratch.normSq);
    this.ops.free(this.scratch.clip);
    this.last = null;
  }
}
