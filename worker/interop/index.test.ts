import { describe, expect, it } from 'vitest';
import { PRESETS, checkRunOptions, presetOf } from '../presets/table';
import {
  exportRun,
  formatUnmapped,
  hydraValue,
  optionLeaves,
  VERL_DAPO_ENTRY,
  type Mapped,
  type Unmapped,
} from './index';
import { VARIANTS } from './testing/variants';

/**
 * Every override key the translator may write, each found in verl-project/verl @ 1dda039
 * verl/trainer/config/_generated_ppo_trainer.yaml (checked by flattening that file): a key
 * outside this list is a key verl does not have.
 */
const VERL_KEYS = new Set([
  'data.train_files',
  'data.val_files',
  'data.seed',
  'data.train_batch_size',
  'data.max_response_length',
  'data.train_max_samples',
  'data.val_max_samples',
  'actor_rollout_ref.model.path',
  // LoRA (verl docs/advance/ppo_lora.rst).
  'actor_rollout_ref.model.lora_rank',
  'actor_rollout_ref.model.lora_alpha',
  'actor_rollout_ref.model.target_modules',
  'actor_rollout_ref.model.enable_gradient_checkpointing',
  // The fully asynchronous trainer's own section (verl's fully_async config: the staleness bound).
  'async_training.staleness_threshold',
  'async_training.trigger_parameter_sync_step',
  'async_training.require_batches',
  'async_training.partial_rollout',
  'async_training.use_rollout_log_probs',
  'actor_rollout_ref.rollout.name',
  // Under LoRA (volcengine/verl @ b178a3c docs/advance/ppo_lora.rst; rollout.load_format in its _generated_ppo_trainer.yaml).
  'actor_rollout_ref.rollout.load_format',
  'actor_rollout_ref.rollout.seed',
  'actor_rollout_ref.rollout.n',
  'actor_rollout_ref.rollout.temperature',
  'actor_rollout_ref.rollout.top_k',
  'actor_rollout_ref.rollout.top_p',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu',
  'actor_rollout_ref.rollout.multi_turn.enable',
  'actor_rollout_ref.rollout.multi_turn.max_assistant_turns',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu',
  'actor_rollout_ref.actor.ppo_mini_batch_size',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
  'actor_rollout_ref.actor.ppo_epochs',
  'actor_rollout_ref.actor.optim.lr',
  'actor_rollout_ref.actor.optim.betas',
  'actor_rollout_ref.actor.optim.override_optimizer_config',
  'actor_rollout_ref.actor.optim.weight_decay',
  'actor_rollout_ref.actor.optim.clip_grad',
  'actor_rollout_ref.actor.policy_loss.loss_mode',
  'actor_rollout_ref.actor.policy_loss.clip_cov_ratio',
  'actor_rollout_ref.actor.policy_loss.clip_cov_lb',
  'actor_rollout_ref.actor.policy_loss.clip_cov_ub',
  'actor_rollout_ref.actor.policy_loss.kl_cov_ratio',
  'actor_rollout_ref.actor.policy_loss.ppo_kl_coef',
  'actor_rollout_ref.actor.policy_loss.dro_beta',
  'actor_rollout_ref.actor.clip_ratio_low',
  'actor_rollout_ref.actor.clip_ratio_high',
  'actor_rollout_ref.actor.clip_ratio_c',
  'actor_rollout_ref.actor.entropy_coeff',
  'actor_rollout_ref.actor.loss_agg_mode',
  'actor_rollout_ref.actor.tau_pos',
  'actor_rollout_ref.actor.tau_neg',
  'actor_rollout_ref.actor.loss_scale_factor',
  'actor_rollout_ref.actor.use_kl_loss',
  'actor_rollout_ref.actor.kl_loss_coef',
  'actor_rollout_ref.actor.kl_loss_type',
  // OTB's Σπ² from the actor's log-prob pass (verl/workers/config/actor.py `calculate_sum_pi_squared`).
  'actor_rollout_ref.actor.calculate_sum_pi_squared',
  'critic.model.path',
  'critic.ppo_micro_batch_size_per_gpu',
  'critic.optim.lr',
  'critic.optim.betas',
  'critic.optim.override_optimizer_config',
  'critic.optim.weight_decay',
  'critic.optim.clip_grad',
  'critic.cliprange_value',
  'algorithm.adv_estimator',
  'algorithm.norm_adv_by_std_in_grpo',
  'algorithm.gamma',
  'algorithm.lam',
  'algorithm.rollout_correction.rollout_is',
  'algorithm.rollout_correction.rollout_is_threshold',
  'algorithm.rollout_correction.rollout_is_batch_normalize',
  'algorithm.rollout_correction.rollout_rs',
  'algorithm.rollout_correction.rollout_rs_threshold',
  'algorithm.rollout_correction.bypass_mode',
  'algorithm.rollout_correction.loss_type',
  'trainer.n_gpus_per_node',
  'trainer.nnodes',
  'trainer.total_training_steps',
  'trainer.total_epochs',
  'trainer.test_freq',
  'trainer.val_before_train',
  'trainer.save_freq',
  // Also in _generated_ppo_trainer.yaml @ b178a3c (the schedule and the validation's sampling).
  'actor_rollout_ref.actor.optim.lr_scheduler_type',
  'actor_rollout_ref.actor.optim.lr_warmup_steps',
  'actor_rollout_ref.actor.optim.min_lr_ratio',
  'critic.optim.lr_scheduler_type',
  'critic.optim.lr_warmup_steps',
  'critic.optim.min_lr_ratio',
  'actor_rollout_ref.rollout.val_kwargs.do_sample',
  'actor_rollout_ref.rollout.val_kwargs.n',
  'actor_rollout_ref.rollout.val_kwargs.temperature',
  'actor_rollout_ref.rollout.val_kwargs.top_k',
  'actor_rollout_ref.rollout.val_kwargs.top_p',
  'reward_model.reward_manager',
]);

