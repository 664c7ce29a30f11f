import { describe, expect, it } from 'vitest';
import { findPreset } from '../presets/table';
import { MemoryRunStore } from '../store/run-store';
import { AUDIT_CHECKS, auditLines, auditStep, rewardAudit, type AuditStep } from './audit';
import { storedRunAudit } from './reads';
import { groupOf, groupSample } from './testing/groups';

/** A sample of a group: its reward, length and components. */
const sample = groupSample;
const group = groupOf;

const finding = (steps: AuditStep[], id: string) => rewardAudit(steps).find((f) => f.id === id)!;

/**
 * A run that games a length reward: reward 1 for a completion of 11 ids or more, and each step's
 * completions a little longer than the last; `pays` false scores them independently of length.
 */
function lengthRun(n: number, pays: boolean): AuditStep[] {
  return Array.from({ length: n }, (_, i) => {
    const step = i + 1;
    const lengths = [9, 10, 10, 11, 11, 12].map((l, j) => l + Math.floor((i * (j + 1)) / n));
    const groups = [0, 1].map(() => group(lengths.map((l, j) => sample(pays ? (l >= 11 ? 1 : 0) : j % 2, l, {}, j))));
    const all = groups.flatMap((g) => g.samples);
    const metrics = {
      'reward/mean': all.reduce((a, s) => a + s.reward, 0) / all.length,
      'response/mean_length': all.reduce((a, s) => a + s.length, 0) / all.length,
    };
    return auditStep(step, metrics, groups);
  });
}

