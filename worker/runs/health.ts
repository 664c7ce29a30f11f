/**
 * Run health: flags read off a run's per-step metrics that say a run is going wrong before its
 * held-out accuracy shows it, each with the step where it began, one sentence naming the metric
 * and its figures, and the view that shows it (Groups, Episodes). Pure over the metric series
 * the store keeps, so the dashboard (through the API), the CLI (`health/*` in `--json`) and the
 * tests read the same flags.
 *
 * What each flag watches, and why:
 * - `echo-trap`: the mean within-group reward std (`reward/group_std_mean`) falls to a fraction
 *   of its start while the mean reward (`reward/mean`) has not risen: the groups agree more
 *   without getting better, the precursor of the collapse RAGEN reports for multi-turn GRPO
 *   ("Echo Trap", Wang et al. 2025, arXiv:2504.20073 §4: reward std and entropy fall first);
 * - `low-signal`: the fraction of groups whose rewards differ (1 − `reward/frac_reward_zero_std`)
 *   is below a floor: most groups have zero advantage, the few that do not set the update
 *   (DAPO's motivation for dynamic sampling, Yu et al. 2025, arXiv:2503.14476 §3.2);
 * - `entropy`: the policy entropy (`rl/entropy`, over trained tokens) collapses or explodes
 *   against its start;
 * - `length` and `truncation`: the mean response length drifts, or the truncated fraction
 *   (`response/truncated_frac`) rises, against their start;
 * - `diversity`: distinct completions per group (`response/distinct_frac`) fall: template
 *   collapse;
 * - `grad-spike`: the gradient norm (`opt/grad_norm`) jumps above a multiple of its running
 *   median;
 * - `mismatch`: the sampler/trainer KL (`mismatch/kl`) exceeds a bound;
 * - `infrastructure`: a step's episodes ended as environment or sandbox failures
 *   (`episodes/error_frac`): the program or the companion failed, not the model; those groups do not
 *   train. Its sentence names the commonest failure when the caller has the step's episodes
 *   (`withCommonestFailure`); past the run's `envErrorLimit` the run stops instead.
 *
 * Smoothing: a flag reads the mean of the last `window` steps that report its metric, against
 * the mean of the first `window` such steps (its start). Steps that trained nothing (no trained
 * session) report no entropy or gradient norm, and are left out of those two series.
 */
import type { HealthFlag, HealthFlagId, HealthOptions } from '../contract/records';

/** The thresholds' defaults (HealthOptions says what each means). */
export const HEALTH_DEFAULTS: HealthOptions = {
  window: 5,
  stdDrop: 0.5,
  minRewardRise: 0.05,
  minSignalFrac: 0.25,
  entropyLow: 0.5,
  entropyHigh: 2,
  lengthDrift: 0.5,
  truncatedRise: 0.2,
  diversityDrop: 0.3,
  gradSpike: 5,
  mismatchKl: 0.01,
  envErrorFrac: 0.1,
};

/** Every flag, in the order `runHealth` reports them. */
const HEALTH_FLAG_IDS: readonly HealthFlagId[] = [
  'echo-trap',
  'low-signal',
  'entropy',
  'length',
  'truncation',
  'diversity',
  'grad-spike',
  'mismatch',
  'infrastructure',
];

/** One step's metrics as the store keeps them. */
export interface StepMetrics {
  step: number;
  metrics: Record<string, number>;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(2));
const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/** A metric's series: the steps that report it (and, for `trainedOnly`, trained a session). */
function series(steps: readonly StepMetrics[], key: string, trainedOnly = false): { step: number; v: number }[] {
  return steps.flatMap((s) => {
    const v = s.metrics[key];
    if (v === undefined || !Number.isFinite(v)) return [];
    if (trainedOnly && (s.metrics['sessions/trained'] ?? 1) === 0) return [];
    return [{ step: s.step, v }];
  });
}

/**
 * The steps at which `test(window mean, start)` holds, for a metric's series: from the step the
 * first full window after the start ends (or at once when `start` is not needed).
 */
function held(
  s: readonly { step: number; v: number }[],
  window: number,
  test: (now: number, start: number, at: number) => boolean,
  needsStart = true,
): number[] {
  if (s.length < window) return [];
  const start = mean(s.slice(0, window).map((x) => x.v));
  const out: number[] = [];
  for (let i = needsStart ? window : window - 1; i < s.length; i++) {
    const now = mean(s.slice(i - window + 1, i + 1).map((x) => x.v));
    if (test(now, start, i)) out.push(s[i].step);
  }
  return out;
}