/**
 * The keys verl's DAPO recipe adds (verl @ b178a3c tests/special_e2e/run_dapo.sh launches
 * `recipe.dapo.main_dapo` with them): only a command with that entry may write them.
 */
const DAPO_KEYS = new Set([
  'data.gen_batch_size',
  'algorithm.filter_groups.enable',
  'algorithm.filter_groups.metric',
  'algorithm.filter_groups.max_num_gen_batches',
  'reward_model.overlong_buffer.enable',
  'reward_model.overlong_buffer.len',
  'reward_model.overlong_buffer.penalty_factor',
]);

/**
 * Keys verl reads with `config.get` that are AlgoConfig fields (verl/trainer/config/algorithm.py) but
 * not in the generated YAML, so Hydra needs them added with `+` (verl-project/verl 1dda039
 * examples/gdpo_trainer/run_qwen3_8b_fsdp.sh writes `+algorithm.gdpo_reward_keys`).
 */
const VERL_ADDED_KEYS = new Set(['+algorithm.gdpo_reward_keys', '+algorithm.gdpo_reward_weights']);

/** transformers TrainingArguments fields every TRL config inherits. */
const TRAINING_ARGS = [
  'output_dir',
  // transformers TrainingArguments, which TRL's configs extend: the warmup and the cosine floor.
  'warmup_steps',
  'lr_scheduler_kwargs',
  'gradient_checkpointing',
  'bf16',
  'gradient_accumulation_steps',
  'max_steps',
  'learning_rate',
  'lr_scheduler_type',
  'seed',
  'adam_beta1',
  'adam_beta2',
  'adam_epsilon',
  'weight_decay',
  'max_grad_norm',
  'save_strategy',
  'save_steps',
  'per_device_train_batch_size',
  'per_device_eval_batch_size',
  'eval_strategy',
  'eval_steps',
];
/** Fields declared in huggingface/trl @ f2cd577 grpo_config.py, dpo_config.py, experimental/ppo/ppo_config.py. */
const TRL_KEYS = {
  GRPOConfig: new Set([
    ...TRAINING_ARGS,
    'num_generations',
    'steps_per_generation',
    'num_iterations',
    'temperature',
    'max_completion_length',
    'mask_truncated_completions',
    'top_k',
    'top_p',
    'epsilon',
    'epsilon_high',
    'delta',
    'loss_type',
    'scale_rewards',
    'multi_objective_aggregation',
    'reward_weights',
    'beta',
    'importance_sampling_level',
    'sapo_temperature_pos',
    'sapo_temperature_neg',
    'vespo_k_pos',
    'vespo_lambda_pos',
    'vespo_k_neg',
    'vespo_lambda_neg',
    'vllm_importance_sampling_correction',
    'vllm_importance_sampling_mode',
    'vllm_importance_sampling_clip_max',
    'vllm_importance_sampling_clip_min',
    'off_policy_mask_threshold',
    'top_entropy_quantile',
    'entropy_coef',
    'use_adaptive_entropy',
    'entropy_coef_min',
    'entropy_coef_max',
    'entropy_coef_delta',
    'entropy_target',
  ]),
  DPOConfig: new Set([...TRAINING_ARGS, 'beta', 'loss_type', 'loss_weights', 'label_smoothing']),
  PPOConfig: new Set([
    ...TRAINING_ARGS,
    'stop_token',
    'total_episodes',
    'num_mini_batches',
    'num_ppo_epochs',
    'temperature',
    'response_length',
    'cliprange',
    'gamma',
    'lam',
    'vf_coef',
    'cliprange_value',
    'kl_coef',
  ]),
};

