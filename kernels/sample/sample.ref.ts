/**
 * The draw of one id from a `SamplingDistribution` (`sampleToken`), and the reference of
 * `Ops.sample` (`sampleRef`): per row of logits (N, V), the distribution of distribution.ref.ts
 * (temperature, top-k, top-p, log-softmax in float64) and one draw with the uniform the caller
 * passes for that row. Every backend's `sample` gives these ids and log-probs bit for bit (the wasm
 * kernel is kernels/wasm/assembly/sample.ts; WebGPU runs this function on the logits it reads back:
 * kernels/sample/sample.ts says why).
 *
 * `sampleToken` is inverse-CDF sampling over the support in its fixed (ascending id) order, the
 * way `torch.multinomial` walks a probability row: one uniform u in [0, 1) picks the first id whose
 * cumulative probability exceeds u · (total mass). It always consumes exactly one uniform, greedy
 * included, so the position in a seeded stream never depends on the settings or on the logits.
 * Not the stream of uniforms (worker/rollout/sample.ts `Sampler`) and not the rollout loop.
 */
import type { SamplingDistribution, SamplingOptions } from './distribution.ref';
import { samplingDistribution, samplingOptionProblems } from './distribution.ref';

export interface SampledToken {
  /** The drawn vocabulary id (always one of `dist.support`). */
  id: number;
  /** Its log-prob under the sampling distribution (after temperature/top-k/top-p, renormalised). */
  behaviorLogProb: number;
  /** Its log-prob under the unfiltered model at the temperature, log_softmax(l / T) (`dist.rawLogProbs[id]`). */
  rawLogProb: number;
}

/** exp of a support's log-probs, kept between calls (one draw at a time: no call is re-entered). */
let probs = new Float64Array(0);

/** One draw from `dist` with the next value of `rand` (uniform in [0, 1)). */
export function sampleToken(dist: Omit<SamplingDistribution, 'filtered'>, rand: () => number): SampledToken {
  const u = rand();
  if (!(u >= 0 && u < 1)) throw new Error(`sampleToken: rand() returned ${u}; expected a number in [0, 1)`);
  const { support, logProbs, rawLogProbs } = dist;
  const n = support.length;
  if (n === 0 || logProbs.length !== n) {
    throw new Error(
      `sampleToken: support has ${n} ids and logProbs ${logProbs.length} entries; expected the same number, at least 1`,
    );
  }
  // Scale u by the actual total, so rounding in the renormalised probabilities biases no id.
  if (probs.length < n) probs = new Float64Array(n);
  let total = 0;
  for (let j = 0; j < n; j++) total += probs[j] = Math.exp(logProbs[j]);
  const target = u * total;
  const pick = (j: number): SampledToken => ({
    id: support[j],
    behaviorLogProb: logProbs[j],
    rawLogProb: rawLogProbs[support[j]],
  });
  let cumulative = 0;
  let last = -1;
  for (let j = 0; j < n; j++) {
    const p = probs[j];
    if (p === 0) continue;
    last = j;
    cumulative += p;
    if (target < cumulative) return pick(j);
  }
  // Only reached when u · total rounds up to the total: the last id with positive probability.
  if (last < 0) throw new Error(`sampleToken: every support id has probability 0; expected at least one positive`);
  return pick(last);
}

/** What `Ops.sample` returns: one entry per row; a skipped row (uniform NaN) has id −1 and log-prob NaN. */
export interface SampleOutput {
  /** The drawn id of each row. */
  ids: Int32Array;
  /** Its behaviour log-prob (float64: after temperature/top-k/top-p, renormalised; 0 when greedy). */
  logProbs: Float64Array;
  /**
   * 1 where the row's distribution was filtered (`SamplingDistribution.filtered`: top-k below the
   * finite ids, top-p below 1, or greedy), 0 where its log-prob is the raw log_softmax(l / T).
   */
  filtered: Uint8Array;
}

/**
 * Refuses arguments a caller can get wrong, naming them: the dims, the logits' size, a uniform
 * outside [0, 1) (NaN skips the row) and a bad sampling option.
 */
export function checkSampleArgs(
  op: string,
  logitsLength: number,
  uniforms: ArrayLike<number>,
  N: number,
  V: number,
  options: SamplingOptions,
): void {
  if (!Number.isInteger(N) || N < 0) throw new Error(`${op}: N must be a non-negative integer, got ${N}`);
  if (!Number.isInteger(V) || V < 1) throw new Error(`${op}: V must be a positive integer, got ${V}`);
  if (logitsLength < N * V) throw new Error(`${op}: logits has ${logitsLength} elements, needs N*V = ${N}*${V}`);
  if (uniforms.length !== N) throw new Error(`${op}: uniforms has ${uniforms.length} entries; expected N = ${N}`);
  for (let r = 0; r < N; r++) {
    const u = uniforms[r];
    if (!(u >= 0 && u < 1) && !Number.isNaN(u))
      throw new Error(`${op}: uniforms[${r}] = ${u}: expected a number in [0, 1), or NaN to skip row ${r}`);
  }
  const problems = samplingOptionProblems(options);
  if (problems.length > 0) throw new Error(`${op}: ${problems.join('; ')}`);
}

/** The message for row `r`'s logit `i` = `v` (NaN or +∞), or for a row with no finite logit (`i` = −1). */
export function sampleLogitProblem(op: string, r: number, i: number, v: number, V: number): string {
  return i < 0
    ? `${op}: row ${r}: all ${V} logits are −Infinity; expected at least one finite logit`
    : `${op}: logits[${r}, ${i}] = ${v}: expected a finite number or −Infinity (a masked id)`;
}

/** The first problem of row `r`'s logits (a NaN or +∞, or no finite logit), or null. */
function rowProblem(op: string, logits: ArrayLike<number>, r: number, V: number): string | null {
  let finite = false;
  for (let i = 0; i < V; i++) {
    const v = logits[r * V + i];
    if (Number.isNaN(v) || v === Infinity) return sampleLogitProblem(op, r, i, v, V);
    if (v > -Infinity) finite = true;
  }
  return finite ? null : sampleLogitProblem(op, r, -1, 0, V);
}

/**
 * One id per row of `logits` (N, V): row r draws from `samplingDistribution(row r, options)` with
 * `uniforms[r]` (in [0, 1); NaN skips the row). Throws on a bad argument (checkSampleArgs) or on
 * the first row, in order, with a NaN or +∞ logit or none finite.
 */
export function sampleRef(
  logits: Float32Array | Float64Array,
  uniforms: ArrayLike<number>,
  N: number,
  V: number,
  options: SamplingOptions = {},
): SampleOutput {
  checkSampleArgs('sample', logits.length, uniforms, N, V, options);
  const out: SampleOutput = {
    ids: new Int32Array(N).fill(-1),
    logProbs: new Float64Array(N).fill(NaN),
    filtered: new Uint8Array(N),
  };
  for (let r = 0; r < N; r++) {
    const u = uniforms[r];
    if (Number.isNaN(u)) continue;
    const problem = rowProblem('sample', logits, r, V);
    if (problem) throw new Error(problem);
    const dist = samplingDistribution(logits.subarray(r * V, (r + 1) * V), options);
    const tok = sampleToken(dist, () => u);
    out.ids[r] = tok.id;
    out.logProbs[r] = tok.behaviorLogProb;
    out.filtered[r] = dist.filtered ? 1 : 0;
  }
  return out;
}
