/**
 * CPU reference for the fused log-softmax over the LM head's logits (z: (N, V), row-major),
 * written from the formulas, float64 throughout; outputs are stored into whatever array is given
 * (Float32Array in the backends, Float64Array for finite-difference checks).
 *   lse[t]     = log Σ_v exp z[t, v]               (max-subtracted)
 *   logp[t]    = z[t, target[t]] − lse[t]          (0 when target[t] < 0: padding / no prediction)
 *   entropy[t] = −Σ_v p_v log p_v                  (every row, padding included; callers mask it)
 * Backward (accumulates, +=), seeded by any per-token dlogp and optionally dentropy:
 *   dlogits[t, v] += dlogp[t]·(1[v = target[t]] − p_v) − dentropy[t]·p_v·(log p_v + entropy[t])
 * A target ≥ V is a bug: the reference throws (the GPU kernel writes NaN, it cannot throw).
 */

/** Output arrays: f32 in the backends, f64 for gradient checks. */
export type RefOut = Float32Array | Float64Array;

/** The optional entropy seed of the backward: dentropy (N) and the forward's entropy (N). */
export interface EntropyGrad<T> {
  dentropy: T;
  entropy: T;
}

export function logprobForwardRef(
  logp: RefOut,
  entropy: RefOut,
  lse: RefOut,
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
): void {
  checkLogprobShapes(
    'logprobForwardRef',
    { logp: logp.length, entropy: entropy.length, lse: lse.length, logits: logits.length, targets: targets.length },
    N,
    V,
  );
  for (let t = 0; t < N; t++) {
    const row = t * V;
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, logits[row + v]);
    let s = 0;
    for (let v = 0; v < V; v++) s += Math.exp(logits[row + v] - m);
    const rowLse = m + Math.log(s);
    let h = 0;
    for (let v = 0; v < V; v++) {
      const lp = logits[row + v] - rowLse;
      h -= Math.exp(lp) * lp;
    }
    lse[t] = rowLse;
    entropy[t] = h;
    logp[t] = targetOf(targets, t, V) < 0 ? 0 : logits[row + targets[t]] - rowLse;
  }
}

export function logprobBackwardRef(
  dlogits: RefOut,
  dlogp: ArrayLike<number>,
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  lse: ArrayLike<number>,
  N: number,
  V: number,
  entropyGrad?: EntropyGrad<ArrayLike<number>>,
): void {
  const sizes: Record<string, number> = {
    dlogits: dlogits.length,
    dlogp: dlogp.length,
    logits: logits.length,
    targets: targets.length,
    lse: lse.length,
  };
  if (entropyGrad) Object.assign(sizes, { dentropy: entropyGrad.dentropy.length, entropy: entropyGrad.entropy.length });
  checkLogprobShapes('logprobBackwardRef', sizes, N, V);
  for (let t = 0; t < N; t++) {
    const row = t * V;
    const target = targetOf(targets, t, V);
    const seed = target < 0 ? 0 : dlogp[t];
    const dent = entropyGrad ? entropyGrad.dentropy[t] : 0;
    const h = entropyGrad ? entropyGrad.entropy[t] : 0;
    for (let v = 0; v < V; v++) {
      const lp = logits[row + v] - lse[t];
      const p = Math.exp(lp);
      const g = seed * ((v === target ? 1 : 0) - p) - dent * p * (lp + h);
      dlogits[row + v] += g;
    }
  }
}

export function targetOf(targets: ArrayLike<number>, t: number, V: number): number {
  const target = targets[t];
  if (!Number.isInteger(target) || target >= V) {
    throw new Error(`logprob: targets[${t}] = ${target} is not an id in 0..${V - 1} (or < 0 for "no target")`);
  }
  return target;
}

/**
 * Throws with actual and expected sizes. Each named buffer must hold N elements, or N·V for
 * `logits` / `dlogits`. V must be ≥ 1 (a softmax over nothing is undefined).
 */
export function checkLogprobShapes(op: string, sizes: Record<string, number>, N: number, V: number): void {
  if (!Number.isInteger(N) || N < 0) throw new Error(`${op}: N must be a non-negative integer, got ${N}`);
  if (!Number.isInteger(V) || V < 1) throw new Error(`${op}: V must be a positive integer, got ${V}`);
  for (const [name, len] of Object.entries(sizes)) {
    const need = name === 'logits' || name === 'dlogits' ? N * V : N;
    const what = need === N ? `N = ${N}` : `N*V = ${N}*${V} = ${N * V}`;
    if (len < need) throw new Error(`${op}: ${name} has ${len} elements, needs ${what}`);
  }
}
