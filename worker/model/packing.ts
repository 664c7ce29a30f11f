/**
 * The packed batch the model reads (`PackedInput`), and the way between its entries (aligned with
 * input ids, as the RL core uses them) and the model's positions (position t predicts the id at
 * t + 1 of the same chain). Pure functions over [rows, width] arrays; the model applies them
 * around forward and backward.
 */

/** A packed batch as the model reads it: row-major [rows, width]. */
export interface PackedInput {
  rows: number;
  width: number;
  inputIds: ArrayLike<number>;
  segmentIds: ArrayLike<number>;
  positions: ArrayLike<number>;
}

/** For each position, the id it predicts: ids[t + 1] when t + 1 continues t's chain, else −1. */
export function targetsFor(
  ids: ArrayLike<number>,
  segments: ArrayLike<number>,
  rows: number,
  width: number,
): Int32Array {
  const out = new Int32Array(rows * width).fill(-1);
  for (let r = 0; r < rows; r++) {
    for (let t = 0; t + 1 < width; t++) {
      const i = r * width + t;
      if (segments[i] !== 0 && segments[i + 1] === segments[i]) out[i] = ids[i + 1];
    }
  }
  return out;
}

/** Per-position values → entries aligned with ids: out[t] = pos[t − 1] when t continues a chain, else 0. */
export function alignToIds(
  pos: ArrayLike<number>,
  segments: ArrayLike<number>,
  rows: number,
  width: number,
): Float32Array {
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let t = 1; t < width; t++) {
      const i = r * width + t;
      if (segments[i] !== 0 && segments[i - 1] === segments[i]) out[i] = pos[i - 1];
    }
  }
  return out;
}

/**
 * Σ_v π_v² per entry aligned with ids, from the two logsumexps the log-prob kernel gives aligned the
 * same way: exp(lse2 − 2·lse) in float64, lse = logsumexp(s·l) and lse2 = logsumexp(2s·l) (verl
 * `calculate_sum_pi_squared_from_logits`); 0 where no position predicts the id (a chain's start, padding).
 */
export function sumPiSquaredOf(
  lse: ArrayLike<number>,
  lse2: ArrayLike<number>,
  segments: ArrayLike<number>,
  width: number,
): Float64Array {
  const out = new Float64Array(lse.length);
  for (let i = 0; i < lse.length; i++)
    if (i % width > 0 && segments[i] !== 0 && segments[i - 1] === segments[i]) out[i] = Math.exp(lse2[i] - 2 * lse[i]);
  return out;
}

/** The logit bias outside a support: far enough below any logit that its probability is exactly 0 in float32. */
export const OUTSIDE_SUPPORT = -1e9;

/**
 * The (rows · width, V) logit bias that renormalises each sampled id's log-prob over the
 * sampler's support (pack's `support`: per id the kept ids, CSR by flat index): 0 on the kept ids
 * and OUTSIDE_SUPPORT elsewhere, at the position that predicts the id (the one before it in its
 * chain); 0 on every other position. `rows`: which rows of the batch, in order (default all).
 */
export function supportBias(
  support: { offsets: Int32Array; ids: Int32Array },
  segments: ArrayLike<number>,
  width: number,
  V: number,
  rows: readonly number[],
): Float32Array {
  const out = new Float32Array(rows.length * width * V);
  rows.forEach((r, k) => {
    for (let t = 1; t < width; t++) {
      const i = r * width + t;
      const [from, to] = [support.offsets[i], support.offsets[i + 1]];
      if (from === to || segments[i] === 0 || segments[i - 1] !== segments[i]) continue;
      const row = out.subarray((k * width + t - 1) * V, (k * width + t) * V);
      row.fill(OUTSIDE_SUPPORT);
      for (let j = from; j < to; j++) row[support.ids[j]] = 0;
    }
  });
  return out;
}

/** The transpose of alignToIds: a per-id seed (∂loss/∂logp_t) → a per-position seed. */
export function seedToPositions(
  perId: ArrayLike<number>,
  segments: ArrayLike<number>,
  rows: number,
  width: number,
): Float32Array {
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let t = 1; t < width; t++) {
      const i = r * width + t;
      if (segments[i] !== 0 && segments[i - 1] === segments[i]) out[i - 1] = perId[i];
    }
  }
  return out;
}

/**
 * One sequence per row, each a single chain from position 0, right-padded to `width` (default:
 * the longest): the batch shape of sampling, prefill and DPO pairs.
 */
export function rowPerSequence(
  seqs: readonly ArrayLike<number>[],
  width = Math.max(0, ...seqs.map((s) => s.length)),
): PackedInput {
  const rows = seqs.length;
  const inputIds = new Int32Array(rows * width);
  const segmentIds = new Int32Array(rows * width);
  const positions = new Int32Array(rows * width);
  seqs.forEach((s, r) => {
    if (s.length > width) throw new Error(`rowPerSequence: sequence ${r} has ${s.length} ids, width is ${width}`);
    for (let t = 0; t < s.length; t++) {
      inputIds[r * width + t] = s[t];
      segmentIds[r * width + t] = 1;
      positions[r * width + t] = t;
    }
  });
  return { rows, width, inputIds, segmentIds, positions };
}
