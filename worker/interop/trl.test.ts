import { describe, expect, it } from 'vitest';
import type { DpoRunOptions, GrpoRunOptions, PpoRunOptions, RunOptions } from '../contract/options';
import { defaultsOf } from './testing/variants';
import { pythonValue, trlConfig, type TrlExport } from './trl';
import type { Unmapped } from './types';

function trl(o: RunOptions): TrlExport {
  const r = trlConfig(o);
  if (!r.ok) throw new Error(`trlConfig refused ${o.preset}: ${r.reason}`);
  return r;
}
const grpo = (patch: Partial<GrpoRunOptions>) => trl({ ...defaultsOf<GrpoRunOptions>('grpo-arith'), ...patch });
const ppo = (patch: Partial<PpoRunOptions>) => trl({ ...defaultsOf<PpoRunOptions>('ppo-arith'), ...patch });
const dpo = (patch: Partial<DpoRunOptions>) => trl({ ...defaultsOf<DpoRunOptions>('dpo-arith'), ...patch });
const unmapped = (e: TrlExport, path: string) => e.unmapped.filter((u) => u.path === path);
const kinds = (list: Unmapped[]) => list.map((u) => `${u.path}:${u.kind}`);

const LAUNCH = { output_dir: 'dewpoint-grpo-arith', bf16: false, gradient_accumulation_steps: 1 };
const OPTIM = {
  learning_rate: 1e-4,
  lr_scheduler_type: 'constant',
  seed: 1,
  adam_beta1: 0.9,
  adam_beta2: 0.99,
  adam_epsilon: 1e-8,
  weight_decay: 0,
  max_grad_norm: 1,
};

const GRPO_ARITH = {
  ...LAUNCH,
  max_steps: 150,
  ...OPTIM,
  save_strategy: 'steps',
  save_steps: 50,
  num_generations: 8,
  per_device_train_batch_size: 128,
  steps_per_generation: 1,
  num_iterations: 1,
  temperature: 1,
  max_completion_length: 16,
  mask_truncated_completions: true,
  top_k: 0,
  top_p: 1,
  epsilon: 0.2,
  epsilon_high: 0.2,
  delta: 3,
  loss_type: 'dapo',
  scale_rewards: 'group',
  beta: 0,
  vllm_importance_sampling_correction: false,
  eval_strategy: 'steps',
  eval_steps: 10,
};

// The episode presets: 8 tasks × 8, truncated episodes scored, checkpoints every 10; the budget is maxTurns × maxNew.
const episodes = (preset: string, maxCompletion: number) => ({
  ...GRPO_ARITH,
  output_dir: `dewpoint-${preset}`,
  save_steps: 10,
  per_device_train_batch_size: 64,
  max_completion_length: maxCompletion,
  mask_truncated_completions: false,
});

const PPO_ARITH = {
  ...LAUNCH,
  output_dir: 'dewpoint-ppo-arith',
  stop_token: 'eos',
  ...OPTIM,
  save_strategy: 'steps',
  save_steps: 50,
  total_episodes: 150 * 128,
  per_device_train_batch_size: 128,
  num_mini_batches: 2,
  num_ppo_epochs: 2,
  temperature: 1,
  response_length: 16,
  cliprange: 0.2,
  gamma: 1,
  lam: 0.95,
  vf_coef: 0.5,
  cliprange_value: 0.2,
  kl_coef: 0,
};

