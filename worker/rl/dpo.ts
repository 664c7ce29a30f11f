/**
 * DPO loss on preference pairs (arXiv:2305.18290 eq. 7) and its TRL variants `ipo`, `hinge`,
 * `robust`, with the per-token gradient that seeds the model's backward pass.
 *
 * Reference: TRL `dpo_trainer.py` (`_compute_loss`, f2cd577 / ≥ 0.29), docs/rl-formulas.md §8.2.
 * Sequence log-probs are **sums** over completion tokens, `s = Σ_t m_t·logp_t`; the reference is
 * frozen (its log-probs are constants); `L` is the mean over pairs. Not a policy-gradient objective
 * (no rollouts, advantages or corrections), and no reference-free or f-divergence variants.
 *
 * Label smoothing: with `sigmoid` it gives cDPO, `−(1−ε) log σ(βΔ) − ε log σ(−βΔ)` (TRL ≤ 0.28;
 * TRL ≥ 0.29 ignores the field for `sigmoid`), so the default 0 matches both; `robust` uses it as
 * TRL does; `ipo` and `hinge` refuse a non-zero value instead of ignoring it.
 */
import { checkFinite, checkTable } from './table';

export type DpoLossType = 'sigmoid' | 'ipo' | 'hinge' | 'robust';

export interface DpoOptions {
  /** KL strength β (τ for IPO). Default 0.1 (TRL `beta`, dew `DPOObjective`). */
  beta?: number;
  /** Default `'sigmoid'` (TRL `loss_type`, dew eq. 7). */
  lossType?: DpoLossType;
  /** ε for `sigmoid` (cDPO) and `robust`, in [0, 0.5) (sigmoid also allows 0.5). Default 0 (TRL `label_smoothing`). */
  labelSmoothing?: number;
  /**
   * Row order of the `[2·pairs, width]` tables. `'pairs'` (default): dew's `[B, 2, S]`, row 2i
   * chosen and 2i+1 rejected. `'halves'`: TRL's concatenation, rows 0…B−1 chosen, B…2B−1 rejected.
   */
  layout?: 'pairs' | 'halves';
}

export interface DpoInput extends DpoOptions {
  /** Number of preference pairs B ≥ 1. */
  pairs: number;
  width: number;
  /** Policy log-probs of each target, `[2·pairs, width]` (differentiable). */
  logp: ArrayLike<number>;
  /** Frozen reference log-probs, `[2·pairs, width]`. */
  refLogp: ArrayLike<number>;
  /** Completion mask, 1 on completion tokens, `[2·pairs, width]`. */
  mask: ArrayLike<number>;
}

export interface DpoResult {
  loss: number;
  /** ∂L/∂logp per token, `[2·pairs, width]`, zero off the completion mask. */
  dlogp: Float64Array;
  /** TRL's `rewards/chosen`, `rewards/rejected`, `rewards/margins`, `rewards/accuracies`, `logps/chosen`, `logps/rejected` (means over pairs). */
  metrics: Record<string, number>;
  /** Per row of the layout, its completion's implicit reward β · Σ (logp − refLogp) over the mask (the per-pair values behind `rewards/*`). */
  implicitRewards: Float64Array;
  /** Per pair, the loss variant's value `l_i` for that pair (`loss` is their mean). */
  pairLosses: Float64Array;
  /** Per pair, the chosen completion's implicit reward `β (s_c − s^ref_c)` (TRL `chosen_rewards`; = `implicitRewards` at its row). */
  chosenRewards: Float64Array;
  /** Per pair, the rejected completion's implicit reward `β (s_r − s^ref_r)` (TRL `rejected_rewards`). */
  rejectedRewards: Float64Array;
  /** Per pair, `chosenRewards − rejectedRewards` = βΔ (the per-pair values behind `rewards/margins`; > 0 counts in `rewards/accuracies`). */
  margins: Float64Array;
  /**
   * Per pair, what the loss variant reads (TRL `logits`): Δ = (s_c − s^ref_c) − (s_r − s^ref_r)
   * for sigmoid, hinge and robust (which take βΔ), and the length-normalised
   * Δ_ipo = (s_c − s^ref_c)/max(n_c, 1) − (s_r − s^ref_r)/max(n_r, 1) for ipo.
   */
  logits: Float64Array;
}

const logSigmoid = (x: number) => (x >= 0 ? -Math.log1p(Math.exp(-x)) : x - Math.log1p(Math.exp(x)));
const sigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));