/** The flags a run's steps raise under `options` (defaults: HEALTH_DEFAULTS), in the order of HEALTH_FLAG_IDS. */
export function runHealth(
  steps: readonly StepMetrics[],
  options: Partial<HealthOptions> = {},
  view: HealthFlag['view'] = 'Groups',
): HealthFlag[] {
  const o = { ...HEALTH_DEFAULTS, ...options };
  const w = Math.max(1, Math.floor(o.window));
  const ordered = [...steps].filter((s) => s.step > 0).sort((a, b) => a.step - b.step);
  const last = ordered.at(-1)?.step;
  const flags: HealthFlag[] = [];
  // Active: it holds at the last step that reports its metric.
  const add = (id: HealthFlagId, metric: string, at: number[], reason: (step: number) => string) => {
    const lastOf = series(ordered, metric).at(-1)?.step ?? last;
    if (at.length)
      flags.push({
        id,
        metric,
        step: at[0],
        active: at.at(-1) === lastOf || at.at(-1) === last,
        reason: reason(at[0]),
        view,
      });
  };
  const windowMean = (s: { step: number; v: number }[], step: number) => {
    const i = s.findIndex((x) => x.step === step);
    return mean(s.slice(Math.max(0, i - w + 1), i + 1).map((x) => x.v));
  };
  const startOf = (s: { step: number; v: number }[]) => mean(s.slice(0, w).map((x) => x.v));

  // echo-trap: within-group std falling while the reward has not risen.
  const std = series(ordered, 'reward/group_std_mean');
  const reward = series(ordered, 'reward/mean');
  const rewardAt = new Map(reward.map((x) => [x.step, x.v]));
  const rewardStart = reward.length >= w ? startOf(reward) : NaN;
  add(
    'echo-trap',
    'reward/group_std_mean',
    held(std, w, (now, start, i) => {
      const r = windowMean(reward, std[i].step);
      return start > 0 && now <= (1 - o.stdDrop) * start && r <= rewardStart + o.minRewardRise && rewardAt.size > 0;
    }),
    (step) =>
      `The reward std within groups (reward/group_std_mean) fell to ${f(windowMean(std, step))}, below ` +
      `${pct(1 - o.stdDrop)} of its start ${f(startOf(std))}, while the mean reward (reward/mean) stayed ` +
      `at ${f(windowMean(reward, step))} from ${f(rewardStart)}: the groups agree more without getting ` +
      `better (the echo trap).`,
  );

  // low-signal: too few groups with differing rewards.
  const signal = series(ordered, 'reward/frac_reward_zero_std').map((x) => ({ step: x.step, v: 1 - x.v }));
  add(
    'low-signal',
    'reward/frac_reward_zero_std',
    held(signal, w, (now) => now < o.minSignalFrac, false),
    (step) =>
      `Only ${pct(windowMean(signal, step))} of groups carried a learning signal over the last ${w} steps ` +
      `(1 − reward/frac_reward_zero_std, below ${pct(o.minSignalFrac)}): most groups have equal rewards, ` +
      `so a few set every update.`,
  );

  // entropy: collapse or explosion against its start (trained steps only).
  const entropy = series(ordered, 'rl/entropy', true);
  add(
    'entropy',
    'rl/entropy',
    held(entropy, w, (now, start) => start > 0 && (now < o.entropyLow * start || now > o.entropyHigh * start)),
    (step) => {
      const now = windowMean(entropy, step);
      const start = startOf(entropy);
      return (
        `The policy entropy (rl/entropy) ${now < start ? 'collapsed' : 'exploded'} to ${f(now)} from ` +
        `${f(start)} (outside ${o.entropyLow}–${o.entropyHigh}× its start).`
      );
    },
  );

  // length and truncation drift.
  const length = series(ordered, 'response/mean_length');
  add(
    'length',
    'response/mean_length',
    held(length, w, (now, start) => start > 0 && Math.abs(now - start) > o.lengthDrift * start),
    (step) =>
      `The mean response length (response/mean_length) drifted to ${f(windowMean(length, step))} ids from ` +
      `${f(startOf(length))} (more than ${pct(o.lengthDrift)} off its start).`,
  );
  const truncated = series(ordered, 'response/truncated_frac');
  add(
    'truncation',
    'response/truncated_frac',
    held(truncated, w, (now, start) => now > start + o.truncatedRise),
    (step) =>
      `The truncated fraction (response/truncated_frac) rose to ${pct(windowMean(truncated, step))} from ` +
      `${pct(startOf(truncated))}: more completions run out of their budget.`,
  );

  // diversity: distinct completions per group.
  const distinct = series(ordered, 'response/distinct_frac');
  add(
    'diversity',
    'response/distinct_frac',
    held(distinct, w, (now, start) => now < (1 - o.diversityDrop) * start),
    (step) =>
      `Distinct completions per group (response/distinct_frac) fell to ${pct(windowMean(distinct, step))} ` +
      `from ${pct(startOf(distinct))}: the samples of a prompt are becoming one template.`,
  );

  // grad-spike: against the median of the trained steps before it.
  const grad = series(ordered, 'opt/grad_norm', true);
  const spikes: number[] = [];
  for (let i = w; i < grad.length; i++) {
    const before = grad
      .slice(0, i)
      .map((x) => x.v)
      .sort((a, b) => a - b);
    const median = before[Math.floor(before.length / 2)];
    if (median > 0 && grad[i].v > o.gradSpike * median) spikes.push(grad[i].step);
  }
  add('grad-spike', 'opt/grad_norm', spikes, (step) => {
    const i = grad.findIndex((x) => x.step === step);
    const before = grad
      .slice(0, i)
      .map((x) => x.v)
      .sort((a, b) => a - b);
    return (
      `The gradient norm (opt/grad_norm) spiked to ${f(grad[i].v)}, over ${o.gradSpike}× the median ` +
      `${f(before[Math.floor(before.length / 2)])} of the steps before.`
    );
  });

  // mismatch: sampler/trainer KL. With asynchronous rollouts it holds the policy's lag too.
  const kl = series(ordered, 'mismatch/kl');
  const lag = new Map(series(ordered, 'async/staleness_max').map((x) => [x.step, x.v]));
  add(
    'mismatch',
    'mismatch/kl',
    held(kl, 1, (now) => now > o.mismatchKl, false),
    (step) =>
      `The sampler/trainer KL (mismatch/kl) reached ${f(kl.find((x) => x.step === step)!.v)}, above ` +
      `${o.mismatchKl}: ` +
      ((lag.get(step) ?? 0) > 0
        ? `the batch was sampled up to ${lag.get(step)} version${lag.get(step) === 1 ? '' : 's'} before the weights ` +
          'it trained on (asynchronous ' +
          "rollouts), so this KL holds the policy's lag as well as any numerical mismatch; the behavior " +
          'corrections (TIS, IcePop, rejection) act on it.'
        : "the trainer's log-probs no longer match the sampler's."),
  );

  // infrastructure: episodes the environment (or the companion) failed, any step.
  const failed = series(ordered, 'episodes/error_frac');
  add(
    'infrastructure',
    'episodes/error_frac',
    held(failed, 1, (now) => now >= o.envErrorFrac, false),
    (step) =>
      `${pct(failed.find((x) => x.step === step)!.v)} of step ${step}'s episodes ended as environment or sandbox ` +
      `failures (episodes/error_frac, at or above ${pct(o.envErrorFrac)}): the program or the companion failed, not ` +
      'the model, and those groups did not train.',
  );
  return flags;
}

/**
 * `flags` with the infrastructure flag's sentence naming the commonest failure of its step
 * (episodes/infrastructure.ts `commonestFailure` over that step's failed episodes), when there is one.
 */
export function withCommonestFailure(
  flags: readonly HealthFlag[],
  commonest: { detail: string; count: number } | null,
): HealthFlag[] {
  if (!commonest) return [...flags];
  return flags.map((f) =>
    f.id === 'infrastructure'
      ? { ...f, reason: `${f.reason} The commonest (${commonest.count}×): ${commonest.detail}` }
      : f,
  );
}

/** Which flags hold at each step, as the CLI's `--json` prints them (`health/<id>`: 1 or 0). */
export function healthFields(
  steps: readonly StepMetrics[],
  options: Partial<HealthOptions> = {},
): Record<string, number> {
  const flags = runHealth(steps, options);
  return Object.fromEntries(
    HEALTH_FLAG_IDS.map((id) => [`health/${id}`, flags.some((f) => f.id === id && f.active) ? 1 : 0]),
  );
}
