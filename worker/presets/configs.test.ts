import { describe, expect, it } from 'vitest';
import type { DpoRunOptions, GrpoRunOptions } from '../contract/options';
import { DPO_ARITH } from '../train/dpo';
import { GRPO_ARITH } from '../train/grpo';
import { SFT_ARITH } from '../train/sft';
import { GRPO_CALC, GRPO_CODE, GRPO_GUESS } from '../train/grpo-episodes';
import {
  dpoConfigOf,
  dpoOptionsOf,
  episodeGrpoConfigOf,
  episodeGrpoOptionsOf,
  flowConfigOf,
  flowOptionsOf,
  grpoConfigOf,
  grpoOptionsOf,
  ppoConfigOf,
  ppoOptionsOf,
  sftConfigOf,
  sftOptionsOf,
} from './configs';
import { FLOW_GRPO_2D, PRETRAIN_DEFAULTS } from '../flow/index';
import { PPO_ARITH } from '../train/ppo';
import { checkRunOptions } from './table';

const RUN = { evalN: 37, checkpointEvery: 7 };

/** Every GRPO option away from its default, so a mapping that drops one shows. */
const GRPO: GrpoRunOptions = {
  preset: 'grpo-arith',
  steps: 12,
  lr: 3e-4,
  seed: 9,
  prompts: 6,
  group: 5,
  trainProblems: 16,
  temperature: 0.8,
  topK: 7,
  topP: 0.95,
  maxNew: 20,
  policyLoss: { name: 'cispo', clipLow: 0.1, clipHigh: 0.28, cap: 4, compat: 'trl' },
  aggregation: { mode: 'dr_grpo', maxCompletionLength: 24 },
  advantage: { estimator: 'rloo', singleton: 'zero', normalize: true, compat: 'trl' },
  maskZeroAdvantage: false,
  truncation: 'score',
  beta: 0.02,
  kl: { estimator: 'k2+', compat: 'trl' },
  importance: { kind: 'band', level: 'sequence', low: 0.25, high: 4, batchNormalize: true },
  rejection: { seq_mean_k1: 2, token_k3: 5 },
  beta1: 0.8,
  beta2: 0.95,
  eps: 1e-6,
  weightDecay: 0.05,
  maxGradNorm: 2,
  epochs: 2,
  miniBatches: 3,
  lrSchedule: 'cosine',
  lrWarmup: 3,
  minLrRatio: 0.1,
  overlongBuffer: 4,
  overlongPenalty: 0.5,
  evalSamples: 4,
  filterGroups: 'score',
  maxGenBatches: 3,
  evalEvery: 4,
  ...RUN,
};

const DPO: DpoRunOptions = {
  preset: 'dpo-arith',
  steps: 5,
  lr: 2e-4,
  seed: 4,
  pairs: 8,
  beta: 0.3,
  loss: { type: 'robust', labelSmoothing: 0.1 },
  nllWeight: 0.5,
  samplesPerPrompt: 6,
  temperature: 1.2,
  maxNew: 18,
  beta1: 0.85,
  beta2: 0.97,
  eps: 1e-7,
  weightDecay: 0.01,
  maxGradNorm: 3,
  evalEvery: 2,
  ...RUN,
};

