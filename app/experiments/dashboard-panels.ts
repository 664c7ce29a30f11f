/**
 * Which curves the run dashboard draws, as data: each panel names its series from the metric keys
 * the run actually reported (worker/train/{grpo,dpo,sft}.ts, worker/rl/objectives/grpo.ts,
 * worker/rl/corrections/*.ts, worker/rl/pack.ts), so a panel without data is left out. Pure, no
 * React and no echarts; RunDashboard renders the panels with the Chart component.
 */
import type { Series } from '../charts/Chart';
import type { EvalPoint, StepPoint } from '../state/live-run';

export interface Panel {
  id: string;
  title: string;
  /** Accessible name of the chart: what it shows and its latest values. */
  label: string;
  yName: string;
  series: Series[];
}

/** Trailing moving average over `window` points (fewer at the start). */
export function movingAverage(points: [number, number][], window: number): [number, number][] {
  return points.map(([x], i) => {
    const slice = points.slice(Math.max(0, i - window + 1), i + 1);
    return [x, slice.reduce((a, [, y]) => a + y, 0) / slice.length];
  });
}

/** `[step, value]` of every step that reported `key`. */
function curve(
  steps: StepPoint[],
  key: string,
  f: (v: number, m: Record<string, number>) => number = (v) => v,
): [number, number][] {
  return steps.filter((s) => key in s.metrics).map((s) => [s.step, f(s.metrics[key], s.metrics)]);
}

/** Compact number for labels: 3 significant digits, exponent for tiny or huge values. */
export function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Number(v.toPrecision(3)));
}

/** Steps in the reward's trailing mean, given in the reward chart's accessible name. */
const REWARD_WINDOW = 10;
const PHASES = ['perf/sample_ms', 'perf/old_logprob_ms', 'perf/ref_ms', 'perf/train_ms'];
const isClip = (k: string) => /clip_?frac|clip_ratio/.test(k);

/** Panels of the keys `keys` (in order) that at least one step reported; label lists their latest values. */
function keyPanel(
  steps: StepPoint[],
  id: string,
  title: string,
  yName: string,
  keys: string[],
  opts: { stack?: string } = {},
): Panel | null {
  const present = keys.filter((k) => steps.some((s) => k in s.metrics));
  if (present.length === 0) return null;
  const last = steps.at(-1)?.metrics ?? {};
  const latest = present.map((k) => `${k} ${fmt(last[k])}`).join(', ');
  return {
    id,
    title,
    yName,
    label: `${title} by step${opts.stack ? ' (stacked)' : ''}; latest ${latest}`,
    series: present.map((k) => ({ name: k, points: curve(steps, k), ...(opts.stack ? { stack: opts.stack } : {}) })),
  };
}

