/**
 * CPU reference for Llama RMSNorm (no bias, no mean subtraction): plain loops from the formula,
 * the specification rmsnorm_forward.wgsl and rmsnorm_backward.wgsl are tested against.
 *   forward:  r[n] = 1 / sqrt(Σ_c x[n,c]² / C + eps);  out[n,c] = x[n,c] · r[n] · w[c];  rstd[n] = r[n]
 *   backward: dinp[n,c] += r·w[c]·dout[n,c] − x[n,c] · r³ · Σ_j dout[n,j]·w[j]·x[n,j] / C
 *             dweight[c] += Σ_n dout[n,c] · x[n,c] · r[n]                          (both accumulated)
 * Float64 arithmetic; outputs may be Float32Array (the cpu backend) or Float64Array (finite
 * differences). Formula: Zhang & Sennrich 2019, as in Hugging Face `LlamaRMSNorm`.
 */
import type { RefOut } from '../residual/residual.ref';

type Sized = { length: number };

/** Throws with expected and actual sizes when the buffers do not match (N, C). */
export function checkRmsnormShapes(
  op: string,
  rows: Record<string, Sized>,
  perRow: Record<string, Sized>,
  weights: Record<string, Sized>,
  N: number,
  C: number,
): void {
  for (const [name, v] of [
    ['N', N],
    ['C', C],
  ] as const) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`${op}: ${name} must be a non-negative integer, got ${v}`);
  }
  if (C === 0) throw new Error(`${op}: C must be at least 1 (the mean of an empty row is undefined)`);
  const need = (group: Record<string, Sized>, want: number, formula: string) => {
    for (const [name, t] of Object.entries(group)) {
      if (t.length < want) throw new Error(`${op}: ${name} has ${t.length} elements, needs ${formula} = ${want}`);
    }
  };
  need(rows, N * C, `N*C = ${N}*${C}`);
  need(perRow, N, 'N');
  need(weights, C, 'C');
}

/** Throws unless eps is finite and ≥ 0. */
export function checkRmsnormEps(eps: number): void {
  if (!Number.isFinite(eps) || eps < 0)
    throw new Error(`rmsnormForward: eps must be finite and ≥ 0, got ${eps} (Llama uses 1e-5 or 1e-6)`);
}

export function rmsnormForwardRef(
  out: RefOut,
  rstd: RefOut,
  inp: ArrayLike<number>,
  weight: ArrayLike<number>,
  N: number,
  C: number,
  eps: number,
): void {
  checkRmsnormShapes('rmsnormForward', { out, inp }, { rstd }, { weight }, N, C);
  checkRmsnormEps(eps);
  for (let n = 0; n < N; n++) {
    let ss = 0;
    for (let c = 0; c < C; c++) ss += inp[n * C + c] * inp[n * C + c];
    const r = 1 / Math.sqrt(ss / C + eps);
    rstd[n] = r;
    for (let c = 0; c < C; c++) out[n * C + c] = inp[n * C + c] * r * weight[c];
  }
}

/** `rstd` is what rmsnormForwardRef saved. */
export function rmsnormBackwardRef(
  dinp: RefOut,
  dweight: RefOut,
  dout: ArrayLike<number>,
  inp: ArrayLike<number>,
  weight: ArrayLike<number>,
  rstd: ArrayLike<number>,
  N: number,
  C: number,
): void {
  checkRmsnormShapes('rmsnormBackward', { dinp, dout, inp }, { rstd }, { dweight, weight }, N, C);
  for (let n = 0; n < N; n++) {
    const r = rstd[n];
    let dot = 0;
    for (let c = 0; c < C; c++) dot += dout[n * C + c] * weight[c] * inp[n * C + c];
    for (let c = 0; c < C; c++) {
      const i = n * C + c;
      dinp[i] += r * weight[c] * dout[i] - (inp[i] * r * r * r * dot) / C;
      // dweight goes on from its value row by row, rounded as it holds it: rows split over calls sum alike.
      dweight[c] += dout[i] * inp[i] * r;
    }
  }
}
