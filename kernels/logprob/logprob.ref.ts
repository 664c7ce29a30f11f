/**
 * CPU reference for the fused log-softmax over the LM head's logits l: (N, V), row-major, at an
 * inverse temperature `scale` s = 1/T (default 1), written from the formulas, float64 throughout;
 * outputs are stored into whatever array is given (Float32Array in the backends, Float64Array for
 * finite-difference checks). With z = s·l (the sampler's tempered logits, distribution.ts):
 *   lse[t]     = log Σ_v exp z[t, v]               (max-subtracted)
 *   logp[t]    = z[t, target[t]] − lse[t]          (0 when target[t] < 0: padding / no prediction)
 *   entropy[t] = −Σ_v p_v log p_v                  (every row, padding included; callers mask it)
 * where p = softmax(z). Backward (accumulates, +=), seeded by any per-token dlogp and optionally
 * dentropy; the chain rule through z = s·l brings the factor s:
 *   dlogits[t, v] += s·(dlogp[t]·(1[v = target[t]] − p_v) − dentropy[t]·p_v·(log p_v + entropy[t]))
 * This is verl's actor (`dp_actor.py` `_forward_micro_batch`: `logits.div_(temperature)` before
 * the log-softmax and the entropy), so the trainer scores the policy the sampler drew from.
 * A target ≥ V is a bug: the reference throws (the GPU kernel writes NaN, it cannot throw).
 */

/** Output arrays: f32 in the backends, f64 for gradient checks. */
type RefOut = Float32Array | Float64Array;

/** The optional entropy seed of the backward: dentropy (N) and the forward's entropy (N). */
export interface EntropyGrad<T> {
  dentropy: T;
  entropy: T;
}

/** Throws unless the inverse temperature s = 1/T is finite and > 0 (T = 0, greedy, has no log-softmax). */
export function checkLogprobScale(op: string, scale: number): void {
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0)
    throw new Error(`${op}: scale (1 / temperature) must be finite and > 0, got ${scale} (1 = untempered logits)`);
}

export function logprobForwardRef(
  logp: RefOut,
  entropy: RefOut,
  lse: RefOut,
  logits: ArrayLike<number>,
  targets: ArrayLike<number>,
  N: number,
  V: number,
  scale = 1,
): void {
  checkLogprobShapes(
    'logprobForwardRef',
    { logp: logp.length, entropy: entropy.length, lse: lse.length, logits: logits.length, targets: targets.length },
    N,
    V,
  );
  checkLogprobScale('logprobForwardRef', scale);
  for (let t = 0; t < N; t++) {
    const row = t * V;
    const z = (v: number) => scale * logits[row + v];
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, z(v));
    let s = 0;
    for (let v = 0; v < V; v++) s += Math.exp(z(v) - m);
    const rowLse = m + Math.log(s);
    let h = 0;
    for (let v = 0; v < V; v++) {
      const lp = z(v) - rowLse;
      h -= Math.exp(lp) * lp;
    }
    lse[t] = rowLse;
    entropy[t] = h;
    logp[t] = targetOf(targets, t, V) < 0 ? 0 : z(targets[t]) - rowLse;
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
  scale = 1,
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
  checkLogprobScale('logprobBackwardRef', scale);
  for (let t = 0; t < N; t++) {
    const row = t * V;
    const target = targetOf(targets, t, V);
    const seed = target < 0 ? 0 : dlogp[t];
    const dent = entropyGrad ? entropyGrad.dentropy[t] : 0;
    const h = entropyGrad ? entropyGrad.entropy[t] : 0;
    for (let v = 0; v < V; v++) {
      const lp = scale * logits[row + v] - lse[t];
      const p = Math.exp(lp);
      const g = seed * ((v === target ? 1 : 0) - p) - dent * p * (lp + h);
      dlogits[row + v] += scale * g;
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
