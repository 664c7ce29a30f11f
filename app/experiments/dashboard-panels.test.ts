import { describe, expect, it } from 'vitest';
import { dashboardPanels, fmt, movingAverage } from './dashboard-panels';

const step = (n: number, metrics: Record<string, number>) => ({ step: n, metrics });

// The keys a GRPO step of worker/train/grpo.ts reports with beta = 0 (no reference model).
const grpo = (n: number, reward: number) =>
  step(n, {
    'reward/mean': reward,
    'reward/std': 0.5,
    'reward/frac_reward_zero_std': 0.25,
    'loss/total': 0.1 * n,
    'loss/policy': 0.1 * n,
    'loss/kl': 0,
    'rl/pg_clipfrac': 0.01,
    'rl/pg_clipfrac_lower': 0,
    'rl/ppo_kl': 1e-4,
    'rl/entropy': 1.2,
    'mismatch/kl': 2e-5,
    'mismatch/k3_kl': 1e-5,
    'mismatch/ess': 0.99,
    'mismatch/training_ppl': 3,
    'perf/sample_ms': 100,
    'perf/old_logprob_ms': 20,
    'perf/train_ms': 50,
    'perf/step_ms': 170,
    'perf/tokens_per_s': 900,
    'opt/lr': 1e-4,
  });