describe("trlConfig: each preset's defaults", () => {
  it("grpo-arith: GRPOConfig, dapo (token-mean), verl's dual clip 3 as TRL δ, masked truncations", () => {
    const e = grpo({});
    expect(e.className).toBe('GRPOConfig');
    expect(e.kwargs).toEqual(GRPO_ARITH);
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'policyLoss.name:default',
      'policyLoss.logRatioClamp:none',
      'entropyBonus.kind:default',
      'advantage.estimator:default',
      'advantage.epsilon:none',
      'advantage.singleton:none',
      'maskZeroAdvantage:none',
      'kl.estimator:default',
      'evalN:none',
    ]);
    expect(unmapped(e, 'advantage.epsilon')).toMatchObject([{ value: 1e-6, unset: true }]);
    expect(e.python).toBe(`from trl import GRPOConfig

config = GRPOConfig(
    output_dir="dewpoint-grpo-arith",
    bf16=False,
    gradient_accumulation_steps=1,
    max_steps=150,
    learning_rate=0.0001,
    lr_scheduler_type="constant",
    seed=1,
    adam_beta1=0.9,
    adam_beta2=0.99,
    adam_epsilon=1e-8,
    weight_decay=0.0,
    max_grad_norm=1.0,
    save_strategy="steps",
    save_steps=50,
    num_generations=8,
    per_device_train_batch_size=128,
    steps_per_generation=1,
    num_iterations=1,
    temperature=1.0,
    max_completion_length=16,
    mask_truncated_completions=True,
    top_k=0,
    top_p=1.0,
    epsilon=0.2,
    epsilon_high=0.2,
    delta=3.0,
    loss_type="dapo",
    scale_rewards="group",
    beta=0.0,
    vllm_importance_sampling_correction=False,
    eval_strategy="steps",
    eval_steps=10,
)
`);
  });

  it('grpo-calc, grpo-guess: the episode budget, the turn limit and per-action length listed', () => {
    for (const [preset, budget] of [
      ['grpo-calc', 4 * 14],
      ['grpo-guess', 7 * 3],
    ] as const) {
      const e = trl(defaultsOf(preset));
      // The calc presets sample at 0.3, with dynamic sampling and pass@k evaluations TRL does not have.
      expect(e.kwargs).toEqual({ ...episodes(preset, budget), temperature: 0.3 });
      expect(kinds(e.unmapped)).toEqual([
        'preset:none',
        'maxNew:none',
        'maxTurns:none',
        'filterGroups:none',
        'maxGenBatches:none',
        'policyLoss.name:default',
        'policyLoss.logRatioClamp:none',
        'entropyBonus.kind:default',
        'advantage.estimator:default',
        'advantage.epsilon:none',
        'maskZeroAdvantage:none',
        'kl.estimator:default',
        'evalN:none',
        'evalSamples:none',
      ]);
      expect(unmapped(e, 'maxTurns')[0].reason).toMatch(/max_tool_calling_iterations/);
    }
  });

  it('grpo-code: one action of 50 ids', () => {
    const e = trl(defaultsOf('grpo-code'));
    expect(e.kwargs).toEqual({ ...episodes('grpo-code', 50), temperature: 0.3 });
    expect(kinds(e.unmapped).slice(0, 4)).toEqual([
      'preset:none',
      'maxTurns:default',
      'filterGroups:none',
      'maxGenBatches:none',
    ]);
  });

  it('ppo-arith: trl.experimental.ppo PPOConfig, one completion per query, KL off; the dual clip and clamp listed', () => {
    const e = trl(defaultsOf('ppo-arith'));
    expect([e.className, e.module]).toEqual(['PPOConfig', 'trl.experimental.ppo']);
    expect(e.kwargs).toEqual(PPO_ARITH);
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'truncation:default',
      'topK:default',
      'topP:default',
      'policyLoss.name:default',
      'policyLoss.dualClip:none',
      'policyLoss.logRatioClamp:none',
      'aggregation.mode:default',
      'shiftMean:default',
      'kl.estimator:default',
      'entropyBonus.kind:default',
      'importance.kind:default',
      'evalEvery:none',
      'evalN:none',
    ]);
    expect(e.python.split('\n')[0]).toBe('from trl.experimental.ppo import PPOConfig');
  });

  it('ppo-calc: 8 × 8 responses, the episodes listed', () => {
    const e = trl(defaultsOf('ppo-calc'));
    expect(e.kwargs).toEqual({
      ...PPO_ARITH,
      output_dir: 'dewpoint-ppo-calc',
      save_steps: 10,
      total_episodes: 150 * 64,
      per_device_train_batch_size: 64,
      response_length: 56,
      temperature: 0.3,
    });
    expect(kinds(e.unmapped).slice(0, 3)).toEqual(['preset:none', 'maxNew:none', 'maxTurns:none']);
  });

  it('dpo-arith: DPOConfig with the NLL term as loss_type sft (rpo_alpha is gone)', () => {
    const e = trl(defaultsOf('dpo-arith'));
    expect(e.className).toBe('DPOConfig');
    expect(e.kwargs).toEqual({
      ...LAUNCH,
      output_dir: 'dewpoint-dpo-arith',
      max_steps: 150,
      ...OPTIM,
      save_strategy: 'steps',
      save_steps: 50,
      per_device_train_batch_size: 16,
      beta: 0.1,
      loss_type: ['sigmoid', 'sft'],
      loss_weights: [1, 1],
    });
    expect(e.python).toContain('    loss_type=["sigmoid", "sft"],\n    loss_weights=[1.0, 1.0],\n');
    expect(kinds(e.unmapped)).toEqual([
      'preset:none',
      'loss.labelSmoothing:default',
      'samplesPerPrompt:none',
      'temperature:none',
      'maxNew:none',
      'evalEvery:none',
      'evalN:none',
    ]);
  });

  it('refuses SFT and Flow-GRPO with a reason', () => {
    for (const preset of ['sft-arith', 'flowgrpo-2d'] as const) {
      const r = trlConfig(defaultsOf(preset));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(preset === 'sft-arith' ? /SFTTrainer/ : /rectified-flow/);
    }
  });
});

