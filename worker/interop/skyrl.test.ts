import { describe, expect, it } from 'vitest';
import type { RunOptions } from '../contract/options';
import { PRESETS, checkRunOptions, presetOf } from '../presets/table';
import { formatUnmapped, hydraValue, optionLeaves } from './index';
import { skyrlCommand, SKYRL_ENTRY, type SkyrlExport } from './skyrl';
import { VARIANTS } from './testing/variants';

/**
 * Every override key the translator may write, each a field path of SkyRLTrainConfig in
 * NovaSky-AI/SkyRL @ a956457 skyrl/train/config/config.py (checked by walking its dataclasses from
 * `SkyRLTrainConfig` field by field): a key outside this list is a key SkyRL's strict parse refuses.
 */
const SKYRL_KEYS = new Set([
  'data.train_data',
  'data.val_data',
  'environment.env_class',
  'generator.apply_overlong_filtering',
  'generator.eval_n_samples_per_prompt',
  'generator.eval_sampling_params.max_generate_length',
  'generator.eval_sampling_params.temperature',
  'generator.eval_sampling_params.top_k',
  'generator.eval_sampling_params.top_p',
  'generator.n_samples_per_prompt',
  'generator.sampling_params.max_generate_length',
  'generator.sampling_params.temperature',
  'generator.sampling_params.top_k',
  'generator.sampling_params.top_p',
  'trainer.algorithm.advantage_batch_normalize',
  'trainer.algorithm.advantage_estimator',
  'trainer.algorithm.cispo.cispo_eps_clip_high',
  'trainer.algorithm.cispo.cispo_eps_clip_low',
  'trainer.algorithm.clip_cov.clip_cov_lb',
  'trainer.algorithm.clip_cov.clip_cov_ub',
  'trainer.algorithm.clip_cov.clip_ratio',
  'trainer.algorithm.clip_ratio_c',
  'trainer.algorithm.dppo.delta_high',
  'trainer.algorithm.dppo.delta_low',
  'trainer.algorithm.dppo.dppo_type',
  'trainer.algorithm.dynamic_sampling.max_sample_batches',
  'trainer.algorithm.dynamic_sampling.type',
  'trainer.algorithm.eps_clip_high',
  'trainer.algorithm.eps_clip_low',
  'trainer.algorithm.gamma',
  'trainer.algorithm.grpo_norm_by_std',
  'trainer.algorithm.kl_cov.kl_cov_frac',
  'trainer.algorithm.kl_cov.ppo_kl_coef',
  'trainer.algorithm.kl_estimator_type',
  'trainer.algorithm.kl_loss_coef',
  'trainer.algorithm.lambd',
  'trainer.algorithm.loss_reduction',
  'trainer.algorithm.max_seq_len',
  'trainer.algorithm.off_policy_correction.sequence_tis_ratio_clip_high',
  'trainer.algorithm.off_policy_correction.tis_ratio_type',
  'trainer.algorithm.off_policy_correction.token_mask_is_threshold_high',
  'trainer.algorithm.off_policy_correction.token_mask_is_threshold_low',
  'trainer.algorithm.off_policy_correction.token_tis_ratio_clip_high',
  'trainer.algorithm.policy_loss_type',
  'trainer.algorithm.sapo.tau_neg',
  'trainer.algorithm.sapo.tau_pos',
  'trainer.algorithm.use_kl_loss',
  'trainer.algorithm.use_entropy_loss',
  'trainer.algorithm.entropy_loss_coef',
  'trainer.algorithm.value_clip',
  'trainer.algorithm.zero_variance_filter',
  'trainer.ckpt_interval',
  'trainer.critic.model.path',
  'trainer.critic.optimizer_config.adam_betas',
  'trainer.critic.optimizer_config.lr',
  'trainer.critic.optimizer_config.max_grad_norm',
  'trainer.critic.optimizer_config.num_warmup_steps',
  'trainer.critic.optimizer_config.scheduler',
  'trainer.critic.optimizer_config.weight_decay',
  'trainer.critic_mini_batch_size',
  'trainer.epochs',
  'trainer.eval_before_train',
  'trainer.eval_interval',
  'trainer.gradient_checkpointing',
  'trainer.logger',
  'trainer.max_training_steps',
  'trainer.micro_forward_batch_size_per_gpu',
  'trainer.micro_train_batch_size_per_gpu',
  'trainer.policy.model.lora.alpha',
  'trainer.policy.model.lora.dropout',
  'trainer.policy.model.lora.rank',
  'trainer.policy.model.lora.target_modules',
  'trainer.policy.model.path',
  'trainer.policy.optimizer_config.adam_betas',
  'trainer.policy.optimizer_config.lr',
  'trainer.policy.optimizer_config.max_grad_norm',
  'trainer.policy.optimizer_config.num_warmup_steps',
  'trainer.policy.optimizer_config.scheduler',
  'trainer.policy.optimizer_config.weight_decay',
  'trainer.policy_mini_batch_size',
  'trainer.seed',
  'trainer.train_batch_size',
  'trainer.update_epochs_per_batch',
]);
/** SkyRL's PolicyLossType and AdvantageEstimator values (skyrl/backends/skyrl_train/utils/ppo_utils.py @ a956457). */
const POLICY_LOSSES = [
  'regular',
  'dual_clip',
  'gspo',
  'cispo',
  'rollout_is',
  'clip_cov',
  'kl_cov',
  'sapo',
  'importance_sampling',
  'dppo',
];
const ESTIMATORS = ['gae', 'grpo', 'rloo', 'reinforce++', 'maxrl'];
const REDUCTIONS = ['token_mean', 'sequence_mean', 'seq_mean_token_sum_norm', 'prompt_mean'];

