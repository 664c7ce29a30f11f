/**
 * The sampling distribution of one next-token position, from its logits: the kept support, the
 * behavior log-probs over it (after temperature, top-k and top-p, renormalised) and the raw
 * log-probs of the unfiltered distribution at the sampling temperature over the whole vocabulary
 * (docs/rl-core.md "Data model": a Call's `behaviorLogProbs`, `rawLogProbs` and `support`).
 *
 * Not the draw (`sampleToken` in sample.ref.ts) and not a kernel: plain float64 arithmetic, the
 * spec `Ops.sample` is held to bit for bit on every backend (the wasm kernel
 * kernels/wasm/assembly/sample.ts repeats it with a port of the `Math.exp`/`Math.log` JavaScript
 * engines run). Reference: Hugging Face transformers `TemperatureLogitsWarper`, `TopKLogitsWarper`,
 * `TopPLogitsWarper` applied in that order (`generation/logits_process.py`, as `generate` builds
 * them), with vLLM's convention that temperature 0 means greedy.
 *
 * Pipeline, for finite logits `l` (masked ids, `l = −∞`, never enter the support):
 *   s        = (l − max l) / T                                  # HF temperature (shift-invariant)
 *   raw      = log_softmax(s)                                   # full vocabulary; log_softmax(l) when T = 0
 *   top-k    keep every id with l ≥ the k-th largest l           # HF: a value threshold, ties kept
 *   top-p    over the top-k survivors in (l desc, id asc) order, softmax(s) renormalised over them,
 *            keep the shortest prefix whose cumulative probability ≥ p (at least one id)
 *   behavior = s − logsumexp(s over the kept ids)
 *
 * Raw is what the trainer scores (Model.score at the same temperature, as verl's actor divides the
 * logits by the rollout temperature): the policy the sampler drew from before top-k/top-p, so the
 * ratio of trainer to sampler is 1 up to float32 when nothing filters. Greedy (T = 0) has no
 * tempered distribution; its raw log-probs are the untempered model's, log_softmax(l).
 *
 * Ties:
 * - top-k keeps every id tied with the k-th largest logit, so the support can exceed k. This is
 *   what HF (`scores < topk(scores)[-1]` removes) and vLLM (`logits < kth value` masked) do.
 * - top-p walks ids by descending logit, equal logits by ascending id, and stops as soon as the
 *   cumulative probability reaches p: of ids tied at the boundary the lower ids are kept. HF and
 *   vLLM keep the same number of ids but leave which tied ones to `torch.sort`'s order.
 * - temperature 0 keeps the arg-max, the lowest id among equal maxima (as `torch.argmax`).
 * The support is returned in ascending id order, whatever the filter order: inverse-CDF sampling
 * over it then moves only a little when the logits move a little (a near-tie never reorders it).
 */

/** Sampling settings of a rollout. Each field's default switches its filter off. */
export interface SamplingOptions {
  /**
   * Divides the logits before top-k/top-p (HF `TemperatureLogitsWarper`, vLLM `temperature`).
   * Default 1 (unchanged). 0 = greedy: the support is the arg-max alone with log-prob 0 (vLLM's
   * convention; HF refuses 0). Finite, ≥ 0.
   */
  temperature?: number;
  /**
   * Keeps the `topK` highest logits and every id tied with the last of them (HF
   * `TopKLogitsWarper`, vLLM `top_k`). Default 0 = off (vLLM's default; HF `GenerationConfig`
   * defaults to 50, pass 50 for that). A non-negative integer; values ≥ the vocabulary are off.
   */
  topK?: number;
  /**
   * Nucleus sampling: keeps the smallest set of most probable ids whose probability, after
   * temperature and top-k, sums to at least `topP`; always at least one id (HF `TopPLogitsWarper`
   * with `min_tokens_to_keep = 1`, vLLM `top_p`). Default 1 = off. In (0, 1].
   */
  topP?: number;
}

export interface SamplingDistribution {
  /** Kept ids in ascending order; never a masked (−∞) id. Length ≥ 1. */
  support: Int32Array;
  /** Behavior log-prob of each `support` id (same index), renormalised over the support. */
  logProbs: Float64Array;
  /**
   * Log-softmax of the logits at the sampling temperature, log_softmax(l / T), before top-k/top-p;
   * indexed by id, full vocabulary (−∞ for masked ids). At T = 0 (greedy), log_softmax(l).
   */
  rawLogProbs: Float64Array;
  /**
   * Whether top-k or top-p filtered (a top-k below the finite ids, a top-p below 1) or the
   * temperature is 0: the behaviour log-probs are then renormalised (or 0), not the raw ones.
   * False: `logProbs` are `rawLogProbs` over the support, bit for bit.
   */
  filtered: boolean;
}

/** Problems with `options`, one message per bad field naming it and its allowed range; empty when valid. */
export function samplingOptionProblems(options: SamplingOptions): string[] {
  const problems: string[] = [];
  const { temperature = 1, topK = 0, topP = 1 } = options;
  if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0) {
    problems.push(`temperature = ${temperature}: expected a finite number ≥ 0 (0 = greedy, 1 = unchanged)`);
  }
  if (typeof topK !== 'number' || !Number.isSafeInteger(topK) || topK < 0) {
    problems.push(`topK = ${topK}: expected an integer ≥ 0 (0 = off)`);
  }
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1)) {
    problems.push(`topP = ${topP}: expected a number in (0, 1] (1 = off)`);
  }
  return problems;
}

/**
 * The log-softmax of `l / T` over the full vocabulary (float64), shifted by the finite maximum `m`
 * of `l`; T > 0 (T = 1: log_softmax(l), bit for bit as `l − m − logZ`).
 */