describe('dashboardPanels', () => {
  it('draws staleness and the idle fractions after the mismatch panels for a run that samples ahead', () => {
    const ahead = (n: number) => {
      const s = grpo(n, 0.5);
      return step(n, {
        ...s.metrics,
        'async/staleness_mean': 1,
        'async/staleness_max': 1,
        'async/staleness_min': 1,
        'trainer/idle_ratio': 0.1,
        'rollouter/idle_ratio': 0.3,
      });
    };
    const panels = dashboardPanels([ahead(1), ahead(2)], []);
    const ids = panels.map((p) => p.id);
    expect(ids.slice(ids.indexOf('ess'), ids.indexOf('ess') + 3)).toEqual(['ess', 'staleness', 'idle']);
    expect(panels.find((p) => p.id === 'idle')!.series.map((x) => x.name)).toEqual([
      'trainer/idle_ratio',
      'rollouter/idle_ratio',
    ]);
  });

  it('draws a GRPO run: reward band, loss terms without the unused KL term, clip fractions, mismatch, stacked step time', () => {
    const panels = dashboardPanels([grpo(1, 0.25), grpo(2, 0.5)], []);
    const byId = Object.fromEntries(panels.map((p) => [p.id, p]));
    expect(panels.map((p) => p.id)).toEqual([
      'reward',
      'loss',
      'kl',
      'clip',
      'entropy',
      'mismatch-kl',
      'ess',
      'zero-std',
      'tokens',
      'time',
    ]);
    // The trend is the charts' smoothing (Chart): no second smoothed series of the panel's own.
    expect(byId.reward.series.map((s) => s.name)).toEqual(['reward/mean', 'mean + std', 'mean − std']);
    expect(byId.reward.series[1].points).toEqual([
      [1, 0.75],
      [2, 1],
    ]);
    expect(byId.reward.series[2].points).toEqual([
      [1, -0.25],
      [2, 0],
    ]);
    expect(byId.reward.label).toBe('Mean reward by step; latest 0.5 (std 0.5), 10-step average 0.375');
    expect(byId.loss.series.map((s) => s.name)).toEqual(['loss/total', 'loss/policy']);
    expect(byId.kl.series.map((s) => s.name)).toEqual(['rl/ppo_kl']);
    expect(byId.clip.series.map((s) => s.name)).toEqual(['rl/pg_clipfrac', 'rl/pg_clipfrac_lower']);
    expect(byId.time.series.map((s) => [s.name, s.stack])).toEqual([
      ['perf/sample_ms', 'time'],
      ['perf/old_logprob_ms', 'time'],
      ['perf/train_ms', 'time'],
    ]);
    expect(byId.time.label).toBe(
      'Step time by phase by step (stacked); latest perf/sample_ms 100, perf/old_logprob_ms 20, perf/train_ms 50',
    );
  });

  it("draws a PPO run: the critic's loss, explained variance, returns and values, the advantage distribution, and its clip fraction with the policy's", () => {
    const ppo = (n: number) =>
      step(n, {
        ...grpo(n, 0.2).metrics,
        'loss/value': 0.02,
        'critic/vf_loss': 0.04,
        'critic/vf_clipfrac': 0.1,
        'critic/vf_explained_var': 0.1 * n,
        'critic/returns/mean': 0.2,
        'critic/values/mean': 0.05 * n,
        'critic/returns/min': 0,
        'critic/returns/max': 1,
        'critic/advantages/min': -1.5,
        'critic/advantages/mean': 0,
        'critic/advantages/max': 2.5,
        'critic/advantages/std': 1,
      });
    const panels = dashboardPanels([ppo(1), ppo(2)], []);
    const byId = Object.fromEntries(panels.map((p) => [p.id, p]));
    expect(panels.map((p) => p.id)).toEqual([
      'reward',
      'loss',
      'kl',
      'clip',
      'value-loss',
      'explained-var',
      'returns',
      'advantages',
      'entropy',
      'mismatch-kl',
      'ess',
      'zero-std',
      'tokens',
      'time',
    ]);
    expect(byId.loss.series.map((s) => s.name)).toEqual(['loss/total', 'loss/policy', 'loss/value']);
    expect(byId.clip.series.map((s) => s.name)).toEqual([
      'critic/vf_clipfrac',
      'rl/pg_clipfrac',
      'rl/pg_clipfrac_lower',
    ]);
    expect(byId['explained-var'].series[0].points).toEqual([
      [1, 0.1],
      [2, 0.2],
    ]);
    expect(byId.returns.series.map((s) => s.name)).toEqual([
      'critic/returns/mean',
      'critic/values/mean',
      'critic/returns/min',
      'critic/returns/max',
    ]);
    expect(byId.advantages.label).toBe(
      'Advantage distribution (whitened) by step; latest critic/advantages/min -1.5, ' +
        'critic/advantages/mean 0, critic/advantages/max 2.5, critic/advantages/std 1',
    );
  });

  it("names the reward's mean over the last 10 steps: step 12's is of steps 3..12", () => {
    const rewards = Array.from({ length: 12 }, (_, i) => (i < 2 ? 1 : 0.1));
    const reward = dashboardPanels(
      rewards.map((r, i) => grpo(i + 1, r)),
      [],
    ).find((p) => p.id === 'reward')!;
    expect(reward.label).toMatch(/latest 0.1 \(std 0.5\), 10-step average 0.1$/);
  });

  it('shows the KL term and rl/kl when a reference model ran (beta > 0)', () => {
    const s = grpo(1, 0.5);
    s.metrics['rl/kl'] = 0.002;
    s.metrics['loss/kl'] = 2e-5;
    const panels = dashboardPanels([s], []);
    expect(panels.find((p) => p.id === 'loss')!.series.map((x) => x.name)).toEqual([
      'loss/total',
      'loss/kl',
      'loss/policy',
    ]);
    expect(panels.find((p) => p.id === 'kl')!.series.map((x) => x.name)).toEqual(['rl/kl', 'rl/ppo_kl']);
  });

  it('draws DPO loss terms and implicit rewards, SFT loss under its own name, and held-out accuracy', () => {
    const dpo = dashboardPanels(
      [
        step(1, {
          'loss/dpo': 0.69,
          'loss/nll_chosen': 1.5,
          'loss/total': 2.19,
          'rewards/margins': 0.01,
          'rewards/chosen': 0.02,
          'rewards/rejected': 0.01,
          'perf/sample_ms': 10,
          'perf/train_ms': 5,
        }),
      ],
      [],
    );
    expect(dpo.map((p) => p.id)).toEqual(['loss', 'dpo', 'time']);
    expect(dpo[0].series.map((s) => s.name)).toEqual(['loss/total', 'loss/dpo', 'loss/nll_chosen']);
    expect(dpo[2].series.map((s) => s.name)).toEqual(['perf/sample_ms', 'perf/train_ms']);

    const evals = [0.1, 0.2, 0.6, 0.2].map((accuracy, i) => ({
      step: (i + 1) * 2,
      accuracy,
      meanLength: 5,
      n: 16,
      samples: [],
    }));
    const sft = dashboardPanels([step(1, { 'loss/sft': 3.2, 'perf/step_ms': 40 })], evals);
    expect(sft.map((p) => p.id)).toEqual(['accuracy', 'loss', 'time']);
    expect(sft[1].label).toBe('SFT loss by step; latest 3.2');
    expect(sft[0].label).toBe('Held-out exact-match accuracy by step; latest 20.0% at step 8 (n=16)');
    expect(sft[2].series.map((s) => s.name)).toEqual(['perf/step_ms']);
  });

  it('leaves out every panel when there is nothing to draw', () => {
    expect(dashboardPanels([], [])).toEqual([]);
  });
});

