import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import { findPreset } from '../presets/table';
import { MemoryRunStore } from '../store/run-store';
import { Bases } from './bases';
import { HEALTH_DEFAULTS, healthFields, runHealth, withCommonestFailure, type StepMetrics } from './health';
import { RunReads } from './reads';

/** A healthy run: every metric steady around its start, a little noise. */
function steady(n: number, patch: (step: number) => Record<string, number | undefined> = () => ({})): StepMetrics[] {
  return Array.from({ length: n }, (_, i) => {
    const step = i + 1;
    const wobble = (i % 3) * 0.01;
    return {
      step,
      metrics: {
        'reward/mean': 0.3 + wobble,
        'reward/group_std_mean': 0.4 + wobble,
        'reward/frac_reward_zero_std': 0.3,
        'rl/entropy': 0.5 + wobble,
        'response/mean_length': 20 + (i % 2),
        'response/truncated_frac': 0.05,
        'response/distinct_frac': 0.9,
        'opt/grad_norm': 1 + wobble,
        'mismatch/kl': 1e-5,
        'sessions/trained': 64,
        ...(patch(step) as Record<string, number>),
      },
    };
  });
}

const ids = (steps: StepMetrics[]) => runHealth(steps).map((f) => f.id);

describe('run health', () => {
  it('raises nothing on a steady run', () => {
    expect(runHealth(steady(40))).toEqual([]);
  });

  it('echo trap: within-group std halves while the reward stays flat, from the step the window crosses', () => {
    const steps = steady(30, (s) => (s > 10 ? { 'reward/group_std_mean': 0.05 } : {}));
    const f = runHealth(steps).find((x) => x.id === 'echo-trap')!;
    // Window of 5: mean(0.4.., 0.05 × k) ≤ 0.5 × start once 3 of 5 steps are low (step 13).
    expect(f.step).toBe(13);
    expect(f.active).toBe(true);
    expect(f.reason).toMatch(/reward\/group_std_mean/);
    // The same fall with the reward rising is learning, not a trap.
    const learning = steady(30, (s) => (s > 10 ? { 'reward/group_std_mean': 0.05, 'reward/mean': 0.9 } : {}));
    expect(ids(learning)).not.toContain('echo-trap');
  });

  it('low signal: fewer than a quarter of the groups with differing rewards', () => {
    const steps = steady(20, (s) => (s > 8 ? { 'reward/frac_reward_zero_std': 0.95 } : {}));
    const f = runHealth(steps).find((x) => x.id === 'low-signal')!;
    expect(f.step).toBeGreaterThan(8);
    expect(f.step).toBeLessThanOrEqual(13);
    expect(ids(steady(20, () => ({ 'reward/frac_reward_zero_std': 0.7 })))).not.toContain('low-signal');
  });

  it('entropy collapse and explosion; steps that trained nothing are left out', () => {
    expect(ids(steady(20, (s) => (s > 8 ? { 'rl/entropy': 0.05 } : {})))).toContain('entropy');
    expect(ids(steady(20, (s) => (s > 8 ? { 'rl/entropy': 3 } : {})))).toContain('entropy');
    // Untrained steps report entropy 0: not a collapse.
    expect(
      ids(steady(20, (s) => (s % 2 ? { 'rl/entropy': 0, 'sessions/trained': 0, 'opt/grad_norm': 0 } : {}))),
    ).toEqual([]);
  });

  it('length drift and a rising truncated fraction', () => {
    expect(ids(steady(20, (s) => (s > 8 ? { 'response/mean_length': 45 } : {})))).toContain('length');
    expect(ids(steady(20, (s) => (s > 8 ? { 'response/truncated_frac': 0.6 } : {})))).toContain('truncation');
  });

  it('diversity: distinct completions per group fall', () => {
    expect(ids(steady(20, (s) => (s > 8 ? { 'response/distinct_frac': 0.3 } : {})))).toContain('diversity');
  });

  it('grad spike against the median before it, and it is no longer active once past', () => {
    const f = runHealth(steady(20, (s) => (s === 12 ? { 'opt/grad_norm': 9 } : {}))).find(
      (x) => x.id === 'grad-spike',
    )!;
    expect(f.step).toBe(12);
    expect(f.active).toBe(false);
  });

  it('mismatch KL above its bound', () => {
    const f = runHealth(steady(10, (s) => (s === 7 ? { 'mismatch/kl': 0.05 } : {}))).find((x) => x.id === 'mismatch')!;
    expect(f.step).toBe(7);
    expect(f.reason).toMatch(/mismatch\/kl/);
    expect(f.reason).toMatch(/no longer match the sampler's/);
  });

  it('mismatch KL on a batch sampled ahead says it holds the policy lag', () => {
    const lagging = (s: number) => (s === 7 ? { 'mismatch/kl': 0.05, 'async/staleness_max': 2 } : {});
    const f = runHealth(steady(10, lagging)).find((x) => x.id === 'mismatch')!;
    expect(f.reason).toMatch(/sampled up to 2 versions before the weights it trained on/);
    expect(f.reason).not.toMatch(/no longer match/);
  });

  it('thresholds are options: a looser floor raises no low-signal flag', () => {
    const steps = steady(20, () => ({ 'reward/frac_reward_zero_std': 0.85 }));
    expect(ids(steps)).toContain('low-signal');
    expect(runHealth(steps, { minSignalFrac: 0.1 }).map((f) => f.id)).not.toContain('low-signal');
    expect(HEALTH_DEFAULTS.minSignalFrac).toBe(0.25);
  });

  it('healthFields: 1 for each flag active at the last step, 0 otherwise', () => {
    const fields = healthFields(steady(20, (s) => (s > 8 ? { 'response/truncated_frac': 0.6 } : {})));
    expect(fields['health/truncation']).toBe(1);
    expect(fields['health/echo-trap']).toBe(0);
    expect(Object.keys(fields)).toHaveLength(9);
  });

  it("infrastructure: a step's share of failed episodes at or above its floor, with the commonest failure when given", () => {
    const steps = steady(6, (s) => ({ 'episodes/error_frac': s === 4 ? 0.25 : s === 5 ? 0.05 : 0 }));
    const f = runHealth(steps).find((x) => x.id === 'infrastructure')!;
    expect(f).toMatchObject({ step: 4, active: false, metric: 'episodes/error_frac' });
    expect(f.reason).toBe(
      "25% of step 4's episodes ended as environment or sandbox failures (episodes/error_frac, at or above 10%): " +
        'the program or the companion failed, not the model, and those groups did not train.',
    );
    const named = withCommonestFailure(runHealth(steps), { detail: 'deadline: no answer', count: 16 });
    expect(named.find((x) => x.id === 'infrastructure')!.reason).toMatch(/The commonest \(16×\): deadline: no answer$/);
    expect(runHealth(steady(6, () => ({ 'episodes/error_frac': 0.05 }))).map((x) => x.id)).not.toContain(
      'infrastructure',
    );
  });
});

describe('run health through the reads of a stored run', () => {
  it('a multi-turn run flags from its stored metrics and points to the Episodes view; an unknown run has none', async () => {
    const store = new MemoryRunStore();
    const o = { ...findPreset('grpo-calc')!.defaults, steps: 12 } as RunOptions;
    await store.putRun({ runId: 'r-1', options: o, createdAt: 0, status: 'finished', lastStep: 0 });
    for (const { step, metrics } of steady(12, (s) => (s > 4 ? { 'reward/frac_reward_zero_std': 1 } : {})))
      await store.commitStep('r-1', { step, metrics });
    const reads = new RunReads(
      store,
      new Bases(
        async () => ({}) as never,
        () => undefined,
        store,
      ),
      () => ({}),
    );
    const flags = await (await reads.of('r-1')).health({});
    expect(flags.map((f) => [f.id, f.view])).toEqual([['low-signal', 'Episodes']]);
    expect(await (await reads.of('nope')).health({})).toEqual([]);
  });
});