function logSoftmax(l: Float64Array, m: number, T: number): Float64Array {
  const s = new Float64Array(l.length);
  let z = 0;
  for (let i = 0; i < s.length; i++) {
    s[i] = (l[i] - m) / T;
    z += Math.exp(s[i]);
  }
  const logZ = Math.log(z);
  for (let i = 0; i < s.length; i++) s[i] -= logZ;
  return s;
}

/** 0 … V − 1, one array per V shared by every call (a support is never written to). */
const ALL_IDS = new Map<number, Int32Array>();
function allIds(V: number): Int32Array {
  let ids = ALL_IDS.get(V);
  if (!ids) {
    ids = new Int32Array(V);
    for (let i = 0; i < V; i++) ids[i] = i;
    ALL_IDS.set(V, ids);
  }
  return ids;
}

/** Copies `logits` to float64; refuses NaN and +∞ with their index and an all-masked vector. */
function checkedLogits(logits: ArrayLike<number>): { l: Float64Array; max: number; argmax: number } {
  const V = logits.length;
  if (!(V > 0)) throw new Error(`samplingDistribution: logits are empty; expected one logit per vocabulary id`);
  const l = new Float64Array(V);
  let max = -Infinity;
  let argmax = -1;
  for (let i = 0; i < V; i++) {
    const v = logits[i];
    if (typeof v !== 'number' || Number.isNaN(v) || v === Infinity) {
      throw new Error(
        `samplingDistribution: logits[${i}] = ${v} at index ${i}: expected a finite number or −Infinity (a masked id)`,
      );
    }
    l[i] = v;
    if (v > max) {
      max = v;
      argmax = i;
    }
  }
  if (argmax < 0)
    throw new Error(`samplingDistribution: all ${V} logits are −Infinity; expected at least one finite logit`);
  return { l, max, argmax };
}

/**
 * The sampling distribution of `logits` (one position, `V` entries, any float array) under
 * `options`; see the module docblock for the order of the filters and the tie rules. Throws on an
 * invalid option (naming the field and its range), a NaN or +∞ logit (naming its index), or when
 * every logit is −∞.
 */
export function samplingDistribution(logits: ArrayLike<number>, options: SamplingOptions = {}): SamplingDistribution {
  const problems = samplingOptionProblems(options);
  if (problems.length > 0) throw new Error(`samplingDistribution: ${problems.join('; ')}`);
  const { temperature: T = 1, topK = 0, topP = 1 } = options;
  const { l, max: m, argmax } = checkedLogits(logits);
  const V = l.length;
  const rawLogProbs = logSoftmax(l, m, T === 0 ? 1 : T);
  if (T === 0) return { support: Int32Array.of(argmax), logProbs: Float64Array.of(0), rawLogProbs, filtered: true };

  let finiteCount = 0;
  for (let i = 0; i < V; i++) if (l[i] > -Infinity) finiteCount++;
  const filtered = (topK > 0 && topK < finiteCount) || topP < 1;
  if (!filtered) {
    // Nothing filters: the kept ids are those of finite raw log-prob, and their behaviour log-probs
    // are the raw ones bit for bit (the same shifted logits, normalised by the same sum: the ids
    // left out add exp(−∞) = 0 to it). Taken without the general path's arrays: this runs for
    // every row at every position of a sampler's decoding.
    let n = 0;
    for (let i = 0; i < V; i++) if (rawLogProbs[i] > -Infinity) n++;
    if (n === V) return { support: allIds(V), logProbs: rawLogProbs, rawLogProbs, filtered: false };
    const support = new Int32Array(n);
    const logProbs = new Float64Array(n);
    for (let i = 0, j = 0; i < V; i++)
      if (rawLogProbs[i] > -Infinity) {
        support[j] = i;
        logProbs[j++] = rawLogProbs[i];
      }
    return { support, logProbs, rawLogProbs, filtered: false };
  }
  const finite: number[] = [];
  for (let i = 0; i < V; i++) if (l[i] > -Infinity) finite.push(i);
  // (l desc, id asc): the order top-k's threshold and top-p's cumulative sum are taken in.
  let kept = finite.sort((a, b) => l[b] - l[a] || a - b);
  if (topK > 0 && topK < kept.length) {
    const threshold = l[kept[topK - 1]];
    let n = topK;
    while (n < kept.length && l[kept[n]] >= threshold) n++;
    kept = kept.slice(0, n);
  }
  if (topP < 1)
    kept = kept.slice(
      0,
      nucleusSize(
        kept.map((i) => (l[i] - m) / T),
        topP,
      ),
    );
  kept.sort((a, b) => a - b);

  // Renormalise over the kept ids, in ascending id order. Ids whose scaled logit underflows to −∞
  // (a vanishing temperature) have probability 0 and are dropped, so every behavior log-prob is finite.
  const s = kept.map((i) => (l[i] - m) / T);
  const support = Int32Array.from(kept.filter((_, j) => s[j] > -Infinity));
  const sKept = s.filter((v) => v > -Infinity);
  let z = 0;
  for (const v of sKept) z += Math.exp(v);
  const logZ = Math.log(z);
  const logProbs = Float64Array.from(sKept, (v) => v - logZ);
  return { support, logProbs, rawLogProbs, filtered: true };
}

/**
 * How many of `s` (scaled logits in descending order) top-p keeps: the shortest prefix whose
 * softmax mass, renormalised over all of `s`, reaches `p`; at least 1, at most `s.length`.
 */
function nucleusSize(s: readonly number[], p: number): number {
  const top = s[0];
  let z = 0;
  for (const v of s) z += Math.exp(v - top);
  let cumulative = 0;
  for (let j = 0; j < s.length; j++) {
    cumulative += Math.exp(s[j] - top) / z;
    if (cumulative >= p) return j + 1;
  }
  return s.length;
}