describe('movingAverage and fmt', () => {
  it('averages the trailing window, fewer points at the start', () => {
    const avg = movingAverage(
      [
        [1, 0.1],
        [2, 0.2],
        [3, 0.6],
        [4, 0.2],
      ],
      3,
    ).map(([x, y]) => [x, Number(y.toFixed(10))]);
    expect(avg).toEqual([
      [1, 0.1],
      [2, 0.15],
      [3, 0.3],
      [4, Number((1 / 3).toFixed(10))],
    ]);
  });

  it('formats with 3 significant digits, an exponent for tiny values, a dash for missing ones', () => {
    expect([fmt(0.31234), fmt(1234.5), fmt(2e-5), fmt(0), fmt(undefined), fmt(NaN)]).toEqual([
      '0.312',
      '1230',
      '2.00e-5',
      '0',
      '–',
      '–',
    ]);
  });
});

describe('the accuracy panel with a sampled evaluation', () => {
  it("draws pass@1 and pass@k at the training temperature beside the greedy accuracy, from the eval steps' metrics", () => {
    const steps = [
      step(0, { 'eval/pass@1': 0.1, 'eval/pass@4': 0.3 }),
      step(1, { 'reward/mean': 0.2 }),
      step(2, { 'reward/mean': 0.3, 'eval/pass@1': 0.2, 'eval/pass@4': 0.5 }),
    ];
    const evals = [0, 2].map((s, i) => ({ step: s, accuracy: 0.4 + i / 10, meanLength: 5, n: 16, samples: [] }));
    const accuracy = dashboardPanels(steps, evals).find((p) => p.id === 'accuracy')!;
    expect(accuracy.series.map((s) => [s.name, s.points])).toEqual([
      [
        'held-out accuracy (greedy)',
        [
          [0, 0.4],
          [2, 0.5],
        ],
      ],
      [
        'pass@1 (sampled)',
        [
          [0, 0.1],
          [2, 0.2],
        ],
      ],
      [
        'pass@4 (sampled)',
        [
          [0, 0.3],
          [2, 0.5],
        ],
      ],
    ]);
    expect(accuracy.label).toMatch(
      /; pass@1 at the training temperature 0\.2, pass@4 at the training temperature 0\.5$/,
    );
  });
});

describe('dynamic sampling on the dashboard', () => {
  it('says the reward and zero-std figures are after the filter and draws what it drew before it, and its batches', () => {
    const filter = (n: number) =>
      step(n, {
        ...grpo(n, 0.5).metrics,
        'reward/frac_reward_zero_std': 0,
        'filter/reward_mean_before': 0.1,
        'filter/frac_zero_std_before': 0.75,
        'filter/gen_batches': 3,
        'filter/groups_drawn': 24,
        'filter/kept_groups': 8,
        'filter/lost_groups': 0,
      });
    const byId = Object.fromEntries(dashboardPanels([filter(1), filter(2)], []).map((p) => [p.id, p]));
    expect(byId.reward.title).toBe('Mean reward (after the filter)');
    expect(byId.reward.series.map((s) => s.name)).toContain('before the filter');
    expect(byId.reward.label).toMatch(/before dynamic sampling's filter 0\.1/);
    expect(byId['zero-std'].series.map((s) => s.name)).toEqual([
      'reward/frac_reward_zero_std',
      'filter/frac_zero_std_before',
    ]);
    expect(byId.filter.series.map((s) => s.name)).toEqual([
      'filter/gen_batches',
      'filter/groups_drawn',
      'filter/kept_groups',
      'filter/lost_groups',
    ]);
    // Without dynamic sampling: the plain titles, no filter panel.
    const plain = Object.fromEntries(dashboardPanels([grpo(1, 0.5)], []).map((p) => [p.id, p]));
    expect(plain.reward.title).toBe('Mean reward');
    expect(plain.filter).toBeUndefined();
  });
});