describe('trlConfig: options', () => {
  it('clip-higher is epsilon/epsilon_high; a dual clip is δ when above 1 + ε_high; compat trl has neither', () => {
    const hi = grpo({ policyLoss: { name: 'ppo', clipLow: 0.2, clipHigh: 0.28, dualClip: 5 } });
    expect([hi.kwargs.epsilon, hi.kwargs.epsilon_high, hi.kwargs.delta]).toEqual([0.2, 0.28, 5]);
    const plain = grpo({ policyLoss: { name: 'ppo', compat: 'trl' } });
    expect('delta' in plain.kwargs).toBe(false);
    expect(plain.unmapped.filter((u) => u.path.startsWith('policyLoss'))).toMatchObject([
      { path: 'policyLoss.name', kind: 'default' },
      { path: 'policyLoss.compat', kind: 'resolved' },
    ]);
    expect(grpo({ policyLoss: { name: 'ppo', delta: 2, compat: 'trl' } }).kwargs.delta).toBe(2);
    const low = grpo({ policyLoss: { name: 'ppo', dualClip: 1.1, delta: 1.5 } });
    expect(low.kwargs.delta).toBe(1.5);
    expect(kinds(unmapped(low, 'policyLoss.dualClip'))).toEqual(['policyLoss.dualClip:none']);
  });

  it('an lr schedule per optimizer step (the warmup × updates per batch); the overlong buffer listed as a reward function', () => {
    const e = grpo({ lrSchedule: 'cosine', lrWarmup: 5, minLrRatio: 0.1, epochs: 2, overlongBuffer: 4 });
    expect([e.kwargs.lr_scheduler_type, e.kwargs.warmup_steps, e.kwargs.lr_scheduler_kwargs]).toEqual([
      'cosine_with_min_lr',
      10,
      { min_lr_rate: 0.1 },
    ]);
    expect(kinds(unmapped(e, 'overlongBuffer'))).toEqual(['overlongBuffer:none']);
    expect(unmapped(e, 'overlongPenalty')[0].reason).toMatch(/get_soft_overlong_punishment/);
    expect(grpo({ lrWarmup: 3 }).kwargs.lr_scheduler_type).toBe('constant_with_warmup');
    expect(kinds(unmapped(grpo({ filterGroups: 'success' }), 'filterGroups'))).toEqual(['filterGroups:none']);
    expect(grpo({}).kwargs.lr_scheduler_type).toBe('constant');
    expect(unmapped(grpo({ staleness: 1 }), 'staleness')[0].reason).toMatch(/staleness is always 0/);
    expect(unmapped(grpo({}), 'staleness')).toEqual([]);
  });

  it("verl's gpg and grpo_passk estimators have no GRPOConfig equivalent: listed by name", () => {
    expect(unmapped(grpo({ advantage: { estimator: 'gpg' } }), 'advantage.estimator')[0].reason).toMatch(/no GPG/);
    expect(unmapped(grpo({ advantage: { estimator: 'grpo-passk' } }), 'advantage.estimator')[0].reason).toMatch(
      /no pass@k/,
    );
    const otb = grpo({ advantage: { estimator: 'otb', handleZeroTail: false }, maskZeroAdvantage: false });
    expect(unmapped(otb, 'advantage.estimator')[0].reason).toMatch(/no per-token baseline.*optimal_token_baseline/);
    expect(unmapped(otb, 'advantage.handleZeroTail')[0]).toMatchObject({ kind: 'none', value: false });
  });

  it("gdpo is GRPOConfig's multi_objective_aggregation normalize_then_sum with reward_weights; verl's ε and whitening listed", () => {
    const e = grpo({ advantage: { estimator: 'gdpo', weights: { correct: 2, boxed: 1 } } });
    expect(e.kwargs.multi_objective_aggregation).toBe('normalize_then_sum');
    expect(e.kwargs.reward_weights).toEqual([1, 2]);
    expect(e.mapped.find((m) => m.path === 'advantage.weights.boxed')?.note).toMatch(/order boxed, correct/);
    expect(
      unmapped(grpo({ advantage: { estimator: 'gdpo', weights: { correct: 1 } } }), 'advantage.compat')[0].reason,
    ).toMatch(/not TRL's normalize_then_sum/);
    const t = grpo({ advantage: { estimator: 'gdpo', compat: 'trl', weights: { correct: 1 } } });
    expect(t.unmapped.filter((u) => u.path.startsWith('advantage') && u.kind !== 'default')).toEqual([]);
  });

  it("the off-policy sequence mask is GRPOConfig's off_policy_mask_threshold; PPOConfig has none", () => {
    const e = grpo({ offPolicyMask: 0.5 });
    expect(e.kwargs.off_policy_mask_threshold).toBe(0.5);
    expect(e.python).toContain('off_policy_mask_threshold=0.5,');
    expect(grpo({}).kwargs.off_policy_mask_threshold).toBeUndefined();
    expect(kinds(unmapped(ppo({ offPolicyMask: 0.5 }), 'offPolicyMask'))).toEqual(['offPolicyMask:none']);
  });

  it("the high-entropy token mask is GRPOConfig's top_entropy_quantile; PPOConfig has none", () => {
    const e = grpo({ topEntropyQuantile: 0.2 });
    expect(e.kwargs.top_entropy_quantile).toBe(0.2);
    expect(grpo({}).kwargs.top_entropy_quantile).toBeUndefined();
    expect(kinds(unmapped(ppo({ topEntropyQuantile: 0.2 }), 'topEntropyQuantile'))).toEqual([
      'topEntropyQuantile:none',
    ]);
  });

  it('GSPO is importance_sampling_level sequence; TRL cispo uses epsilon_high as its cap', () => {
    const g = grpo({ policyLoss: { name: 'gspo', compat: 'trl' }, aggregation: { mode: 'grpo' } });
    expect([g.kwargs.importance_sampling_level, g.kwargs.loss_type]).toEqual(['sequence', 'grpo']);
    expect(kinds(unmapped(grpo({ policyLoss: { name: 'gspo' } }), 'policyLoss.logRatioCap'))).toEqual([
      'policyLoss.logRatioCap:none',
    ]);
    const c = grpo({ policyLoss: { name: 'cispo', compat: 'trl', cap: 4 } });
    expect([c.kwargs.loss_type, c.kwargs.epsilon_high, 'epsilon' in c.kwargs]).toEqual(['cispo', 4, false]);
    expect(
      kinds(grpo({ policyLoss: { name: 'cispo' } }).unmapped.filter((u) => u.path.startsWith('policyLoss'))),
    ).toEqual(['policyLoss.name:none']);
    for (const name of ['reinforce', 'dppo_tv', 'icepop', 'geo_mean', 'clip_cov', 'kl_cov'] as const)
      expect(kinds(unmapped(grpo({ policyLoss: { name } }), 'policyLoss.name'))).toEqual(['policyLoss.name:none']);
    expect(kinds(unmapped(grpo({ policyLoss: { name: 'dro', beta: 0.1 } }), 'policyLoss.name'))).toEqual([
      'policyLoss.name:none',
    ]);
  });

  it('sapo is loss_type sapo with its temperatures; it aggregates like grpo and TRL does not clamp', () => {
    const s = grpo({ policyLoss: { name: 'sapo', tauNeg: 2, compat: 'trl' }, aggregation: { mode: 'grpo' } });
    expect([s.kwargs.loss_type, s.kwargs.sapo_temperature_pos, s.kwargs.sapo_temperature_neg]).toEqual(['sapo', 1, 2]);
    expect(kinds(unmapped(s, 'aggregation.mode'))).toEqual(['aggregation.mode:default']);
    const v = grpo({ policyLoss: { name: 'sapo' } });
    expect(kinds([...unmapped(v, 'policyLoss.compat'), ...unmapped(v, 'aggregation.mode')])).toEqual([
      'policyLoss.compat:none',
      'aggregation.mode:none',
    ]);
    expect(unmapped(v, 'aggregation.mode')[0].reason).toMatch(/always aggregates like grpo/);
  });

  it('vespo is loss_type vespo with its four parameters; it aggregates like dapo and folds IS weights into w', () => {
    const v = grpo({ policyLoss: { name: 'vespo', kPos: 1, lambdaNeg: 4 } });
    expect(
      ['loss_type', 'vespo_k_pos', 'vespo_lambda_pos', 'vespo_k_neg', 'vespo_lambda_neg'].map((k) => v.kwargs[k]),
    ).toEqual(['vespo', 1, 3, 3, 4]);
    expect(kinds(unmapped(v, 'aggregation.mode'))).toEqual(['aggregation.mode:default']);
    const t = grpo({
      policyLoss: { name: 'vespo' },
      importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false },
      aggregation: { mode: 'seq-mean-token-mean' },
    });
    expect(kinds(unmapped(t, 'aggregation.mode'))).toEqual(['aggregation.mode:none']);
    expect(unmapped(t, 'importance.kind')[0].reason).toMatch(/folds the sampler's token ratios/);
  });

  it("luspo is gspo's sequence ratio with seq-mean-token-sum; without gspo that mode has no loss_type", () => {
    const l = grpo({ policyLoss: { name: 'gspo', compat: 'trl' }, aggregation: { mode: 'seq-mean-token-sum' } });
    expect([l.kwargs.loss_type, l.kwargs.importance_sampling_level]).toEqual(['luspo', 'sequence']);
    const p = grpo({ aggregation: { mode: 'seq-mean-token-sum' } });
    expect(p.kwargs.loss_type).toBeUndefined();
    expect(kinds(unmapped(p, 'aggregation.mode'))).toEqual(['aggregation.mode:none']);
  });

  it('aggregation modes onto loss_type; the ones GRPOConfig lacks are listed', () => {
    const lt = (a: GrpoRunOptions['aggregation']) => grpo({ aggregation: a }).kwargs.loss_type;
    expect(
      (['token-mean', 'grpo', 'seq-mean-token-mean', 'session-mean', 'dr_grpo'] as const).map((mode) => lt({ mode })),
    ).toEqual(['dapo', 'grpo', 'grpo', 'grpo', 'dr_grpo']);
    for (const mode of ['token-sum', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const) {
      const e = grpo({ aggregation: { mode } });
      expect('loss_type' in e.kwargs).toBe(false);
      expect(kinds(unmapped(e, 'aggregation.mode'))).toEqual(['aggregation.mode:none']);
    }
    expect(
      kinds(
        unmapped(
          grpo({ aggregation: { mode: 'dr_grpo', maxCompletionLength: 16 } }),
          'aggregation.maxCompletionLength',
        ),
      ),
    ).toEqual(['aggregation.maxCompletionLength:default']);
    expect(
      kinds(
        unmapped(
          grpo({ aggregation: { mode: 'dr_grpo', maxCompletionLength: 32 } }),
          'aggregation.maxCompletionLength',
        ),
      ),
    ).toEqual(['aggregation.maxCompletionLength:none']);
  });

  it("scale_rewards group/batch/none; compat trl's advantage defaults are TRL's own; RLOO and REINFORCE++ are listed", () => {
    expect(
      (['group', 'batch', 'none'] as const).map(
        (scale) => grpo({ advantage: { estimator: 'grpo', scale } }).kwargs.scale_rewards,
      ),
    ).toEqual(['group', 'batch', 'none']);
    const t = grpo({ advantage: { estimator: 'grpo', compat: 'trl' }, truncation: 'score' });
    expect(kinds(t.unmapped.filter((u) => u.path.startsWith('advantage')))).toEqual([
      'advantage.estimator:default',
      'advantage.compat:resolved',
    ]);
    expect(
      kinds(unmapped(grpo({ advantage: { estimator: 'grpo', stdType: 'population' } }), 'advantage.stdType')),
    ).toEqual(['advantage.stdType:none']);
    const r = grpo({ advantage: { estimator: 'rloo', normalize: true } });
    expect(kinds(r.unmapped.filter((u) => u.path.startsWith('advantage')))).toEqual([
      'advantage.estimator:none',
      'advantage.normalize:none',
    ]);
    expect('scale_rewards' in r.kwargs).toBe(false);
    expect(kinds(unmapped(grpo({ advantage: { estimator: 'reinforce++-baseline' } }), 'advantage.estimator'))).toEqual([
      'advantage.estimator:none',
    ]);
  });

  it("KL: β on TRL's unclamped k3 only", () => {
    const k3 = grpo({ beta: 0.04, kl: { estimator: 'k3', compat: 'trl' } });
    expect(k3.kwargs.beta).toBe(0.04);
    expect(kinds(k3.unmapped.filter((u) => u.path.startsWith('kl')))).toEqual([
      'kl.estimator:default',
      'kl.compat:resolved',
    ]);
    expect(grpo({ beta: 0.04, kl: { estimator: 'k3' } }).unmapped.filter((u) => u.path.startsWith('kl'))).toMatchObject(
      [
        { path: 'kl.estimator', kind: 'default' },
        { path: 'kl.compat', value: 'verl', kind: 'none', unset: true },
      ],
    );
    for (const estimator of ['k1', 'abs', 'k2', 'k1+', 'abs+', 'k2+', 'k3+'] as const)
      expect(kinds(unmapped(grpo({ beta: 0.04, kl: { estimator } }), 'kl.estimator'))).toEqual(['kl.estimator:none']);
  });

  it('IS weights onto the vLLM IS modes; rejection masks are listed', () => {
    const tis = grpo({ importance: { kind: 'tis', level: 'token', cap: 2, batchNormalize: false } });
    expect([
      tis.kwargs.vllm_importance_sampling_correction,
      tis.kwargs.vllm_importance_sampling_mode,
      tis.kwargs.vllm_importance_sampling_clip_max,
    ]).toEqual([true, 'token_truncate', 2]);
    const band = grpo({ importance: { kind: 'band', level: 'sequence', low: 0.5, high: 5, batchNormalize: true } });
    expect([
      band.kwargs.vllm_importance_sampling_mode,
      band.kwargs.vllm_importance_sampling_clip_min,
      band.kwargs.vllm_importance_sampling_clip_max,
    ]).toEqual(['sequence_mask', 0.5, 5]);
    expect(kinds(unmapped(band, 'importance.batchNormalize'))).toEqual(['importance.batchNormalize:none']);
    expect(
      kinds(
        grpo({ rejection: { token_k1: 2, seq_mean_k3: 0.01 } }).unmapped.filter((u) => u.path.startsWith('rejection')),
      ),
    ).toEqual(['rejection.token_k1:none', 'rejection.seq_mean_k3:none']);
  });

  it('mini-batches and epochs multiply max_steps and the step counts; an eval batch holds whole groups', () => {
    const e = grpo({ miniBatches: 4, epochs: 2, checkpointEvery: 0 });
    expect([
      e.kwargs.per_device_train_batch_size,
      e.kwargs.steps_per_generation,
      e.kwargs.num_iterations,
      e.kwargs.max_steps,
      e.kwargs.eval_steps,
      e.kwargs.save_steps,
    ]).toEqual([32, 4, 2, 1200, 80, 1200]);
    const three = grpo({ miniBatches: 3 });
    expect([three.kwargs.per_device_train_batch_size, three.kwargs.steps_per_generation]).toEqual([128, 1]);
    expect(kinds(unmapped(three, 'miniBatches'))).toEqual(['miniBatches:none']);
    expect(grpo({ group: 6, prompts: 4 }).kwargs.per_device_eval_batch_size).toBe(6);
    expect(grpo({ evalEvery: 0 }).kwargs.eval_strategy).toBe('no');
    expect(kinds(unmapped(grpo({ trainProblems: 16 }), 'trainProblems'))).toEqual(['trainProblems:none']);
  });

  it('PPOConfig: one symmetric cliprange; other losses, IS weights and top-k are listed', () => {
    const asym = ppo({ policyLoss: { name: 'ppo', clipHigh: 0.28, compat: 'trl' }, topK: 5 });
    expect(asym.kwargs.cliprange).toBe(0.2);
    expect(kinds(asym.unmapped.filter((u) => u.path.startsWith('policyLoss') || u.path === 'topK'))).toEqual([
      'topK:none',
      'policyLoss.name:default',
      'policyLoss.clipHigh:none',
      'policyLoss.compat:resolved',
    ]);
    expect(kinds(unmapped(ppo({ policyLoss: { name: 'gspo' } }), 'policyLoss.name'))).toEqual(['policyLoss.name:none']);
    expect(kinds(unmapped(ppo({ beta: 0.1 }), 'beta'))).toEqual(['beta:none']);
    expect('kl_coef' in ppo({ beta: 0.1 }).kwargs).toBe(false);
    expect(ppo({ valueCoefficient: 0.1, valueClip: 0.5 }).kwargs).toMatchObject({ vf_coef: 0.1, cliprange_value: 0.5 });
  });

  it("LoRA is PEFT's LoraConfig passed to the trainer, named in words with its dropout", () => {
    const e = grpo({ loraRank: 8, loraAlpha: 16, loraDropout: 0.05 });
    const peft = unmapped(e, 'loraRank')[0];
    expect(peft.kind).toBe('none');
    expect(JSON.stringify(peft)).toContain(
      "LoraConfig(r=8, lora_alpha=16, target_modules='all-linear', lora_dropout=0.05)",
    );
    expect(kinds(unmapped(e, 'loraDropout'))).toEqual(['loraDropout:none']);
    expect(JSON.stringify(unmapped(grpo({ loraRank: 2 }), 'loraRank'))).toContain('lora_dropout=0)');
  });

  it('per-layer recomputation is gradient_checkpointing, set only when the run sets it', () => {
    expect(grpo({ recomputeLayers: true }).kwargs.gradient_checkpointing).toBe(true);
    expect(dpo({ recomputeLayers: false }).kwargs.gradient_checkpointing).toBe(false);
    expect('gradient_checkpointing' in grpo({}).kwargs).toBe(false);
  });

  it('DPO loss types and label smoothing', () => {
    const robust = dpo({ loss: { type: 'robust', labelSmoothing: 0.1 }, nllWeight: 0.5 });
    expect(robust.kwargs).toMatchObject({ loss_type: ['robust', 'sft'], loss_weights: [1, 0.5], label_smoothing: 0.1 });
    const ipo = dpo({ loss: { type: 'ipo' }, nllWeight: 0 });
    expect([ipo.kwargs.loss_type, 'loss_weights' in ipo.kwargs]).toEqual([['ipo'], false]);
    expect(dpo({ loss: { type: 'hinge' } }).kwargs.loss_type).toEqual(['hinge', 'sft']);
    expect(kinds(unmapped(dpo({ loss: { type: 'sigmoid', labelSmoothing: 0.1 } }), 'loss.labelSmoothing'))).toEqual([
      'loss.labelSmoothing:none',
    ]);
  });

  it('pythonValue writes Python literals, floats with a decimal point where TRL declares a float', () => {
    expect([
      pythonValue(true),
      pythonValue(null),
      pythonValue('dapo'),
      pythonValue(1, true),
      pythonValue(1),
      pythonValue(1e-8, true),
      pythonValue(['sigmoid', 'sft']),
      pythonValue([1, 0.5], true),
    ]).toEqual(['True', 'None', '"dapo"', '1.0', '1', '1e-8', '["sigmoid", "sft"]', '[1.0, 0.5]']);
  });
});