describe('run options ↔ trainer configs', () => {
  it('the presets are the trainer configs', () => {
    expect(grpoConfigOf(grpoOptionsOf(GRPO_ARITH, RUN), GRPO_ARITH)).toEqual({ ...GRPO_ARITH, evalN: RUN.evalN });
    expect(dpoConfigOf(dpoOptionsOf(DPO_ARITH, RUN), DPO_ARITH)).toEqual({ ...DPO_ARITH, evalN: RUN.evalN });
    expect(sftConfigOf(sftOptionsOf(SFT_ARITH, RUN), SFT_ARITH)).toEqual({ ...SFT_ARITH, evalN: RUN.evalN });
    for (const c of [GRPO_CALC, GRPO_GUESS])
      expect(episodeGrpoConfigOf(episodeGrpoOptionsOf(c, RUN), c)).toEqual({ ...c, evalN: RUN.evalN });
  });

  it("maps every option of a multi-turn preset: GRPO's, the turn limit, the environment from the preset", () => {
    const { trainProblems: _none, ...shared } = GRPO;
    const o = { ...shared, preset: 'grpo-guess' as const, maxTurns: 5, maxNew: 4 };
    expect(checkRunOptions(o)).toEqual([]);
    const c = episodeGrpoConfigOf(o, GRPO_GUESS);
    expect(c).toMatchObject({
      environment: 'guess',
      maxTurns: 5,
      maxNew: 4,
      estimator: 'rloo',
      epochs: 2,
      miniBatches: 3,
      policyLoss: { name: 'cispo' },
    });
    expect('task' in c).toBe(false);
    expect(episodeGrpoOptionsOf(c, RUN)).toEqual(o);
    expect(checkRunOptions({ ...o, trainProblems: 16 }).map((p) => p.message)).toEqual([
      'trainProblems is not an option of grpo-guess',
    ]);
    expect(checkRunOptions({ ...o, maxTurns: 0 })[0].message).toMatch(
      /Max turns \(maxTurns\) must be an integer in 1..16, got 0/,
    );
  });

  it('maps every GRPO option onto the config the trainer reads', () => {
    expect(checkRunOptions(GRPO)).toEqual([]);
    const c = grpoConfigOf(GRPO, GRPO_ARITH);
    expect(c).toMatchObject({
      policyLoss: { name: 'cispo', options: { clipLow: 0.1, clipHigh: 0.28, cap: 4, compat: 'trl' } },
      aggregation: { mode: 'dr_grpo', maxCompletionLength: 24 },
      estimator: 'rloo',
      advantage: { singleton: 'zero', normalize: true, compat: 'trl' },
      kl: { estimator: 'k2+', compat: 'trl' },
      importance: { level: 'sequence', threshold: [0.25, 4], batchNormalize: true },
      rejection: { seq_mean_k1: 2, token_k3: 5 },
      task: { ...GRPO_ARITH.task, trainProblems: 16 },
      topK: 7,
      topP: 0.95,
      maxNew: 20,
      epochs: 2,
      miniBatches: 3,
      beta1: 0.8,
      weightDecay: 0.05,
      lrSchedule: { style: 'cosine', warmup: 3, minLrRatio: 0.1 },
      overlong: { buffer: 4, penaltyFactor: 0.5 },
      evalSamples: 4,
      dynamicSampling: { metric: 'score', maxGenBatches: 3 },
    });
    expect(grpoOptionsOf(c, RUN)).toEqual(GRPO);
    const tis = grpoConfigOf(
      { ...GRPO, importance: { kind: 'tis', level: 'token', cap: 3, batchNormalize: false }, rejection: {} },
      GRPO_ARITH,
    );
    expect(tis.importance).toEqual({ level: 'token', threshold: 3, batchNormalize: false });
    expect('rejection' in tis).toBe(false);
    expect('importance' in grpoConfigOf({ ...GRPO, importance: { kind: 'off' } }, GRPO_ARITH)).toBe(false);
  });

  it('maps every DPO option, the loss variant included', () => {
    expect(checkRunOptions(DPO)).toEqual([]);
    const c = dpoConfigOf(DPO, DPO_ARITH);
    expect(c).toMatchObject({
      lossType: 'robust',
      labelSmoothing: 0.1,
      samplesPerPrompt: 6,
      temperature: 1.2,
      maxNew: 18,
      beta: 0.3,
      nllWeight: 0.5,
    });
    expect(dpoOptionsOf(c, RUN)).toEqual(DPO);
    expect(dpoConfigOf({ ...DPO, loss: { type: 'hinge' } }, DPO_ARITH)).toMatchObject({
      lossType: 'hinge',
      labelSmoothing: 0,
    });
  });
});

describe('the newer options reach the trainers', () => {
  it('PPO, Flow-GRPO and the code preset round-trip; renormalize, aggregation compat and shiftMean pass through', () => {
    expect(ppoConfigOf(ppoOptionsOf(PPO_ARITH, RUN), PPO_ARITH)).toEqual({ ...PPO_ARITH, evalN: RUN.evalN });
    expect(episodeGrpoConfigOf(episodeGrpoOptionsOf(GRPO_CODE, RUN), GRPO_CODE)).toEqual({
      ...GRPO_CODE,
      evalN: RUN.evalN,
    });
    const flow = flowOptionsOf(FLOW_GRPO_2D, PRETRAIN_DEFAULTS, { checkpointEvery: 0 });
    expect(checkRunOptions(flow)).toEqual([]);
    expect(flowConfigOf(flow, FLOW_GRPO_2D)).toEqual({ config: FLOW_GRPO_2D, pretrain: PRETRAIN_DEFAULTS });
    expect(flowConfigOf({ ...flow, target: 'discs', smooth: 0, pretrainSteps: 10 }, FLOW_GRPO_2D)).toMatchObject({
      config: { reward: { target: { kind: 'discs' }, smooth: 0 } },
      pretrain: { iterations: 10 },
    });
    const o: GrpoRunOptions = {
      ...GRPO,
      renormalize: true,
      aggregation: { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' },
      advantage: { estimator: 'reinforce++-baseline', shiftMean: false },
    };
    expect(checkRunOptions(o)).toEqual([]);
    expect(grpoConfigOf(o, GRPO_ARITH)).toMatchObject({
      renormalize: true,
      aggregation: { mode: 'seq-mean-token-sum-norm', compat: 'verl-legacy' },
      estimator: 'reinforce++-baseline',
      advantage: { shiftMean: false },
    });
    expect(grpoOptionsOf(grpoConfigOf(o, GRPO_ARITH), RUN)).toEqual(o);
    expect(
      checkRunOptions({ ...GRPO, aggregation: { mode: 'token-mean', compat: 'verl-legacy' } })
        .map((p) => p.message)
        .join(),
    ).toMatch(/compat/);
  });
});