const defaults = (name: string) => PRESETS.find((p) => p.name === name)!.defaults as RunOptions;
const exported = (o: RunOptions): SkyrlExport => {
  const r = skyrlCommand(o);
  if (!r.ok) throw new Error(r.reason);
  return r;
};
/** The override's value for `key`, as written (undefined: not written). */
const valueOf = (r: SkyrlExport, key: string) =>
  r.overrides.find((s) => s.startsWith(`${key}=`))?.slice(key.length + 1);

describe('SkyRL launch', () => {
  it('grpo-arith: the batch, the sampling, the loss and the run length under their SkyRL keys, with the bundle placeholders', () => {
    const o = defaults('grpo-arith') as Extract<RunOptions, { prompts: number }>;
    const r = exported(o);
    expect(r.command.startsWith(`${SKYRL_ENTRY} \\\n    "data.train_data=['$TRAIN_FILES']"`)).toBe(true);
    const want: Record<string, string> = {
      'trainer.train_batch_size': String(o.prompts),
      'generator.n_samples_per_prompt': String(o.group),
      'trainer.max_training_steps': String(o.steps),
      'trainer.policy.optimizer_config.lr': String(o.lr),
      'generator.sampling_params.temperature': String(o.temperature),
      'generator.sampling_params.max_generate_length': String(o.maxNew),
      'trainer.algorithm.advantage_estimator': 'grpo',
      // Dewpoint's ppo loss under compat verl: dual clip 3, ε 0.2 both sides.
      'trainer.algorithm.policy_loss_type': 'dual_clip',
      'trainer.algorithm.clip_ratio_c': '3',
      'trainer.algorithm.eps_clip_low': '0.2',
      'trainer.algorithm.eps_clip_high': '0.2',
      'trainer.algorithm.loss_reduction': 'token_mean',
      'trainer.algorithm.use_kl_loss': String(o.beta > 0),
      'trainer.policy.model.path': '$MODEL_PATH',
      'environment.env_class': 'dewpoint_reward',
    };
    for (const [key, v] of Object.entries(want)) expect(valueOf(r, key), key).toBe(v);
    expect(r.launch).toContain("data.val_data=['$VAL_FILES']");
  });

  it('each option is mapped or listed, each key exists in SkyRL, each mapped value is what was written', () => {
    let n = 0;
    for (const [name, o] of Object.entries(VARIANTS)) {
      expect(checkRunOptions(o), name).toEqual([]);
      const r = skyrlCommand(o);
      if (!r.ok) {
        const family = presetOf(o).family;
        expect(['sft', 'flow', 'dpo'].includes(family), `${name}: ${r.reason}`).toBe(true);
        continue;
      }
      n++;
      const paths = new Set([...r.mapped.map((m) => m.path), ...r.unmapped.map((u) => u.path)]);
      expect(
        optionLeaves(o).filter((l) => !paths.has(l.path)),
        `${name}: options neither mapped nor listed`,
      ).toEqual([]);
      for (const u of r.unmapped) expect(u.reason.length, `${name} ${u.path}`).toBeGreaterThan(10);
      const keys = r.overrides.map((s) => s.slice(0, s.indexOf('=')));
      expect(
        keys.filter((k) => !SKYRL_KEYS.has(k)),
        name,
      ).toEqual([]);
      expect(new Set(keys).size, `${name}: a key written twice`).toBe(keys.length);
      for (const m of r.mapped)
        expect(r.overrides, `${name} ${m.path}`).toContain(
          `${m.key}=${hydraValue(m.to as Parameters<typeof hydraValue>[0])}`,
        );
      expect(POLICY_LOSSES, name).toContain(valueOf(r, 'trainer.algorithm.policy_loss_type') ?? 'regular');
      expect(ESTIMATORS, name).toContain(valueOf(r, 'trainer.algorithm.advantage_estimator') ?? 'grpo');
      expect(REDUCTIONS, name).toContain(valueOf(r, 'trainer.algorithm.loss_reduction') ?? 'token_mean');
      // validate_batch_sizes: the batch divides into mini-batches, the mini-batch into micro-batches.
      const P = Number(valueOf(r, 'trainer.train_batch_size'));
      const mini = Number(valueOf(r, 'trainer.policy_mini_batch_size'));
      const G = Number(valueOf(r, 'generator.n_samples_per_prompt'));
      expect(P % mini, name).toBe(0);
      expect((mini * G) % Number(valueOf(r, 'trainer.micro_train_batch_size_per_gpu')), name).toBe(0);
      // SkyRL requires max_seq_len with seq_mean_token_sum_norm (validate_cfg).
      if (valueOf(r, 'trainer.algorithm.loss_reduction') === 'seq_mean_token_sum_norm')
        expect(valueOf(r, 'trainer.algorithm.max_seq_len'), name).toBeDefined();
    }
    expect(n).toBeGreaterThan(50);
  });

  it('an option SkyRL lacks is listed by name with its reason, and the launch keeps its default', () => {
    const base = defaults('grpo-arith') as Extract<RunOptions, { prompts: number }>;
    const geo = exported({ ...base, policyLoss: { name: 'geo_mean', clipLow: 0.4 } } as RunOptions);
    expect(formatUnmapped(geo.unmapped)).toContain(
      'policyLoss.name = geo_mean [no equivalent]: SkyRL has no geo_mean (GMPO) loss; its default regular PPO runs instead',
    );
    expect(valueOf(geo, 'trainer.algorithm.policy_loss_type')).toBeUndefined();
    const sum = exported({ ...base, aggregation: { mode: 'token-sum' } } as RunOptions);
    expect(sum.unmapped.find((u) => u.path === 'aggregation.mode')?.reason).toMatch(
      /no token sum: it runs token_mean$/,
    );
    expect(valueOf(sum, 'trainer.algorithm.loss_reduction')).toBeUndefined();
    const eps = exported({ ...base, eps: 1e-6 } as RunOptions);
    expect(eps.unmapped.find((u) => u.path === 'eps')).toMatchObject({ kind: 'none', value: 1e-6 });
    // OTB: SkyRL computes no Σπ², so it has no per-token baseline; the launch runs grpo.
    const otb = exported({ ...base, advantage: { estimator: 'otb' }, maskZeroAdvantage: false } as RunOptions);
    expect(otb.unmapped.find((u) => u.path === 'advantage.estimator')).toMatchObject({
      kind: 'none',
      value: 'otb',
      reason: expect.stringMatching(/no per-token baseline.*optimal_token_baseline.*Σπ²/),
    });
    expect(valueOf(otb, 'trainer.algorithm.advantage_estimator')).toBe('grpo');
  });

  it('refuses DPO by name (SkyRL has no DPO trainer), SFT and Flow-GRPO', () => {
    expect(skyrlCommand(defaults('dpo-arith'))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^dpo-arith is DPO: SkyRL has no DPO trainer/),
    });
    expect(skyrlCommand(defaults('sft-arith'))).toMatchObject({ ok: false, reason: expect.stringContaining('not RL') });
    expect(skyrlCommand(defaults('flowgrpo-2d'))).toMatchObject({ ok: false });
  });
});