const covered = (mapped: Mapped[], unmapped: Unmapped[]) =>
  new Set([...mapped.map((m) => m.path), ...unmapped.map((u) => u.path)]);

describe('exports cover every option', () => {
  it('every variant is a valid run', () => {
    for (const [name, o] of Object.entries(VARIANTS)) expect(checkRunOptions(o), name).toEqual([]);
  });

  it('every option a preset accepts is set by some variant, so the mapping test below reaches it', () => {
    // A person's files, not options: the dataset travels as the data files and a picked model as the
    // model path (rollouts.test.ts, verl.test.ts and trl.test.ts export both).
    const FILES = new Set(['dataset', 'base']);
    const set = new Set(Object.values(VARIANTS).flatMap((o) => Object.keys(o)));
    const options = new Set(
      PRESETS.flatMap((p) => Object.keys((p.schema as unknown as { shape: Record<string, unknown> }).shape)),
    );
    expect([...options].filter((k) => !set.has(k) && !FILES.has(k))).toEqual([]);
  });

  for (const target of ['verl', 'trl'] as const) {
    it(`${target}: each option is mapped or listed, each key exists in ${target}, each mapped value is what was written`, () => {
      let exported = 0;
      for (const [name, o] of Object.entries(VARIANTS)) {
        const r = exportRun(o, target);
        if (!r.ok) {
          // No RL-on-a-language-model equivalent (SFT, Flow-GRPO); DPO has none in verl.
          const family = presetOf(o).family;
          const refused = family === 'sft' || family === 'flow' || (target === 'verl' && family === 'dpo');
          expect(refused, `${name}: ${r.reason}`).toBe(true);
          continue;
        }
        exported++;
        const paths = covered(r.mapped, r.unmapped);
        const missing = optionLeaves(o).filter((l) => !paths.has(l.path));
        expect(missing, `${target} ${name}: options neither mapped nor listed`).toEqual([]);
        for (const u of r.unmapped) expect(u.reason.length, `${name} ${u.path}`).toBeGreaterThan(10);
        if ('overrides' in r) {
          const keys = r.overrides.map((s) => s.slice(0, s.indexOf('=')));
          const dapo = r.command.startsWith(VERL_DAPO_ENTRY);
          expect(
            keys.filter((k) => !VERL_KEYS.has(k) && !VERL_ADDED_KEYS.has(k) && !(dapo && DAPO_KEYS.has(k))),
            name,
          ).toEqual([]);
          expect(new Set(keys).size, `${name}: a key written twice`).toBe(keys.length);
          for (const m of r.mapped)
            expect(r.overrides, `${name} ${m.path}`).toContain(
              `${m.key}=${hydraValue(m.to as Parameters<typeof hydraValue>[0])}`,
            );
        } else {
          expect(
            Object.keys(r.kwargs).filter((k) => !TRL_KEYS[r.className].has(k)),
            name,
          ).toEqual([]);
          for (const m of r.mapped) expect(r.kwargs[m.key], `${name} ${m.path} → ${m.key}`).toEqual(m.to);
        }
      }
      expect(exported).toBeGreaterThan(50);
    });
  }

  it('formatUnmapped names the path, the value, unset defaults and the kind', () => {
    const r = exportRun(VARIANTS['grpo-arith defaults'], 'trl');
    if (!r.ok) throw new Error(r.reason);
    expect(formatUnmapped(r.unmapped)).toContain(
      'policyLoss.logRatioClamp = 20 (unset) [no equivalent]: TRL does not clamp logp − old before exp',
    );
    expect(formatUnmapped(r.unmapped)).toContain('kl.estimator = k3 [target default]: unused at β = 0');
  });
});