describe('the reward-hacking audit', () => {
  it('reports every check, in order, and says it is an audit over the whole run', () => {
    expect(rewardAudit([]).map((f) => f.id)).toEqual(AUDIT_CHECKS);
    expect(rewardAudit([]).every((f) => f.verdict === 'not-applicable')).toBe(true);
    expect(auditLines(rewardAudit(lengthRun(10, true)), 10)[0]).toMatch(
      /^reward-hacking audit over the 10 steps kept \(an audit of the whole run, not an early warning\): 1 found$/,
    );
  });

  it('length-reward: the within-group correlation is the pooled Pearson r of deviations from each group mean', () => {
    // One group: lengths 1, 2, 3 and rewards 0, 0, 1. dl = (−1, 0, 1), dr = (−1/3, −1/3, 2/3):
    // Σdl² = 2, Σdr² = 2/3, Σdl·dr = 1, r = 1 / √(4/3) = 0.8660254.
    const s = auditStep(1, {}, [group([sample(0, 1), sample(0, 2), sample(1, 3)])]);
    expect(s.lengthReward).toEqual({ n: 3, ll: 2, rr: expect.closeTo(2 / 3, 12), lr: expect.closeTo(1, 12) });
    expect(finding([s], 'length-reward').figures.r).toBeCloseTo(Math.sqrt(3) / 2, 12);
  });

  it('length-reward: found on a run whose reward pays for length and whose completions grow, with the step to read', () => {
    const f = finding(lengthRun(10, true), 'length-reward');
    expect(f.verdict).toBe('found');
    expect(f.figures.r).toBeGreaterThan(0.5);
    expect(f.figures.length_end).toBeGreaterThan(f.figures.length_start);
    expect(f.step).toBe(6);
    expect(f.reason).toMatch(/longer completions scored higher \(r = 0\.\d+ .* the reward pays for length/);
  });

  it('length-reward: clear when the reward does not follow length within groups, however lengths drift', () => {
    const f = finding(lengthRun(10, false), 'length-reward');
    expect(f.verdict).toBe('clear');
    expect(Math.abs(f.figures.r)).toBeLessThan(0.5);
  });

  it('length-reward: prompts that need longer answers do not count (only deviations within a group do)', () => {
    // Long prompt answers score 1, short ones 0, but within each group nothing varies.
    const steps = [1, 2].map((step) =>
      auditStep(step, {}, [group([sample(1, 20), sample(1, 20)]), group([sample(0, 5), sample(0, 5)])]),
    );
    const f = finding(steps, 'length-reward');
    expect(f.verdict).toBe('not-applicable');
    expect(f.reason).toMatch(/lengths never differed/);
  });

  it('leaves DPO pairs and lengths an import does not know out', () => {
    const s = auditStep(1, {}, [
      group([sample(1, 3), sample(0, 9)], 'dpo-pair'),
      group([sample(1, NaN), sample(0, NaN)]),
    ]);
    expect(s.lengthReward).toBeUndefined();
    expect(s.parts).toEqual({ n: 2, rr: 0.5, additive: false, names: [], cr: {} });
  });

  it("component-dominance: each part's share is its within-group covariance with the reward over the reward's variance", () => {
    // One group of four, score (1, 1, 0, 0) plus overlong (0, −0.5, 0, −0.5): rewards (1, 0.5, 0, −0.5), mean 0.25.
    // dr = (0.75, 0.25, −0.25, −0.75), Σdr² = 1.25; d score = (0.5, 0.5, −0.5, −0.5): Σ = 0.375 + 0.125 + 0.125 + 0.375 = 1,
    // share 0.8; d overlong = (0.25, −0.25, 0.25, −0.25): Σ = 0.1875 − 0.0625 − 0.0625 + 0.1875 = 0.25, share 0.2.
    const samples = [
      [1, 0],
      [1, -0.5],
      [0, 0],
      [0, -0.5],
    ].map(([score, overlong], i) => sample(score + overlong, 10, { score, overlong, correct: score }, i));
    const f = finding([auditStep(1, {}, [group(samples)])], 'component-dominance');
    expect(f.figures).toEqual({ share_score: expect.closeTo(0.8, 12), share_overlong: expect.closeTo(0.2, 12) });
    // The task's score dominating is what a shaped reward should do.
    expect(f.verdict).toBe('clear');
  });

  it('component-dominance: found when a part other than the score carries the signal', () => {
    // Scores all 1: only the overlong penalty varies within the group.
    const samples = [0, -0.2, -0.6, -1].map((overlong, i) => sample(1 + overlong, 10, { score: 1, overlong }, i));
    const f = finding([auditStep(3, {}, [group(samples)])], 'component-dominance');
    expect(f.verdict).toBe('found');
    expect(f.figures.share_overlong).toBeCloseTo(1, 12);
    expect(f.reason).toMatch(/overlong carries 100% .* mostly overlong, not the task's score/);
    expect(f.step).toBe(3);
  });

  it('component-dominance: any part of a reward of parts without a score dominating is found; read-outs of one score are not parts', () => {
    const parts = [
      [1, 0],
      [0, 0.1],
      [1, 0.1],
      [0, 0],
    ].map(([format, answer], i) => sample(format + answer, 10, { format, answer }, i));
    expect(finding([auditStep(1, {}, [group(parts)])], 'component-dominance').verdict).toBe('found');
    const readOuts = [1, 0].map((c, i) => sample(c, 10, { boxed: 1, parsed: 1, correct: c }, i));
    const f = finding([auditStep(1, {}, [group(readOuts)])], 'component-dominance');
    expect(f.verdict).toBe('not-applicable');
    expect(f.reason).toMatch(/not a sum of its components \(boxed, correct, parsed\)/);
  });

  it('group-collapse: found when the last window has few distinct completions and mostly equal-reward groups', () => {
    const run = (distinctEnd: number) =>
      Array.from({ length: 10 }, (_, i) =>
        auditStep(
          i + 1,
          {
            'response/distinct_frac': i < 5 ? 0.9 : distinctEnd,
            'reward/frac_reward_zero_std': i < 5 ? 0.3 : 0.9,
            'reward/mean': i < 5 ? 0.4 : 0.97,
          },
          null,
        ),
      );
    const f = finding(run(0.15), 'group-collapse');
    expect(f.verdict).toBe('found');
    expect(f.step).toBe(6);
    expect(f.reason).toMatch(
      /15% of completions per group were distinct \(from 90%\) and 90% of groups had equal rewards at a mean reward of 0\.97/,
    );
    expect(finding(run(0.6), 'group-collapse').verdict).toBe('clear');
    expect(finding([auditStep(1, { 'dpo/loss': 0.6 }, null)], 'group-collapse').verdict).toBe('not-applicable');
  });

  it('kl-acceleration: found when the KL to the reference grows much faster at the end; clear when it grows steadily', () => {
    const run = (kl: (i: number) => number) =>
      Array.from({ length: 15 }, (_, i) => auditStep(i + 1, { 'rl/kl': kl(i) }, null));
    const accelerating = finding(
      run((i) => (i < 10 ? 0.001 * i : 0.009 + 0.01 * (i - 9))),
      'kl-acceleration',
    );
    expect(accelerating.verdict).toBe('found');
    expect(accelerating.step).toBe(11);
    expect(accelerating.figures.slope_last).toBeCloseTo(0.01, 12);
    expect(
      finding(
        run((i) => 0.002 * i),
        'kl-acceleration',
      ).verdict,
    ).toBe('clear');
    // Fast but far from the reference's neighbourhood floor: not found.
    expect(
      finding(
        run((i) => (i < 10 ? 0 : 1e-4 * (i - 9))),
        'kl-acceleration',
      ).verdict,
    ).toBe('clear');
    expect(
      finding(
        run(() => NaN),
        'kl-acceleration',
      ).reason,
    ).toMatch(/no KL to a reference \(rl\/kl\)/);
  });

  it("a stored run's audit reads its metrics and the groups of the steps that keep them", async () => {
    const store = new MemoryRunStore();
    await store.putRun({
      runId: 'r-1',
      options: findPreset('grpo-arith')!.defaults,
      createdAt: 0,
      status: 'finished',
      lastStep: 0,
    });
    const run = lengthRun(10, true);
    for (const s of run) {
      // Every other step keeps its groups, as a store that drops old records would.
      const groups = [0, 1].map(() =>
        group([9, 10, 11, 12].map((l, j) => sample(l >= 11 ? 1 : 0, l + (s.step > 5 ? 2 : 0), {}, j))),
      );
      await store.commitStep('r-1', { step: s.step, metrics: s.metrics, ...(s.step % 2 ? { groups } : {}) });
    }
    const audit = await storedRunAudit(store, 'r-1');
    expect(audit.steps).toBe(10);
    const lengths = audit.findings.find((f) => f.id === 'length-reward')!;
    expect(lengths.verdict).toBe('found');
    // Five steps of two groups of four samples.
    expect(lengths.figures.samples).toBe(40);
    expect((await storedRunAudit(store, 'nope')).findings.every((f) => f.verdict === 'not-applicable')).toBe(true);
  });
});
