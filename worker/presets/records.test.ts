import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { importCheckpoint } from '../model/checkpoint';
import { Model } from '../model/model';
import { rowPerSequence } from '../model/packing';
import { BASE_CHECKPOINT_DIR, readCheckpointDir } from '../model/node-checkpoint-dir';
import { outcomeAdvantageDetails } from '../rl/advantages/index';
import { pack } from '../rl/pack';
import { trains, type Session } from '../rl/types';
import { validateSessions } from '../rl/validate';
import type { ArithTask } from '../data/arith';
import { DPO_ARITH, DpoRun } from '../train/dpo';
import { GRPO_ARITH, GrpoRun, type GrpoStep } from '../train/grpo';
import type { AdvantageOptions, OutcomeEstimator, Truncation } from '../rl/index';

/** What of a GRPO run's config its packing of the groups reads: the estimator and what pack feeds it. */
type GroupsConfig = { estimator: OutcomeEstimator; advantage: AdvantageOptions; truncation: Truncation };
import { taskMathReward } from '../rewards/task-math-reward';
import { batchRecord, groupRecords, pairRecords, pairSessions } from './records';

const base = importCheckpoint(readCheckpointDir(BASE_CHECKPOINT_DIR));
const tok = base.tokenizer;

/** A GRPO step of hand-made sessions, packed by the RL core as GrpoRun packs them. */
function grpoStep(rewards: number[][], config: GroupsConfig, truncated: [number, number][] = []): GrpoStep {
  const tasks = rewards.map((_, k) => ({ id: `t${k}`, prompt: `${k}+1=`, answer: String(k + 1) }) as ArithTask);
  const sessions: Session[] = rewards.flatMap((rs, k) =>
    rs.map((reward, j) => {
      const cut = truncated.some(([a, b]) => a === k && b === j);
      const call = {
        promptIds: [1, 2],
        sampledIds: [3, 4, 5],
        behaviorLogProbs: [-1, -1, -1],
        rawLogProbs: [-1, -1, -1],
        finishReason: cut ? ('length' as const) : ('stop' as const),
        version: 0,
      };
      return {
        task: `t${k}`,
        group: `g${k}`,
        sample: j,
        attempt: 0,
        calls: [call],
        status: cut ? ('truncated' as const) : ('completed' as const),
        reward,
        components: { correct: reward },
      };
    }),
  );
  const packed = pack(sessions, 16, {
    estimator: config.estimator,
    advantage: config.advantage,
    truncation: config.truncation,
    maskZeroAdvantage: true,
  });
  if (!packed.ok) throw new Error(packed.message);
  const generated = sessions.map(({ calls: [c] }) => ({
    promptIds: Int32Array.from(c.promptIds),
    sampledIds: Int32Array.from(c.sampledIds),
    behaviorLogProbs: Float64Array.from(c.behaviorLogProbs),
    rawLogProbs: Float64Array.from(c.behaviorLogProbs),
    finishReason: c.finishReason,
  }));
  return {
    step: 1,
    metrics: {},
    tasks,
    sessions,
    generated,
    packed,
    dlogp: new Float64Array(packed.rows * packed.width),
    oldLogp: null,
    updates: [],
  };
}

const VERL_GRPO: GroupsConfig = { estimator: 'grpo', advantage: {}, truncation: 'mask' };