export function dpoLoss(input: DpoInput): DpoResult {
  const { pairs: B, width, logp, refLogp, mask } = input;
  const { beta = 0.1, lossType = 'sigmoid', labelSmoothing: eps = 0, layout = 'pairs' } = input;
  if (!Number.isInteger(B) || B < 1) throw new Error(`dpoLoss: pairs must be an integer ≥ 1, got ${B}`);
  if (!(beta > 0) || !Number.isFinite(beta)) throw new Error(`dpoLoss: beta must be finite and > 0, got ${beta}`);
  if (!['sigmoid', 'ipo', 'hinge', 'robust'].includes(lossType))
    throw new Error(`dpoLoss: unknown lossType '${lossType}'`);
  if (layout !== 'pairs' && layout !== 'halves')
    throw new Error(`dpoLoss: layout must be 'pairs' or 'halves', got ${String(layout)}`);
  const epsOk =
    lossType === 'sigmoid' ? eps >= 0 && eps <= 0.5 : lossType === 'robust' ? eps >= 0 && eps < 0.5 : eps === 0;
  if (!epsOk) {
    throw new Error(
      `dpoLoss: labelSmoothing ${eps} is out of range for '${lossType}' (sigmoid: [0, 0.5], robust: [0, 0.5), ipo/hinge: 0)`,
    );
  }
  const rows = 2 * B;
  for (const [name, a] of [
    ['logp', logp],
    ['refLogp', refLogp],
    ['mask', mask],
  ] as const)
    checkTable(name, a, rows, width);
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 0 && mask[i] !== 1)
      throw new Error(`mask[${Math.floor(i / width)}, ${i % width}] = ${mask[i]}: expected 0 or 1`);
  }
  checkFinite('logp', logp, width, mask);
  checkFinite('refLogp', refLogp, width, mask);

  const rowOf = (i: number, rejected: boolean) =>
    layout === 'pairs' ? 2 * i + (rejected ? 1 : 0) : i + (rejected ? B : 0);
  const seq = (row: number) => {
    let s = 0;
    let ref = 0;
    let n = 0;
    for (let t = row * width; t < (row + 1) * width; t++) {
      if (!mask[t]) continue;
      s += logp[t];
      ref += refLogp[t];
      n += 1;
    }
    return { s, ref, n };
  };
  const dlogp = new Float64Array(rows * width);
  const implicitRewards = new Float64Array(rows);
  const pairLosses = new Float64Array(B);
  const chosenRewards = new Float64Array(B);
  const rejectedRewards = new Float64Array(B);
  const margins = new Float64Array(B);
  const logits = new Float64Array(B);
  let loss = 0;
  const acc = { chosen: 0, rejected: 0, margins: 0, accuracies: 0, lc: 0, lr: 0 };
  for (let i = 0; i < B; i++) {
    const rc = rowOf(i, false);
    const rr = rowOf(i, true);
    const c = seq(rc);
    const r = seq(rr);
    const delta = c.s - c.ref - (r.s - r.ref);
    const z = beta * delta;
    let l: number;
    let gc: number; // ∂l/∂logp on a chosen completion token; the rejected side gets −gr
    let gr: number;
    if (lossType === 'ipo') {
      const nc = Math.max(c.n, 1);
      const nr = Math.max(r.n, 1);
      logits[i] = (c.s - c.ref) / nc - (r.s - r.ref) / nr;
      const d = logits[i] - 1 / (2 * beta);
      l = d * d;
      gc = (2 * d) / nc;
      gr = (2 * d) / nr;
    } else {
      logits[i] = delta;
      let dl: number; // ∂l/∂Δ
      if (lossType === 'hinge') {
        l = Math.max(0, 1 - z);
        dl = 1 - z > 0 ? -beta : 0;
      } else if (lossType === 'robust') {
        l = (-(1 - eps) * logSigmoid(z) + eps * logSigmoid(-z)) / (1 - 2 * eps);
        dl = (-beta * ((1 - eps) * sigmoid(-z) + eps * sigmoid(z))) / (1 - 2 * eps);
      } else {
        l = -(1 - eps) * logSigmoid(z) - eps * logSigmoid(-z);
        dl = -beta * ((1 - eps) * sigmoid(-z) - eps * sigmoid(z));
      }
      gc = dl;
      gr = dl;
    }
    pairLosses[i] = l;
    loss += l / B;
    for (let t = 0; t < width; t++) {
      dlogp[rc * width + t] = mask[rc * width + t] ? gc / B + 0 : 0; // + 0 turns −0 into 0
      dlogp[rr * width + t] = mask[rr * width + t] ? -gr / B + 0 : 0;
    }
    const rewC = beta * (c.s - c.ref);
    const rewR = beta * (r.s - r.ref);
    implicitRewards[rc] = rewC;
    implicitRewards[rr] = rewR;
    chosenRewards[i] = rewC;
    rejectedRewards[i] = rewR;
    margins[i] = rewC - rewR;
    acc.chosen += rewC / B;
    acc.rejected += rewR / B;
    acc.margins += (rewC - rewR) / B;
    acc.accuracies += (rewC > rewR ? 1 : 0) / B;
    acc.lc += c.s / B;
    acc.lr += r.s / B;
  }
  const metrics = {
    'rewards/chosen': acc.chosen,
    'rewards/rejected': acc.rejected,
    'rewards/margins': acc.margins,
    'rewards/accuracies': acc.accuracies,
    'logps/chosen': acc.lc,
    'logps/rejected': acc.lr,
  };
  return { loss, dlogp, metrics, implicitRewards, pairLosses, chosenRewards, rejectedRewards, margins, logits };
}