export function dashboardPanels(steps: StepPoint[], evals: EvalPoint[]): Panel[] {
  const keys = [...new Set(steps.flatMap((s) => Object.keys(s.metrics)))].sort();
  const last = steps.at(-1)?.metrics ?? {};
  const panels: (Panel | null)[] = [];

  if (keys.includes('reward/mean')) {
    const raw = curve(steps, 'reward/mean');
    // One step's mean over P × G samples moves by a few hundredths (0.03 at 128 samples and a
    // reward near 0.15): the trend a run is judged by is the smoothed curve (the charts' smoothing
    // control, TensorBoard's EMA) and, in words, the mean of the last 10 steps.
    const smooth = movingAverage(raw, REWARD_WINDOW);
    const series: Series[] = [{ name: 'reward/mean', points: raw }];
    if (keys.includes('reward/std')) {
      series.push(
        { name: 'mean + std', points: curve(steps, 'reward/std', (sd, m) => m['reward/mean'] + sd), dashed: true },
        { name: 'mean − std', points: curve(steps, 'reward/std', (sd, m) => m['reward/mean'] - sd), dashed: true },
      );
    }
    // Dynamic sampling: reward/mean is over the groups kept; the mean over every group drawn beside it.
    const filtered = keys.includes('filter/reward_mean_before');
    if (filtered)
      series.push({ name: 'before the filter', points: curve(steps, 'filter/reward_mean_before'), dashed: true });
    const std = keys.includes('reward/std') ? ` (std ${fmt(last['reward/std'])})` : '';
    const before = filtered ? `; before dynamic sampling's filter ${fmt(last['filter/reward_mean_before'])}` : '';
    panels.push({
      id: 'reward',
      title: filtered ? 'Mean reward (after the filter)' : 'Mean reward',
      yName: 'reward',
      series,
      label: `Mean reward by step; latest ${fmt(last['reward/mean'])}${std}, ${REWARD_WINDOW}-step average ${fmt(smooth.at(-1)?.[1])}${before}`,
    });
  }

  if (evals.length > 0) {
    const raw = evals.map((e) => [e.step, e.accuracy] as [number, number]);
    const e = evals.at(-1)!;
    // A sampled evaluation's pass rates (eval/pass@1, eval/pass@k: worker/train/evaluate.ts) beside the greedy accuracy.
    const pass = keys
      .filter((k) => /^eval\/pass@\d+$/.test(k))
      .sort((a, b) => Number(a.slice(10)) - Number(b.slice(10)));
    const sampled = pass.map(
      (k) => `${k.slice(5)} at the training temperature ${fmt(last[k] ?? curve(steps, k).at(-1)?.[1])}`,
    );
    // Evaluations move by a few points between evaluations (docs/calibration.md "Evaluation noise"): the charts' smoothing shows the trend.
    panels.push({
      id: 'accuracy',
      title: 'Held-out accuracy',
      yName: 'accuracy',
      label:
        `Held-out exact-match accuracy by step; latest ${(e.accuracy * 100).toFixed(1)}% at step ${e.step} (n=${e.n})` +
        (sampled.length ? `; ${sampled.join(', ')}` : ''),
      series: [
        { name: 'held-out accuracy (greedy)', points: raw },
        ...pass.map((k) => ({ name: `${k.slice(5)} (sampled)`, points: curve(steps, k) })),
      ],
    });
  }

  // Loss terms: total first, then the rest; the KL term only when a reference model ran (rl/kl).
  const lossKeys = keys.filter((k) => k.startsWith('loss/') && (k !== 'loss/kl' || keys.includes('rl/kl')));
  const loss = keyPanel(steps, 'loss', 'Loss', 'loss', [
    ...lossKeys.filter((k) => k === 'loss/total'),
    ...lossKeys.filter((k) => k !== 'loss/total'),
  ]);
  if (loss && keys.includes('loss/sft') && !keys.includes('loss/total'))
    loss.label = `SFT loss by step; latest ${fmt(last['loss/sft'])}`;
  panels.push(loss);

  panels.push(keyPanel(steps, 'kl', 'KL', 'KL', ['rl/kl', 'rl/ppo_kl']));
  panels.push(keyPanel(steps, 'clip', 'Clip fractions', 'fraction', keys.filter(isClip)));
  // PPO's critic (worker/train/ppo.ts): its loss, how much of the returns' variance it explains, what it predicts, and the advantages GAE made.
  panels.push(keyPanel(steps, 'value-loss', 'Value loss', 'loss', ['critic/vf_loss']));
  panels.push(
    keyPanel(steps, 'explained-var', 'Explained variance of the returns', 'fraction', ['critic/vf_explained_var']),
  );
  panels.push(
    keyPanel(steps, 'returns', 'Returns and values', 'return', [
      'critic/returns/mean',
      'critic/values/mean',
      'critic/returns/min',
      'critic/returns/max',
    ]),
  );
  panels.push(
    keyPanel(steps, 'advantages', 'Advantage distribution (whitened)', 'advantage', [
      'critic/advantages/min',
      'critic/advantages/mean',
      'critic/advantages/max',
      'critic/advantages/std',
    ]),
  );
  panels.push(keyPanel(steps, 'entropy', 'Entropy', 'nats', ['rl/entropy']));
  panels.push(keyPanel(steps, 'mismatch-kl', 'Sampler mismatch KL', 'KL', ['mismatch/kl', 'mismatch/k3_kl']));
  panels.push(keyPanel(steps, 'ess', 'Effective sample size', 'ESS', ['mismatch/ess']));
  // Asynchronous rollouts (a staleness bound s > 0): how far each batch trailed the weights, and who waited.
  panels.push(
    keyPanel(steps, 'staleness', 'Staleness (versions behind)', 'versions', [
      'async/staleness_mean',
      'async/staleness_max',
      'async/staleness_min',
    ]),
  );
  panels.push(
    keyPanel(steps, 'idle', 'Idle fractions (trainer, rollouter)', 'fraction', [
      'trainer/idle_ratio',
      'rollouter/idle_ratio',
    ]),
  );
  panels.push(
    keys.includes('filter/frac_zero_std_before')
      ? keyPanel(steps, 'zero-std', 'Zero-std group fraction (trained, and drawn before the filter)', 'fraction', [
          'reward/frac_reward_zero_std',
          'filter/frac_zero_std_before',
        ])
      : keyPanel(steps, 'zero-std', 'Zero-std group fraction', 'fraction', ['reward/frac_reward_zero_std']),
  );
  panels.push(
    keyPanel(steps, 'filter', "Dynamic sampling's batches and groups", 'count', [
      'filter/gen_batches',
      'filter/groups_drawn',
      'filter/kept_groups',
      'filter/lost_groups',
    ]),
  );
  panels.push(
    keyPanel(steps, 'dpo', 'DPO implicit rewards', 'reward', ['rewards/chosen', 'rewards/rejected', 'rewards/margins']),
  );
  panels.push(keyPanel(steps, 'tokens', 'Tokens per second', 'tokens/s', ['perf/tokens_per_s']));
  const phases = PHASES.filter((k) => keys.includes(k));
  panels.push(
    phases.length > 0
      ? keyPanel(steps, 'time', 'Step time by phase', 'ms', phases, { stack: 'time' })
      : keyPanel(steps, 'time', 'Step time', 'ms', ['perf/step_ms']),
  );
  return panels.filter((p): p is Panel => p !== null);
}