describe('a GRPO step as groups: the baseline and the std the estimator used', () => {
  it('rewards [0, 1, 0, 0] under verl: baseline 0.25, the unbiased std 0.5 (not the population 0.433), advantage 1.5', () => {
    const [g] = groupRecords(grpoStep([[0, 1, 0, 0]], VERL_GRPO), tok);
    expect(g.estimate).toMatchObject({
      estimator: 'grpo',
      members: 4,
      baseline: 0.25,
      std: 0.5,
      divisor: 0.5 + 1e-6,
      zero: false,
      batch: null,
    });
    expect(g.estimate!.settings).toEqual({
      compat: 'verl',
      scale: 'group',
      stdType: 'unbiased',
      epsilon: 1e-6,
      singleton: 'raw',
    });
    expect(g.samples[1].advantage).toBeCloseTo(1.5, 5);
    expect(g.samples[1].advantage).toBeCloseTo(
      (g.samples[1].reward - g.estimate!.baseline!) / g.estimate!.divisor!,
      12,
    );
    expect(g.samples.map((x) => x.baseline)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(g.rewardStd).toBeCloseTo(Math.sqrt(0.75 / 4), 12); // the description stays the population std
  });

  it('follows the run’s options: rLLM’s population std, TRL’s ε, scale none, RLOO’s leave-one-out baselines', () => {
    const rllm: GroupsConfig = { ...VERL_GRPO, advantage: { compat: 'rllm' } };
    const [r] = groupRecords(grpoStep([[0, 1, 0, 0]], rllm), tok);
    expect(r.estimate!.std).toBeCloseTo(Math.sqrt(0.75 / 4), 12);
    expect(r.samples[1].advantage).toBeCloseTo(0.75 / Math.sqrt(0.75 / 4), 5);
    const trl: GroupsConfig = { ...VERL_GRPO, advantage: { compat: 'trl', scale: 'none' } };
    const [t] = groupRecords(grpoStep([[0, 1, 0, 0]], trl), tok);
    expect(t.estimate).toMatchObject({
      std: null,
      divisor: null,
      settings: { compat: 'trl', scale: 'none', epsilon: 1e-4 },
    });
    expect(t.samples[1].advantage).toBeCloseTo(0.75, 12);
    const rloo: GroupsConfig = { ...VERL_GRPO, estimator: 'rloo' };
    const [l] = groupRecords(grpoStep([[0, 1, 0, 0]], rloo), tok);
    expect(l.estimate).toMatchObject({ estimator: 'rloo', baseline: null, std: null });
    expect(l.samples.map((x) => x.baseline)).toEqual([1 / 3, 0, 1 / 3, 1 / 3]);
    expect(l.samples[1].advantage).toBe(1);
  });

  it('the batch record counts the sessions left out of the rows (masked zero-advantage groups, include "carried")', () => {
    const step = grpoStep(
      [
        [0, 1, 0, 0],
        [1, 1, 1, 1],
      ],
      VERL_GRPO,
    );
    const carried = pack(step.sessions, 16, { truncation: 'mask', maskZeroAdvantage: true, include: 'carried' });
    if (!carried.ok) throw new Error(carried.message);
    expect(
      batchRecord({ ...step, packed: carried, dlogp: new Float64Array(carried.rows * carried.width) }, tok).notPacked,
    ).toBe(4);
    expect(batchRecord(step, tok).notPacked).toBe(0);
  });

  it('the batch record has a staleness layer, and the groups a served version, only when a call trails the weights it trained on', () => {
    const step = grpoStep([[0, 1, 0, 0]], VERL_GRPO); // every call sampled by version 0
    expect(batchRecord({ ...step, step: 1 }, tok).layers.staleness).toBeUndefined();
    const ahead = batchRecord({ ...step, step: 3 }, tok); // trained on version 2
    const { staleness, version } = ahead.layers;
    expect(staleness).toBeDefined();
    for (let i = 0; i < version.length; i++) expect(staleness![i]).toBe(version[i] >= 0 ? 2 : -1);
    // The groups say it per sample too: served by version 0, two behind; a synchronous step says nothing.
    const [g] = groupRecords({ ...step, step: 3 }, tok);
    expect(g.samples.map((x) => x.served)).toEqual(g.samples.map(() => ({ version: 0, staleness: 2 })));
    expect(groupRecords({ ...step, step: 1 }, tok)[0].samples.every((x) => !('served' in x))).toBe(true);
  });

  it('groups as pack does: a truncated completion under truncation "mask" is no member; an all-equal group is zero', () => {
    const [a, b] = groupRecords(
      grpoStep(
        [
          [0, 1, 0, 1],
          [1, 1],
        ],
        VERL_GRPO,
        [[0, 3]],
      ),
      tok,
    );
    expect(a.estimate).toMatchObject({ members: 3, baseline: 1 / 3 });
    expect(a.estimate!.std).toBeCloseTo(Math.sqrt((2 * (1 / 3) ** 2 + (2 / 3) ** 2) / 2), 12);
    expect(a.samples[3]).toMatchObject({ advantage: 0, truncated: true, status: 'truncated' });
    expect(a.samples[3].baseline).toBeUndefined();
    expect(b.estimate).toMatchObject({ members: 2, zero: true, std: 0 });
  });

  it('the estimate is pack’s working: what the view computed itself before (outcomeAdvantageDetails on the trained sessions)', () => {
    const configs: GroupsConfig[] = [
      VERL_GRPO,
      { ...VERL_GRPO, advantage: { compat: 'trl', scale: 'batch' } },
      { ...VERL_GRPO, estimator: 'rloo' },
      { ...VERL_GRPO, estimator: 'reinforce++-baseline', truncation: 'score' },
      { ...VERL_GRPO, estimator: 'reinforce++-baseline', advantage: { compat: 'rllm' } },
    ];
    const rewards = [[0, 1, 0, 1], [1, 1, 1], [0.5, 0, 1, 0.25], [1]];
    for (const config of configs) {
      const step = grpoStep(rewards, config, [
        [0, 3],
        [2, 1],
      ]);
      // The view's own computation before pack returned its working (records.ts `explain`, issue 36).
      const idx = step.sessions.map((_, i) => i).filter((i) => trains(step.sessions[i].status, config.truncation));
      const d = outcomeAdvantageDetails(
        config.estimator,
        idx.map((i) => step.sessions[i].reward ?? 0),
        idx.map((i) => JSON.stringify([step.sessions[i].task, step.sessions[i].group])),
        idx.map((i) => step.sessions[i].calls.reduce((n, c) => n + c.sampledIds.length, 0)),
        config.advantage,
      );
      const groups = groupRecords(step, tok);
      expect(groups.map((g) => g.estimate)).toEqual(
        d.groups.map((gd) => ({
          estimator: config.estimator,
          settings: d.settings,
          members: gd.members.length,
          baseline: gd.baseline,
          std: gd.std,
          divisor: gd.divisor,
          zero: gd.zero,
          batch: d.batch,
        })),
      );
      const baselines = new Map(idx.map((i, k) => [i, d.baselines[k]]));
      step.sessions.forEach((x, i) => {
        const sample = groups.find((g) => g.group === x.group)!.samples.find((y) => y.sample === x.sample)!;
        expect(sample.baseline).toBe(baselines.get(i));
      });
    }
  });

  it('a real GrpoRun step: every trained sample’s advantage is (reward − baseline) / (σ + ε) from its group’s estimate', async () => {
    const config = { ...GRPO_ARITH, prompts: 2, group: 4, evalN: 1 };
    const run = new GrpoRun(createCpuOps(), config, base);
    const groups = groupRecords(await run.next(), tok);
    expect(groups).toHaveLength(2);
    for (const g of groups) {
      expect(g.estimate!.settings.stdType).toBe('unbiased');
      for (const x of g.samples)
        if (x.baseline !== undefined && !g.estimate!.zero)
          expect(x.advantage).toBeCloseTo((x.reward - x.baseline) / g.estimate!.divisor!, 10);
    }
  });
});

describe('a DPO step as groups and sessions (shipped base, CPU)', () => {
  it('each pair is a group of two, chosen then rejected, with the implicit rewards behind rewards/*; its sessions carry the base sampler’s log-probs', async () => {
    const run = new DpoRun(createCpuOps(), { ...DPO_ARITH, pairs: 3, evalN: 1 }, base);
    await run.next();
    const s = await run.next(); // the policy has moved: implicit rewards are not all 0
    const groups = pairRecords(s, tok, DPO_ARITH);
    expect(groups).toHaveLength(3);
    // The step carries the rewards its pairs were chosen by: what the view once scored again itself.
    s.pairs.forEach((p, i) =>
      expect(s.rewards[i]).toEqual({
        chosen: taskMathReward(tok.decode(p.chosen), p.task),
        rejected: taskMathReward(tok.decode(p.rejected), p.task),
      }),
    );
    groups.forEach((g, i) => {
      expect(g).toMatchObject({
        kind: 'dpo-pair',
        group: `pair ${i + 1}: ${s.pairs[i].task.id}`,
        prompt: s.pairs[i].task.prompt,
        answer: s.pairs[i].task.answer,
        rewardMean: 0.5,
        zeroStd: false,
      });
      expect(g.samples.map((x) => [x.sample, x.status, x.reward])).toEqual([
        [0, 'chosen', 1],
        [1, 'rejected', 0],
      ]);
      expect(g.samples[0].completion).toBe(`\\boxed{${s.pairs[i].task.answer}}`);
    });
    const chosen = groups.map((g) => g.samples[0].advantage);
    const rejected = groups.map((g) => g.samples[1].advantage);
    expect(chosen.some((r) => r !== 0)).toBe(true);
    expect(chosen.reduce((a, b) => a + b, 0) / 3).toBeCloseTo(s.metrics['rewards/chosen'], 12);
    expect(rejected.reduce((a, b) => a + b, 0) / 3).toBeCloseTo(s.metrics['rewards/rejected'], 12);
    // Per pair: margin = chosen − rejected (their mean is rewards/margins), ranked correctly when > 0, and the loss variant's value.
    groups.forEach((g, i) => {
      expect(g.pair!.margin).toBeCloseTo(chosen[i] - rejected[i], 14);
      expect(g.pair!.rankedCorrectly).toBe(g.pair!.margin > 0);
      expect(g.pair!.loss).toBeCloseTo(-Math.log(1 / (1 + Math.exp(-g.pair!.margin))), 10); // sigmoid: −log σ(β·Δ), the margin being β·Δ
      expect(g.pair).toMatchObject({ lossType: 'sigmoid', beta: 0.1 });
    });
    expect(groups.reduce((a, g) => a + g.pair!.margin, 0) / 3).toBeCloseTo(s.metrics['rewards/margins'], 12);
    expect(groups.reduce((a, g) => a + Number(g.pair!.rankedCorrectly), 0) / 3).toBeCloseTo(
      s.metrics['rewards/accuracies'],
      12,
    );
    expect(groups.reduce((a, g) => a + g.pair!.loss, 0) / 3).toBeCloseTo(s.metrics['loss/dpo'], 12);

    const sessions = pairSessions(s);
    expect(() => validateSessions(sessions)).not.toThrow();
    expect(sessions.map((x) => [x.group, x.sample, x.reward])).toEqual(
      groups.flatMap((g) => [
        [g.group, 0, 1],
        [g.group, 1, 0],
      ]),
    );
    // The stored raw log-probs are the frozen base's: a fresh base model rescoring the same ids agrees.
    const ref = new Model(createCpuOps(), base.config);
    ref.setWeights(base.weights);
    for (const x of sessions) {
      const call = x.calls[0];
      expect(call.version).toBe(0);
      const batch = rowPerSequence([[...Array.from(call.promptIds), ...Array.from(call.sampledIds)]]);
      const { logp } = await ref.score(batch);
      Array.from(call.sampledIds).forEach((_, t) =>
        expect(call.rawLogProbs![t]).toBeCloseTo(logp[call.promptIds.length + t], 4),
      );
    }
  });

  it('pairs a checkpoint kept before pairs carried their rewards are scored when trained, as they were chosen', async () => {
    const config = { ...DPO_ARITH, pairs: 2, evalN: 1 };
    const run = new DpoRun(createCpuOps(), config, base);
    const s = await run.next();
    const old = new DpoRun(createCpuOps(), config, base);
    old.resumeAt({
      weights: await run.model.getWeights(),
      optimizer: await run.model.getOptimizerState(),
      position: {
        ...run.position(),
        dpo: { sampled: run.position().dpo!.sampled, pending: s.pairs.map(({ rewards: _rewards, ...p }) => p) },
      },
    });
    const again = await old.next();
    expect(again.pairs.map((p) => p.task.id)).toEqual(s.pairs.map((p) => p.task.id));
    expect(again.rewards).toEqual(s.rewards);
  });

  it('pairs a checkpoint kept without their sampler calls still show as groups but give no sessions', async () => {
    const run = new DpoRun(createCpuOps(), { ...DPO_ARITH, pairs: 2, evalN: 1 }, base);
    const s = await run.next();
    const bare = { ...s, pairs: s.pairs.map(({ calls: _calls, ...p }) => p) };
    expect(pairRecords(bare, tok, DPO_ARITH)).toHaveLength(2);
    expect(pairSessions(bare)).toEqual([]);
  });
});
