/**
 * Masked GAE with masked whitening, for PPO with a critic.
 *
 * Reference: verl `compute_gae_advantage_return` (docs/rl-formulas.md §3.4), backwards from a zero
 * tail bootstrap; tokens off the mask (observations, prompts, padding) are skipped, carrying the
 * next trainable token's value and running advantage. Advantages are `masked_whiten`ed over every
 * trainable token of the batch (unbiased, +1e-8; `shiftMean: false` adds the mean back, verl
 * `shift_mean=False`); returns are the un-whitened advantages plus the values. Two layouts:
 * - per row (default, verl): each row is one sequence. Every entry equals verl's, including the
 *   don't-care carry values off the mask.
 * - per session (dew PPORollout): given pack's `sessionIds` and `callIndex`, the recursion runs
 *   over each session's trainable tokens in call order, wherever the packer put them. Entries
 *   off the mask are 0 there.
 * Deviations from verl: no trainable token gives zero advantages, zero returns and `mass` 0 (dew;
 * verl raises); one trainable token is refused (as verl). Non-finite entries off the mask are
 * ignored instead of propagating. Not a value loss (value-loss.ts, objectives/ppo.ts).
 */
import { checkFinite, checkTable } from '../table';
import { verlWhitenStats, whitenWith } from './whiten';

export interface GaeInput {
  /** Token-level rewards `[rows, width]` (verl `token_level_rewards`: the terminal reward on the last action token). Entries off the mask are ignored, as in verl. */
  rewards: ArrayLike<number>;
  /** Critic values `[rows, width]`, the value of the state each token was drawn from. */
  values: ArrayLike<number>;
  /** 1 on trainable (action) tokens, 0 elsewhere, `[rows, width]`. */
  mask: ArrayLike<number>;
  rows: number;
  width: number;
  /** pack's `sessionIds` (1-based, 0 = none). With `callIndex`, selects the per-session layout. Default: absent (per row, verl). */
  sessionIds?: ArrayLike<number>;
  /** pack's `callIndex` (the call of each sampled id within its session). Required with `sessionIds`. */
  callIndex?: ArrayLike<number>;
}

export interface GaeOptions {
  /** Discount γ. Default `1.0` (verl `algorithm.gamma`; dew PPORollout also 1.0). */
  gamma?: number;
  /** GAE λ. Default `1.0` (verl `algorithm.lam`; dew PPORollout uses 0.95). */
  lam?: number;
  /** Whiten the advantages over the batch's trainable tokens. Default `true` (verl always does). */
  whiten?: boolean;
  /**
   * verl `masked_whiten`'s `shift_mean`: `true` (default, verl's GAE) centres the whitened
   * advantages; `false` divides by the std and adds the batch mean back, `(a − μ)/σ + μ`. Read only
   * when whitening.
   */
  shiftMean?: boolean;
}

export interface GaeResult {
  /** `[rows, width]` advantages, whitened unless `whiten: false` (and re-centred unless `shiftMean: false`). */
  advantages: Float64Array;
  /** `[rows, width]` returns: un-whitened advantages plus values (the value-loss targets). */
  returns: Float64Array;
  /** Number of trainable tokens. */
  mass: number;
}

/** Masked GAE over a `[rows, width]` batch. */
export function gae(input: GaeInput, options: GaeOptions = {}): GaeResult {
  const { rewards, values, mask, rows, width, sessionIds, callIndex } = input;
  const gamma = options.gamma ?? 1.0;
  const lam = options.lam ?? 1.0;
  for (const [name, a] of [
    ['rewards', rewards],
    ['values', values],
    ['mask', mask],
  ] as const)
    checkTable(name, a, rows, width);
  let mass = 0;
  let only = -1;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0 && mask[i] !== 1)
      throw new Error(`mask[${Math.floor(i / width)}, ${i % width}] = ${mask[i]}: expected 0 or 1`);
    if (mask[i] === 1) {
      mass++;
      only = i;
    }
  }
  checkFinite('rewards', rewards, width, mask);
  checkFinite('values', values, width, mask);
  const raw = new Float64Array(rows * width);
  const returns = new Float64Array(rows * width);
  if (mass === 0) return { advantages: new Float64Array(rows * width), returns, mass };
  if (mass === 1) {
    throw new Error(
      `gae: the batch's only trainable token is [${Math.floor(only / width)}, ${only % width}]; whitening one token is undefined (verl masked_var raises)`,
    );
  }
  const bySession = sessionIds !== undefined;
  if (bySession) {
    if (!callIndex) throw new Error("gae: sessionIds needs callIndex to order each session's tokens");
    checkTable('sessionIds', sessionIds, rows, width);
    checkTable('callIndex', callIndex, rows, width);
    for (const order of sessionOrders(mask, sessionIds, callIndex, width)) {
      let nextv = 0;
      let last = 0;
      for (let k = order.length - 1; k >= 0; k--) {
        const t = order[k];
        last = rewards[t] + gamma * nextv - values[t] + gamma * lam * last;
        nextv = values[t];
        raw[t] = last;
        returns[t] = last + values[t];
      }
    }
  } else {
    for (let r = 0; r < rows; r++) {
      let nextv = 0;
      let last = 0;
      for (let c = width - 1; c >= 0; c--) {
        const t = r * width + c;
        if (mask[t] === 1) {
          last = rewards[t] + gamma * nextv - values[t] + gamma * lam * last;
          nextv = values[t];
        }
        raw[t] = last;
        returns[t] = last + values[t];
      }
    }
  }
  if (options.whiten === false) return { advantages: raw, returns, mass };
  const shiftMean = options.shiftMean ?? true;
  if (typeof shiftMean !== 'boolean')
    throw new Error(`gae: shiftMean = ${JSON.stringify(shiftMean)}: expected true or false`);
  const stats = verlWhitenStats(raw, mask);
  const advantages = new Float64Array(rows * width);
  for (let t = 0; t < raw.length; t++)
    if (!bySession || mask[t] === 1) advantages[t] = whitenWith(raw[t], stats, shiftMean);
  return { advantages, returns, mass };
}

/** Per session, its trainable tokens' flat indices in order: by call, then by column. */
function sessionOrders(
  mask: ArrayLike<number>,
  sessionIds: ArrayLike<number>,
  callIndex: ArrayLike<number>,
  width: number,
): number[][] {
  const lists = new Map<number, number[]>();
  for (let t = 0; t < mask.length; t++) {
    if (mask[t] !== 1) continue;
    const s = sessionIds[t];
    const where = `[${Math.floor(t / width)}, ${t % width}]`;
    if (!Number.isInteger(s) || s <= 0)
      throw new Error(`gae: sessionIds${where} = ${s} on a trainable token: expected a session id ≥ 1`);
    if (!Number.isInteger(callIndex[t]) || callIndex[t] < 0)
      throw new Error(`gae: callIndex${where} = ${callIndex[t]} on a trainable token: expected ≥ 0`);
    const list = lists.get(s);
    if (list) list.push(t);
    else lists.set(s, [t]);
  }
  // Array.prototype.sort is stable: within a call, row-major order is column order.
  return [...lists.values()].map((l) => l.sort((a, b) => callIndex[a] - callIndex[b]));
}
