/**
 * Off-policy diagnostics between the training side and the behavior (rollout) policy: signed k1
 * KL, k3 KL, ratio min/mean/max, χ² (token and sequence), training and rollout perplexity.
 *
 * References: verl `compute_offpolicy_metrics` (`rollout_corr_helper.py`; every mean is
 * `masked_mean` with +1e-8 and row averages include sequences with no mask tokens) and rLLM
 * `offpolicy_metrics` (`rllm/trainer/algorithms/loss.py`, PR #767; exact means over active
 * tokens, empty sequences skipped), docs/rl-formulas.md §7.4. Metrics only, no gradient.
 *
 * Deviations: everything is float64 (rLLM computes in float32); with no mask tokens both return
 * `{}` (verl asserts). `ratio/*` is rLLM's; in verl mode it is added with verl's `masked_mean`.
 */
import type { Compat } from '../compat';
import { sequenceSpans } from '../table';
import {
  clampLog,
  checkLogProbs,
  maskCount,
  maxOf,
  mean,
  minOf,
  sequenceSums,
  verlMaskedMeanOf,
  VERL_MEAN_EPS,
  type SequenceLayout,
} from './sequences';

export interface OffPolicyMetricsInput extends SequenceLayout {
  /** Training-side log-probs (old, or the current policy), `[rows, width]`. */
  logp: ArrayLike<number>;
  /** Behavior (rollout) log-probs, `[rows, width]`. */
  behaviorLogp: ArrayLike<number>;
  /** `'verl'` (default): verl's keys and epsilons; `'rllm'`: rLLM's keys and exact means. */
  compat?: Exclude<Compat, 'trl'>;
  /** Metric-key prefix. Default `'mismatch/'` (verl `rollout_corr/`, rLLM `offpolicy/`). */
  prefix?: string;
}

/**
 * verl keys: `training_ppl`, `training_log_ppl`, `kl`, `k3_kl`, `rollout_ppl`, `rollout_log_ppl`,
 * `log_ppl_diff`, `log_ppl_abs_diff`, `log_ppl_diff_max`, `log_ppl_diff_min`, `ppl_ratio`,
 * `chi2_token`, `chi2_seq`, plus `ratio/mean|max|min`. rLLM keys: `kl`, `k3_kl`,
 * `ratio/mean|max|min`, `chi2_token`, `training_ppl`, `rollout_ppl`.
 */
export function offPolicyMetrics(input: OffPolicyMetricsInput): Record<string, number> {
  const { logp, behaviorLogp, compat = 'verl', prefix = 'mismatch/' } = input;
  if (compat !== 'verl' && compat !== 'rllm')
    throw new Error(`offPolicyMetrics: compat must be 'verl' or 'rllm', got ${String(compat)}`);
  const spans = sequenceSpans(input, input.responseMask, 'responseMask');
  checkLogProbs('logp', logp, input);
  checkLogProbs('behaviorLogp', behaviorLogp, input);
  const m = input.responseMask;
  const n = maskCount(m);
  if (n === 0) return {};
  const lr = (i: number) => logp[i] - behaviorLogp[i];
  const ratio = (i: number) => Math.exp(clampLog(lr(i)));
  let ratioMax = -Infinity;
  let ratioMin = Infinity;
  for (let i = 0; i < m.length; i++) {
    if (!m[i]) continue;
    ratioMax = Math.max(ratioMax, ratio(i));
    ratioMin = Math.min(ratioMin, ratio(i));
  }
  const tr = sequenceSums(spans, m, (i) => logp[i]);
  const ro = sequenceSums(spans, m, (i) => behaviorLogp[i]);
  const out: Record<string, number> = {};
  const put = (k: string, v: number) => (out[prefix + k] = v);

  if (compat === 'rllm') {
    // Exact means over active tokens; sequences without active tokens are skipped.
    const exact = (f: (i: number) => number) => {
      let s = 0;
      for (let i = 0; i < m.length; i++) if (m[i]) s += f(i);
      return s / n;
    };
    const live = spans.map((_, k) => k).filter((k) => tr.count[k] > 0);
    put(
      'kl',
      exact((i) => -lr(i)),
    );
    put(
      'k3_kl',
      exact((i) => Math.exp(lr(i)) - lr(i) - 1),
    );
    put('ratio/mean', exact(ratio));
    put('ratio/max', ratioMax);
    put('ratio/min', ratioMin);
    put('chi2_token', exact((i) => ratio(i) ** 2) - 1);
    put('training_ppl', mean(live.map((k) => Math.exp(-tr.sum[k] / tr.count[k]))));
    put('rollout_ppl', mean(live.map((k) => Math.exp(-ro.sum[k] / ro.count[k]))));
    return out;
  }

  // verl: per-sequence masked means with +1e-8; every sequence counts, empty ones as 0.
  const mc = tr.sum.map((s, k) => s / (tr.count[k] + VERL_MEAN_EPS));
  const mr = ro.sum.map((s, k) => s / (ro.count[k] + VERL_MEAN_EPS));
  const diff = mr.map((r, k) => r - mc[k]);
  put('training_ppl', mean(mc.map((c) => Math.exp(-c))));
  put('training_log_ppl', mean(mc.map((c) => -c)));
  put(
    'kl',
    verlMaskedMeanOf(m, (i) => -lr(i)),
  );
  put(
    'k3_kl',
    verlMaskedMeanOf(m, (i) => Math.exp(lr(i)) - lr(i) - 1),
  );
  put('rollout_ppl', mean(mr.map((r) => Math.exp(-r))));
  put('rollout_log_ppl', mean(mr.map((r) => -r)));
  put('log_ppl_diff', mean(diff));
  put('log_ppl_abs_diff', mean(diff.map(Math.abs)));
  put('log_ppl_diff_max', maxOf(diff));
  put('log_ppl_diff_min', minOf(diff));
  put('ppl_ratio', mean(diff.map(Math.exp)));
  put('chi2_token', verlMaskedMeanOf(m, (i) => ratio(i) ** 2) - 1);
  const seqLr = sequenceSums(spans, m, lr).sum;
  put('chi2_seq', mean(seqLr.map((s) => Math.exp(2 * clampLog(s)))) - 1);
  put('ratio/mean', verlMaskedMeanOf(m, ratio));
  put('ratio/max', ratioMax);
  put('ratio/min', ratioMin);
  return out;
}
