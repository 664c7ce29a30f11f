/**
 * The velocity field's shape: an MLP v(x, t) over 2-D points, time-conditioned by sinusoidal
 * features of t concatenated with x. Config, parameter specs (Hugging Face-like names, shapes,
 * weight decay) and validation; not the model (model.ts) nor the SDE (sde.ts).
 *
 * Layers: in = [x (D), temb(t) (E)] → H → … → H (`hidden` layers, SiLU after each) → D.
 * Linear weights are (out, in) as torch.nn.Linear, biases (out).
 */

export interface FlowModelConfig {
  /** Point dimension D (2 for the 2-D workbench). */
  dim: number;
  /** Hidden width H of every hidden layer (~64). */
  width: number;
  /** Number of hidden layers (Linear + SiLU each), ≥ 1; a final Linear maps H → D. */
  hidden: number;
  /** Time features E (even): sin and cos of t at E/2 frequencies, geometric from 1 to `maxFrequency`. */
  timeFeatures: number;
  /** Highest angular frequency of the time features (radians per unit t). */
  maxFrequency: number;
}

/** The 2-D workbench default: 3 hidden layers of 64, 16 time features up to 64 rad. About 9.7k parameters. */
export const FLOW_2D: FlowModelConfig = { dim: 2, width: 64, hidden: 3, timeFeatures: 16, maxFrequency: 64 };

export interface FlowParamSpec {
  name: string;
  /** (out, in) for weights, (out) for biases. */
  shape: number[];
  /** AdamW weight decay applies (weights yes, biases no). */
  decay: boolean;
}

/** Input width of the MLP: D + E. */
export const inputWidth = (c: FlowModelConfig): number => c.dim + c.timeFeatures;

/** Per layer `l` (0 … hidden), its input and output widths. */
export function layerDims(c: FlowModelConfig): [number, number][] {
  const dims: [number, number][] = [];
  for (let l = 0; l <= c.hidden; l++) dims.push([l === 0 ? inputWidth(c) : c.width, l === c.hidden ? c.dim : c.width]);
  return dims;
}

/** `layers.{l}.weight` (out, in) and `layers.{l}.bias` (out), layer by layer. */
export function flowParamSpecs(c: FlowModelConfig): FlowParamSpec[] {
  return layerDims(c).flatMap(([i, o], l) => [
    { name: `layers.${l}.weight`, shape: [o, i], decay: true },
    { name: `layers.${l}.bias`, shape: [o], decay: false },
  ]);
}

/** Problems with a config, one message per bad field (empty: valid). */
export function validateFlowModelConfig(c: FlowModelConfig): string[] {
  const problems: string[] = [];
  const int = (k: keyof FlowModelConfig, lo: number, hi: number) => {
    const v = c[k];
    if (!Number.isInteger(v) || v < lo || v > hi) problems.push(`${k} = ${v}: expected an integer in [${lo}, ${hi}]`);
  };
  int('dim', 1, 64);
  int('width', 1, 4096);
  int('hidden', 1, 16);
  int('timeFeatures', 2, 512);
  if (c.timeFeatures % 2 !== 0)
    problems.push(`timeFeatures = ${c.timeFeatures}: expected an even number (sin and cos per frequency)`);
  if (!(c.maxFrequency >= 1) || !Number.isFinite(c.maxFrequency))
    problems.push(`maxFrequency = ${c.maxFrequency}: expected a finite number ≥ 1`);
  return problems;
}

/**
 * The time features of t: `[sin(ω_0 t), …, sin(ω_{h−1} t), cos(ω_0 t), …]` with h = E/2 and
 * ω_k = maxFrequency^(k/(h−1)) (ω_0 = 1; h = 1: ω_0 = 1). Written into `out` at `offset`.
 */
export function timeFeatures(out: Float32Array | Float64Array, offset: number, t: number, c: FlowModelConfig): void {
  const h = c.timeFeatures / 2;
  for (let k = 0; k < h; k++) {
    const w = h === 1 ? 1 : Math.pow(c.maxFrequency, k / (h - 1));
    out[offset + k] = Math.sin(w * t);
    out[offset + h + k] = Math.cos(w * t);
  }
}

/** The MLP's input rows (N, D + E): row i is `[x_i, temb(t_i)]`; x (N, D), t (N). */
export function buildInputs(x: ArrayLike<number>, t: ArrayLike<number>, c: FlowModelConfig): Float32Array {
  const N = t.length;
  if (x.length !== N * c.dim) throw new Error(`buildInputs: x has ${x.length} values, expected N·D = ${N}·${c.dim}`);
  const W = inputWidth(c);
  const out = new Float32Array(N * W);
  for (let i = 0; i < N; i++) {
    for (let d = 0; d < c.dim; d++) out[i * W + d] = x[i * c.dim + d];
    timeFeatures(out, i * W + c.dim, t[i], c);
  }
  return out;
}
