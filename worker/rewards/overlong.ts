/**
 * DAPO's soft overlong punishment (Yu et al. 2025, eq. 13), exactly as verl's DAPO reward manager
 * applies it (verl/workers/reward_manager/dapo.py, options `reward_model.overlong_buffer.{enable,
 * len, penalty_factor}`): a response whose length L (its ids, EOS included: verl's
 * `valid_response_length`) exceeds the expected length E = maxLength − buffer is punished
 *
 *   penalty = min(−(L − E) / buffer · penaltyFactor, 0)
 *
 * and the penalty is added to its reward, truncated or not. So the penalty is 0 up to E, falls
 * linearly to −penaltyFactor at L = maxLength (verl `data.max_response_length`), and the reward of
 * a correct but long response shrinks towards 1 − penaltyFactor.
 */
export interface OverlongOptions {
  /** verl `overlong_buffer.len`: the last ids of the budget in which the penalty grows. */
  buffer: number;
  /** verl `overlong_buffer.penalty_factor`: the penalty at the full budget (DAPO 1.0). */
  penaltyFactor: number;
}

/** The penalty (≤ 0) of a response of `length` ids under a budget of `maxLength` ids. */
export function overlongPenalty(length: number, maxLength: number, o: OverlongOptions): number {
  if (!Number.isInteger(o.buffer) || o.buffer < 1)
    throw new Error(`overlongPenalty: buffer = ${o.buffer}; expected an integer ≥ 1`);
  const exceed = length - (maxLength - o.buffer);
  // `+ 0` turns the −0 of a response within the budget into 0.
  return Math.min((-exceed / o.buffer) * o.penaltyFactor, 0) + 0;
}
