/**
 * A run's options as TRL keyword arguments: `GRPOConfig` for the GRPO-family presets, `DPOConfig`
 * for dpo-arith, `PPOConfig` (trl.experimental.ppo: a policy with a value head, GAE, clipped value
 * loss) for ppo-arith and ppo-calc; the constructor call as Python source; and every option TRL
 * cannot take listed with its reason (types.ts). SFT and Flow-GRPO give `{ ok: false, reason }`.
 *
 * Keywords checked against huggingface/trl @ f2cd57710ae345ea6428ae95363267fcf38a3dc8
 * (2026-07-24, 1.10.0.dev0): trl/trainer/grpo_config.py (loss_type grpo/bnpo/dr_grpo/dapo/cispo,
 * scale_rewards group/batch/none, epsilon/epsilon_high/delta, importance_sampling_level,
 * mask_truncated_completions, vllm_importance_sampling_* modes and bounds, steps_per_generation ×
 * per_device_train_batch_size = generation_batch_size), trl/trainer/grpo_trainer.py (generation
 * every steps_per_generation × num_iterations micro-steps, logits divided by the temperature,
 * sequence-level IS as exp of the summed log-ratio), trl/trainer/dpo_config.py and dpo_trainer.py
 * (loss_type is a list with loss_weights; `sft` is the token-mean NLL on the chosen completions,
 * rpo_alpha is gone; sigmoid has no label smoothing since 0.29, robust keeps it),
 * trl/trainer/base_config.py (bf16 defaults to True), trl/experimental/ppo/ppo_config.py and
 * ppo_trainer.py (cliprange, vf_coef, cliprange_value, gamma, lam, num_mini_batches,
 * num_ppo_epochs, total_episodes; KL as a reward penalty kl_coef/kl_estimator; top-k/top-p
 * fixed off; one optimizer step per mini-batch with gradient_accumulation_steps 1). Semantics:
 * docs/rl-formulas.md. GRPO's RLOO has no GRPOConfig equivalent (TRL's RLOOConfig trains a
 * sequence-level ratio with KL in the reward), so it is listed, not mapped to RLOOConfig.
 */
import type {
  DpoRunOptions,
  EpisodeGrpoRunOptions,
  GrpoRunOptions,
  PpoEnvRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
  RunOptions,
} from '../contract/options';
import { advantageSettings, isSet, lossSettings } from './resolve';
import { isFamily, presetOf } from '../presets/table';
import { environmentUnmapped, taskOf, unsupported } from './tasks';
import { MappingLog, bound, type ExportFailure, type Mapped, type Unmapped } from './types';
import type { RlRunOptions } from './verl';

export type TrlClassName = 'GRPOConfig' | 'DPOConfig' | 'PPOConfig';

export interface TrlExport {
  ok: true;
  className: TrlClassName;
  /** The module to import it from. */
  module: 'trl' | 'trl.experimental.ppo';
  /** The keyword arguments in order (Python values as JSON: null is None). */
  kwargs: Record<string, unknown>;
  /** `from … import …` and the constructor call. */
  python: string;
  /** Keywords that stand for no option (output_dir, bf16=False for float32 training, no accumulation). */
  launch: string[];
  mapped: Mapped[];
  unmapped: Unmapped[];
}

/** Keywords TRL declares as floats: written with a decimal point (`1.0`), as Python would show them. */
const FLOATS = new Set([
  'learning_rate',
  'adam_beta1',
  'adam_beta2',
  'adam_epsilon',
  'weight_decay',
  'max_grad_norm',
  'temperature',
  'top_p',
  'beta',
  'epsilon',
  'epsilon_high',
  'delta',
  'label_smoothing',
  'vf_coef',
  'cliprange',
  'cliprange_value',
  'gamma',
  'lam',
  'kl_coef',
  'vllm_importance_sampling_clip_max',
  'vllm_importance_sampling_clip_min',
  'off_policy_mask_threshold',
  'top_entropy_quantile',
  'loss_weights',
  'entropy_coef',
  'entropy_coef_min',
  'entropy_coef_max',
  'entropy_coef_delta',
  'entropy_target',
]);

export function pythonValue(v: unknown, float = false): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return float && Number.isInteger(v) ? `${v}.0` : String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map((x) => pythonValue(x, float)).join(', ')}]`;
  // A dict of keyword arguments (lr_scheduler_kwargs): its numbers are floats.
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pythonValue(x, true)}`)
      .join(', ')}}`;
  throw new Error(`pythonValue: no Python literal for ${JSON.stringify(v)}`);
}

export function trlConfig(options: RunOptions): TrlExport | ExportFailure {
  const refused = unsupported(options, 'trl');
  if (refused !== null) return { ok: false, reason: refused };
  const b = new Builder(options.preset);
  if (isFamily(options, 'dpo')) dpo(options, b);
  else if (isFamily(options, 'ppo')) ppo(options, b);
  else grpo(options as GrpoRunOptions | EpisodeGrpoRunOptions, b);
  return b.result(isFamily(options, 'dpo') ? 'DPOConfig' : isFamily(options, 'ppo') ? 'PPOConfig' : 'GRPOConfig');
}

class Builder {
  readonly log = new MappingLog();
  private readonly kwargs = new Map<string, unknown>();
  private readonly launch = new Set<string>();

  constructor(preset: string) {
    this.fixed('output_dir', `dewpoint-${preset}`);
    this.fixed('bf16', false); // Dewpoint trains in float32; TRL's base config defaults bf16 to True
    this.fixed('gradient_accumulation_steps', 1);
  }

  set(path: string, value: unknown, key: string, to: unknown, note?: string): void {
    this.log.map(path, value, key, to, note);
    this.kwargs.set(key, to);
  }

  fixed(key: string, to: unknown): void {
    this.kwargs.set(key, to);
    this.launch.add(key);
  }

  noneAll(prefix: string, obj: object, reason: string): void {
    this.log.noneAll(prefix, obj, reason);
  }

  result(className: TrlClassName): TrlExport {
    const module = className === 'PPOConfig' ? 'trl.experimental.ppo' : 'trl';
    const args = [...this.kwargs].map(([k, v]) => `    ${k}=${pythonValue(v, FLOATS.has(k))},`);
    return {
      ok: true,
      className,
      module,
      kwargs: Object.fromEntries(this.kwargs),
      python: `from ${module} import ${className}\n\nconfig = ${className}(\n${args.join('\n')}\n)\n`,
      launch: [...this.launch],
      mapped: this.log.mapped,
      unmapped: this.log.unmapped,
    };
  }
}

/** Run length, optimizer and checkpoints, shared by the three configs; `k` optimizer steps per Dewpoint step. */
function common(o: RlRunOptions | DpoRunOptions, b: Builder, k: number, stepsKey: 'max_steps' | null): void {
  if (stepsKey)
    b.set(
      'steps',
      o.steps,
      stepsKey,
      o.steps * k,
      k === 1 ? undefined : `optimizer steps: ${o.steps} sampled batches × ${k} updates each`,
    );
  b.set('lr', o.lr, 'learning_rate', o.lr);
  // DPO has no schedule options: they read as absent.
  const rl: Partial<Pick<RlRunOptions, 'lrSchedule' | 'lrWarmup' | 'minLrRatio'>> = o as RlRunOptions;
  if (rl.lrSchedule !== undefined || rl.lrWarmup !== undefined) {
    // TrainingArguments schedules per optimizer step, Dewpoint (as verl) per sampled batch of k steps.
    const per =
      k === 1
        ? undefined
        : `per optimizer step: ${rl.lrWarmup ?? 0} batches × ${k} updates each; within a batch TRL's lr moves, Dewpoint's does not`;
    const cosine = rl.lrSchedule === 'cosine';
    b.set(
      'lrSchedule',
      rl.lrSchedule ?? 'constant',
      'lr_scheduler_type',
      cosine ? 'cosine_with_min_lr' : 'constant_with_warmup',
    );
    b.set('lrWarmup', rl.lrWarmup ?? 0, 'warmup_steps', (rl.lrWarmup ?? 0) * k, per);
    if (cosine) b.set('minLrRatio', rl.minLrRatio ?? 0, 'lr_scheduler_kwargs', { min_lr_rate: rl.minLrRatio ?? 0 });
  } else
    b.set(
      'lr',
      o.lr,
      'lr_scheduler_type',
      'constant',
      "Dewpoint's learning rate is constant; TrainingArguments decays linearly by default",
    );
  b.set('seed', o.seed, 'seed', o.seed, 'the same number seeds another generator: the samples differ');
  b.set('beta1', o.beta1, 'adam_beta1', o.beta1);
  b.set('beta2', o.beta2, 'adam_beta2', o.beta2);
  b.set('eps', o.eps, 'adam_epsilon', o.eps);
  b.set(
    'weightDecay',
    o.weightDecay,
    'weight_decay',
    o.weightDecay,
    o.weightDecay > 0
      ? 'TRL (transformers) decays every parameter but biases and norms; Dewpoint only the matrices'
      : undefined,
  );
  b.set('maxGradNorm', o.maxGradNorm, 'max_grad_norm', o.maxGradNorm);
  if (o.loraRank !== undefined) {
    // PEFT's LoraConfig is the trainer's peft_config argument, not a field of the config: named in words.
    const alpha = o.loraAlpha ?? o.loraRank;
    const targets = o.loraTargets ?? 'all-linear';
    const modules =
      targets === 'all-linear'
        ? "'all-linear'"
        : `[${targets
            .split(',')
            .map((t) => `'${t}'`)
            .join(', ')}]`;
    const config = `r=${o.loraRank}, lora_alpha=${alpha}, target_modules=${modules}, lora_dropout=${o.loraDropout ?? 0}`;
    const peft = `pass peft_config=LoraConfig(${config}) to the trainer`;
    b.log.none('loraRank', o.loraRank, peft);
    b.log.none('loraAlpha', alpha, peft);
    b.log.none('loraTargets', targets, peft);
    if (o.loraDropout) b.log.none('loraDropout', o.loraDropout, peft);
  }
  if (o.recomputeLayers !== undefined)
    b.set('recomputeLayers', o.recomputeLayers, 'gradient_checkpointing', o.recomputeLayers);
  if (o.idsPerPass !== undefined)
    b.log.none(
      'idsPerPass',
      o.idsPerPass,
      "a memory setting of this machine: TRL's micro-batches are per_device_train_batch_size samples, not ids",
    );
  if (o.frozenWeights !== undefined)
    b.log.none(
      'frozenWeights',
      o.frozenWeights,
      "a memory setting of this machine: TRL loads its reference in model_init_kwargs' dtype",
    );
  const every = o.checkpointEvery > 0 ? o.checkpointEvery : o.steps;
  b.set('checkpointEvery', o.checkpointEvery, 'save_strategy', 'steps');
  b.set(
    'checkpointEvery',
    o.checkpointEvery,
    'save_steps',
    every * k,
    o.checkpointEvery > 0 ? undefined : '0 = at the end only: once, after the last step',
  );
}

function sampling(o: RlRunOptions, b: Builder, lengthKey: 'max_completion_length' | 'response_length'): void {
  // TRL divides the logits by the temperature when it scores them, as Dewpoint's trainer does: one policy.
  b.set('temperature', o.temperature, 'temperature', o.temperature);
  const turns = 'maxTurns' in o ? o.maxTurns : 1;
  if (turns > 1) {
    b.set('maxNew', o.maxNew, lengthKey, o.maxNew * turns, `the whole episode's budget, ${turns} × ${o.maxNew}`);
    b.log.none('maxNew', o.maxNew, 'a limit per action: TRL bounds the whole completion');
  } else b.set('maxNew', o.maxNew, lengthKey, o.maxNew);
  if ('maxTurns' in o) {
    if (turns > 1)
      b.log.none(
        'maxTurns',
        turns,
        lengthKey === 'response_length'
          ? "TRL's PPO has no multi-turn episodes"
          : "Dewpoint's environment is not a TRL config: GRPOTrainer runs tool-calling episodes from its `tools` " +
              'argument (max_tool_calling_iterations bounds them), which this export cannot write',
      );
    else b.log.asDefault('maxTurns', 1, 'one action per episode: a single-turn completion');
  }
  if ('envErrorLimit' in o && o.envErrorLimit !== undefined)
    b.log.none(
      'envErrorLimit',
      o.envErrorLimit,
      'TRL has no share of failed episodes that stops a run: an exception in a reward function or tool fails the step',
    );
  if ('renormalize' in o && o.renormalize !== undefined) {
    if (o.renormalize)
      b.log.none(
        'renormalize',
        true,
        'TRL scores the full softmax (at the temperature); no renormalisation over the top-k/top-p support',
      );
    else b.log.asDefault('renormalize', false, 'the full softmax, as TRL');
  }
  if (o.truncation === 'mask' && lengthKey === 'response_length')
    b.log.none(
      'truncation',
      'mask',
      "TRL's PPO trains truncated responses on their score (missing_eos_penalty is a reward change, not a mask)",
    );
  else if (lengthKey === 'response_length')
    b.log.asDefault('truncation', 'score', 'truncated responses are trained on their score, as TRL PPO');
  else
    b.set(
      'truncation',
      o.truncation,
      'mask_truncated_completions',
      o.truncation === 'mask',
      o.truncation === 'mask'
        ? "TRL still counts them in their group's reward statistics; Dewpoint leaves them out of the group"
        : undefined,
    );
  if (o.filterGroups) {
    const why = "TRL's trainers have no dynamic sampling (DAPO's filter_groups): every sampled group trains";
    b.log.none('filterGroups', o.filterGroups, why);
    b.log.none('maxGenBatches', o.maxGenBatches ?? 10, why);
  }
  if (o.staleness)
    b.log.none(
      'staleness',
      o.staleness,
      "TRL's GRPOTrainer and PPOTrainer generate and train in turn (vLLM colocated or served, weights synced every " +
        'step): no rollout runs ahead of the weights, the staleness is always 0',
    );
  if (o.samplerWorker)
    b.log.none('samplerWorker', true, 'with no batch sampled ahead (above) there is nothing to sample in a worker');
  if (o.samplerBf16)
    b.log.none(
      'samplerBf16',
      true,
      "the mismatch lab's injected gap has no option: TRL's vLLM holds the weights it was synced",
    );
  if (o.samplerTemperature !== undefined)
    b.log.none(
      'samplerTemperature',
      o.samplerTemperature,
      "the mismatch lab's injected gap has no option: TRL samples and scores at GRPOConfig temperature",
    );
  if (o.overlongBuffer !== undefined) {
    const why =
      "DAPO's soft overlong punishment is a reward function in TRL, not a config option: add " +
      'trl.rewards.get_soft_overlong_punishment(max_completion_len, soft_punish_cache) to reward_funcs';
    b.log.none('overlongBuffer', o.overlongBuffer, why);
    b.log.none('overlongPenalty', o.overlongPenalty ?? 1, why);
  }
}

function taskReason(o: RlRunOptions, trainer: string): string {
  const turns =
    'maxTurns' in o && o.maxTurns > 1 ? '; the environment would be a set of tools passed to GRPOTrainer' : '';
  return `the task (${taskOf(o)}) is not a config option: pass train_dataset and ${trainer}${turns}`;
}

function grpo(o: GrpoRunOptions | EpisodeGrpoRunOptions, b: Builder): void {
  const P = o.prompts;
  const G = o.group;
  const M = o.miniBatches;
  const total = P * G;
  b.log.none(
    'preset',
    o.preset,
    taskReason(
      o,
      presetOf(o).export.reward === 'code'
        ? 'reward_funcs (one that runs the program on the cases) to GRPOTrainer'
        : 'reward_funcs to GRPOTrainer',
    ),
  );
  environmentUnmapped(o, b.log, 'trl');
  const split = total % M === 0;
  const k = (split ? M : 1) * o.epochs;
  common(o, b, k, 'max_steps');
  b.set('group', G, 'num_generations', G);
  b.set(
    'prompts',
    P,
    'per_device_train_batch_size',
    split ? total / M : total,
    `completions per optimizer step (one process): the generation batch is steps_per_generation × this = ${P} prompts × ${G}`,
  );
  if (split)
    b.set(
      'miniBatches',
      M,
      'steps_per_generation',
      M,
      `${M} optimizer steps of ${total / M} completions per generation batch`,
    );
  else {
    b.set('miniBatches', M, 'steps_per_generation', 1);
    b.log.none(
      'miniBatches',
      M,
      `TRL splits the generation batch into equal slices: ${total} completions do not split into ${M} (exported as one)`,
    );
  }
  b.set('epochs', o.epochs, 'num_iterations', o.epochs);
  sampling(o, b, 'max_completion_length');
  b.set('topK', o.topK, 'top_k', o.topK, o.topK === 0 ? 'off (TRL 0 too)' : undefined);
  b.set('topP', o.topP, 'top_p', o.topP);
  if ('trainProblems' in o && o.trainProblems !== undefined)
    b.log.none(
      'trainProblems',
      o.trainProblems,
      'no config key: pass train_dataset=dataset.select(range(N)) (TRL passes over it in epochs)',
    );
  const fixed = grpoLoss(o, b);
  grpoAggregation(o, b, fixed);
  entropyBonus(o, b);
  grpoAdvantage(o, b);
  kl(o, b, true);
  importance(o, b);
  if (o.topEntropyQuantile !== undefined)
    b.set(
      'topEntropyQuantile',
      o.topEntropyQuantile,
      'top_entropy_quantile',
      o.topEntropyQuantile,
      "TRL's quantile is over the micro-batch gathered across processes; Dewpoint's over the update's mini-batch",
    );
  if (o.offPolicyMask !== undefined)
    b.set(
      'offPolicyMask',
      o.offPolicyMask,
      'off_policy_mask_threshold',
      o.offPolicyMask,
      "TRL's drift is against vLLM's sampling log-probs with use_vllm, else the old ones; Dewpoint's against its sampler's",
    );
  for (const [name, value] of Object.entries(o.rejection))
    if (value !== undefined)
      b.log.none(
        `rejection.${name}`,
        value,
        'TRL has no rejection masks on the trainer/sampler ratio (off_policy_mask_threshold and the *_mask IS modes are other rules)',
      );
  b.set(
    'evalEvery',
    o.evalEvery,
    'eval_strategy',
    o.evalEvery > 0 ? 'steps' : 'no',
    o.evalEvery > 0
      ? "TRL evaluates the reward functions on eval_dataset with sampled completions; Dewpoint's is greedy exact match"
      : undefined,
  );
  if (o.evalEvery > 0) b.set('evalEvery', o.evalEvery, 'eval_steps', o.evalEvery * k);
  // GRPOConfig refuses an eval batch (default 8 per device) that does not hold whole groups.
  if (o.evalEvery > 0 && 8 % G !== 0) b.fixed('per_device_eval_batch_size', G);
  b.log.none('evalN', o.evalN, 'no config key: the size of eval_dataset');
  if (o.evalSamples)
    b.log.none(
      'evalSamples',
      o.evalSamples,
      'TRL evaluates num_generations sampled completions per eval prompt and logs their mean reward (pass@1 at the ' +
        'temperature); it has no pass@k',
    );
}

/**
 * A TRL `loss_type` that is a loss of its own (cispo, sapo) also fixes the aggregation: the mode
 * it aggregates like, and how TRL's docs name that.
 */
interface FixedAggregation {
  lossType: string;
  mode: GrpoRunOptions['aggregation']['mode'];
  like: string;
}

/** Maps the policy loss; returns the aggregation its TRL loss_type fixes, or null where loss_type names the aggregation. */
function grpoLoss(o: RlRunOptions, b: Builder): FixedAggregation | null {
  const p = o.policyLoss;
  const s = lossSettings(p);
  const compat = (what: string) => {
    if ('compat' in p && p.compat !== undefined) b.log.resolved('policyLoss.compat', p.compat, what);
  };
  const clips = (low: number, high: number) => {
    b.set('policyLoss.clipLow', low, 'epsilon', low, isSet(p, 'clipLow') ? undefined : "unset: Dewpoint's default");
    b.set('policyLoss.clipHigh', high, 'epsilon_high', high, isSet(p, 'clipHigh') ? undefined : 'unset: ε low, as TRL');
  };
  if (s.name === 'ppo') {
    b.log.asDefault(
      'policyLoss.name',
      'ppo',
      "GRPOConfig's loss is the clipped surrogate (loss_type names its aggregation)",
    );
    clips(s.clipLow, s.clipHigh);
    // verl's dual clip at c equals TRL's δ = c when c > 1 + ε_high (both bound −A·r at −A·c for A < 0).
    const dual = s.dualClip > 1 + s.clipHigh ? s.dualClip : Infinity;
    if (Number.isFinite(s.dualClip) && !Number.isFinite(dual))
      b.log.none(
        'policyLoss.dualClip',
        s.dualClip,
        `a dual clip ≤ 1 + ε_high (${1 + s.clipHigh}) has no TRL δ equivalent`,
        !isSet(p, 'dualClip'),
      );
    const delta = Math.min(dual, s.delta);
    if (Number.isFinite(delta)) {
      if (Number.isFinite(dual))
        b.set(
          'policyLoss.dualClip',
          s.dualClip,
          'delta',
          delta,
          `${isSet(p, 'dualClip') ? '' : 'unset: 3 under compat verl; '}verl's dual clip at c > 1 + ε_high is TRL's two-sided δ = c`,
        );
      if (Number.isFinite(s.delta))
        b.set(
          'policyLoss.delta',
          s.delta,
          'delta',
          delta,
          delta < s.delta ? `the dual clip ${delta} binds first` : undefined,
        );
    }
    if (Number.isFinite(s.logRatioClamp))
      b.log.none(
        'policyLoss.logRatioClamp',
        s.logRatioClamp,
        'TRL does not clamp logp − old before exp',
        !isSet(p, 'logRatioClamp'),
      );
    else if (isSet(p, 'logRatioClamp')) b.log.asDefault('policyLoss.logRatioClamp', 'none', 'no clamp, as TRL');
    compat(`resolved: dual clip ${bound(s.dualClip)}, log-ratio clamp ${bound(s.logRatioClamp)}`);
    return null;
  }
  if (s.name === 'gspo') {
    b.set(
      'policyLoss.name',
      'gspo',
      'importance_sampling_level',
      'sequence',
      'GSPO: the ratio exp(mean log-ratio) per sequence; loss_type names its aggregation',
    );
    clips(s.clipLow, s.clipHigh);
    if (Number.isFinite(s.logRatioCap))
      b.log.none(
        'policyLoss.logRatioCap',
        s.logRatioCap,
        'TRL does not cap the sequence log-ratio',
        !isSet(p, 'logRatioCap'),
      );
    compat(`resolved: log-ratio cap ${bound(s.logRatioCap)}`);
    return null;
  }
  if (s.name === 'cispo' && s.compat === 'trl') {
    b.set(
      'policyLoss.name',
      'cispo',
      'loss_type',
      'cispo',
      "TRL's cispo: −sg(min(r, cap))·A·logp, aggregated like dapo",
    );
    b.set(
      isSet(p, 'cap') ? 'policyLoss.cap' : 'policyLoss.compat',
      s.cap,
      'epsilon_high',
      s.cap,
      'the absolute cap (not 1 + ε)',
    );
    const q = p as Extract<typeof p, { name: 'cispo' }>;
    for (const key of ['clipLow', 'clipHigh'] as const)
      if (isSet(q, key)) b.log.asDefault(`policyLoss.${key}`, q[key], 'unused under compat trl (TRL caps above only)');
    if (isSet(p, 'cap')) compat("trl: TRL's upper cap");
    return { lossType: 'cispo', mode: 'token-mean', like: 'dapo (token-mean)' };
  }
  if (s.name === 'sapo') {
    b.set('policyLoss.name', 'sapo', 'loss_type', 'sapo', "TRL's sapo: −A·σ(τ(r − 1))·4/τ, aggregated like grpo");
    b.set(
      'policyLoss.tauPos',
      s.tauPos,
      'sapo_temperature_pos',
      s.tauPos,
      isSet(p, 'tauPos') ? undefined : 'unset: 1, as TRL',
    );
    b.set(
      'policyLoss.tauNeg',
      s.tauNeg,
      'sapo_temperature_neg',
      s.tauNeg,
      isSet(p, 'tauNeg') ? undefined : 'unset: 1.05, as TRL',
    );
    if (s.compat === 'verl')
      b.log.none('policyLoss.compat', 'verl', 'TRL does not clamp logp − old before exp', !isSet(p, 'compat'));
    else compat('trl: no clamp, as TRL');
    return { lossType: 'sapo', mode: 'grpo', like: 'grpo (each row’s token mean, averaged over the rows)' };
  }
  if (s.name === 'vespo') {
    b.set('policyLoss.name', 'vespo', 'loss_type', 'vespo', "TRL's vespo: −sg(φ(w))·A·logp, aggregated like dapo");
    const keys = [
      ['kPos', 'vespo_k_pos', 2],
      ['lambdaPos', 'vespo_lambda_pos', 3],
      ['kNeg', 'vespo_k_neg', 3],
      ['lambdaNeg', 'vespo_lambda_neg', 2],
    ] as const;
    for (const [key, to, d] of keys)
      b.set(`policyLoss.${key}`, s[key], to, s[key], isSet(p, key) ? undefined : `unset: ${d}, as TRL`);
    if (o.importance.kind !== 'off')
      b.log.none(
        'importance.kind',
        o.importance.kind,
        "TRL's vespo folds the sampler's token ratios into the sequence ratio w instead of weighing the loss; Dewpoint weighs per token",
      );
    return { lossType: 'vespo', mode: 'token-mean', like: 'dapo (token-mean)' };
  }
  const why: Record<string, string> = {
    cispo: "verl/rLLM's cispo clips both sides around 1; TRL's caps above only (use compat trl)",
    reinforce: 'GRPOConfig has no plain REINFORCE loss (−A·logp without a ratio)',
    dppo_tv: 'TRL has no DPPO loss',
    dppo_kl: 'TRL has no DPPO loss',
    icepop: "TRL has no IcePop loss (vllm_importance_sampling_mode='token_mask' is an IS weight, see importance)",
    reinforce_kl: 'TRL has no reinforce_kl (rLLM)',
    geo_mean: 'TRL has no GMPO loss (the geometric mean of the token ratios); verl has geo_mean',
    clip_cov: 'TRL has no Clip-Cov loss (dropping high-covariance tokens); verl has clip_cov',
    kl_cov: 'TRL has no KL-Cov loss (a KL penalty on high-covariance tokens); verl has kl_cov',
    dro: 'TRL has no DRO loss (REINFORCE with a quadratic log-ratio penalty); verl has dro',
  };
  b.noneAll('policyLoss', p, why[s.name]);
  return null;
}

/**
 * The entropy bonus: TRL subtracts entropy_coef × the mean per-token entropy over the optimizer
 * step's tokens (× the high-entropy mask), whatever the loss type (grpo_trainer.py _compute_loss),
 * Dewpoint's 'token-mean'; adaptive: use_adaptive_entropy with its bounds, step and target.
 */
function entropyBonus(o: GrpoRunOptions | EpisodeGrpoRunOptions, b: Builder): void {
  const e = o.entropyBonus;
  if (e.kind === 'off') return b.log.asDefault('entropyBonus.kind', 'off', 'no entropy bonus (TRL entropy_coef 0)');
  if (e.kind === 'static') {
    if (e.aggregation === 'loss' && (o.aggregation.mode !== 'token-mean' || o.topEntropyQuantile !== undefined))
      return b.noneAll(
        'entropyBonus',
        e,
        "TRL's entropy term is a token mean over the step's tokens (with the high-entropy mask), not the policy's " +
          `aggregation (${o.aggregation.mode}${o.topEntropyQuantile !== undefined ? ', over every token' : ''} here)`,
      );
    b.log.resolved('entropyBonus.kind', 'static', 'a static coefficient: entropy_coef without use_adaptive_entropy');
    b.set('entropyBonus.coef', e.coef, 'entropy_coef', e.coef, "times the step's mean token entropy");
    b.log.resolved('entropyBonus.aggregation', e.aggregation, "TRL's token mean over the step's tokens");
    return;
  }
  b.set('entropyBonus.kind', 'adaptive', 'use_adaptive_entropy', true);
  b.set('entropyBonus.coef', e.coef, 'entropy_coef', e.coef, 'the starting coefficient');
  b.set('entropyBonus.min', e.min, 'entropy_coef_min', e.min);
  b.set('entropyBonus.max', e.max, 'entropy_coef_max', e.max);
  b.set('entropyBonus.delta', e.delta, 'entropy_coef_delta', e.delta);
  b.set('entropyBonus.target', e.target, 'entropy_target', e.target);
}

function grpoAggregation(o: GrpoRunOptions | EpisodeGrpoRunOptions, b: Builder, fixed: FixedAggregation | null): void {
  const a = o.aggregation;
  if (fixed) {
    if (a.mode === fixed.mode)
      b.log.asDefault('aggregation.mode', a.mode, `TRL's ${fixed.lossType} aggregates like ${fixed.like}`);
    else b.log.none('aggregation.mode', a.mode, `TRL's ${fixed.lossType} always aggregates like ${fixed.like}`);
    return;
  }
  switch (a.mode) {
    case 'token-mean':
      b.set(
        'aggregation.mode',
        a.mode,
        'loss_type',
        'dapo',
        'token-mean over the optimizer step (bnpo is the same with one process and no accumulation)',
      );
      return;
    case 'grpo':
      b.set('aggregation.mode', a.mode, 'loss_type', 'grpo');
      return;
    case 'seq-mean-token-sum':
      // TRL's luspo is no loss of its own: GSPO's sequence-level surrogate, each sequence's loss times its length.
      if (o.policyLoss.name !== 'gspo') break;
      b.set(
        'aggregation.mode',
        a.mode,
        'loss_type',
        'luspo',
        "LUSPO: with gspo's sequence ratio, each sequence's loss times its length, averaged over the rows (TRL also counts empty rows)",
      );
      return;
    case 'seq-mean-token-mean':
    case 'session-mean':
      b.set(
        'aggregation.mode',
        a.mode,
        'loss_type',
        'grpo',
        `TRL's grpo also counts fully masked rows in the mean${a.mode === 'session-mean' ? '; equal when each session packs as one sequence' : ''}`,
      );
      return;
    case 'dr_grpo': {
      b.set('aggregation.mode', a.mode, 'loss_type', 'dr_grpo', 'L_max is max_completion_length');
      const limit = 'maxTurns' in o && o.maxTurns > 1 ? o.maxNew * o.maxTurns : o.maxNew;
      if (a.maxCompletionLength === undefined)
        b.log.none(
          'aggregation.maxCompletionLength',
          'the batch width',
          `L_max defaults to the packed batch width; TRL divides by max_completion_length (${limit})`,
          true,
        );
      else if (a.maxCompletionLength === limit)
        b.log.asDefault(
          'aggregation.maxCompletionLength',
          limit,
          'TRL divides by max_completion_length, the same number',
        );
      else
        b.log.none(
          'aggregation.maxCompletionLength',
          a.maxCompletionLength,
          `TRL divides by max_completion_length (${limit}), which is also the generation limit`,
        );
      return;
    }
  }
  b.noneAll(
    'aggregation',
    a,
    `GRPOConfig has no loss_type for ${a.mode} (grpo, bnpo, dr_grpo, dapo; luspo is seq-mean-token-sum with gspo)`,
  );
}

function grpoAdvantage(o: GrpoRunOptions | EpisodeGrpoRunOptions, b: Builder): void {
  const a = o.advantage;
  const s = advantageSettings(a);
  if (s.estimator === 'gdpo') {
    // TRL f2cd577 GRPOTrainer: multi_objective_aggregation="normalize_then_sum", one reward function per component.
    b.set('advantage.estimator', 'gdpo', 'multi_objective_aggregation', 'normalize_then_sum');
    const names = s.weights.map(([k]) => k);
    for (const [k, w] of s.weights)
      b.set(
        `advantage.weights.${k}`,
        w,
        'reward_weights',
        s.weights.map(([, x]) => x),
        `one reward function per component, reward_funcs in the order ${names.join(', ')}`,
      );
    if (s.scale === 'none')
      b.log.none('advantage.scale', 'none', 'normalize_then_sum always divides each component by its std + 1e-4');
    else if (isSet(a, 'scale')) b.log.asDefault('advantage.scale', 'group', 'normalize_then_sum divides by the std');
    if (s.compat === 'verl')
      b.log.none(
        'advantage.compat',
        'verl',
        "verl's gdpo (ε 1e-6, a singleton r/(1+ε), whitening weighted by tokens) is not TRL's normalize_then_sum",
        !isSet(a, 'compat'),
      );
    else b.log.asDefault('advantage.compat', 'trl', "TRL's normalize_then_sum");
  } else if (s.estimator !== 'grpo') {
    b.noneAll(
      'advantage',
      a,
      s.estimator === 'rloo'
        ? "GRPOConfig has no RLOO estimator (TRL's RLOOTrainer uses a sequence-level ratio and puts the KL in the reward)"
        : s.estimator === 'gpg'
          ? "TRL has no GPG advantage (verl's gpg: α·(r − group mean), α = batch / non-zero rewards)"
          : s.estimator === 'grpo-passk'
            ? "TRL has no pass@k advantage (verl's grpo_passk: only each group's best sample learns)"
            : s.estimator === 'otb' || s.estimator === 'otb-tir'
              ? "TRL has no per-token baseline (verl's optimal_token_baseline: the group's reward-to-go weighted by the " +
                "path variance 1 − 2π + Σπ², from Σπ² that TRL's log-prob pass does not compute); GRPOConfig's advantage is one per completion"
              : 'TRL has no REINFORCE++-baseline estimator',
    );
  } else {
    b.log.asDefault('advantage.estimator', 'grpo', "GRPOConfig's group-relative advantage");
    b.set('advantage.scale', s.scale, 'scale_rewards', s.scale, isSet(a, 'scale') ? undefined : 'unset: group');
    if (s.stdType === 'population')
      b.log.none('advantage.stdType', 'population', 'TRL uses an unbiased std (ddof 1)', !isSet(a, 'stdType'));
    else if (isSet(a, 'stdType')) b.log.asDefault('advantage.stdType', 'unbiased', 'unbiased, as TRL');
    if (s.scale !== 'none') {
      if (s.epsilon !== 1e-4)
        b.log.none('advantage.epsilon', s.epsilon, 'TRL adds 1e-4 to the std (not configurable)', !isSet(a, 'epsilon'));
      else if (isSet(a, 'epsilon')) b.log.asDefault('advantage.epsilon', 1e-4, 'TRL adds 1e-4');
    } else if (isSet(a, 'epsilon')) b.log.asDefault('advantage.epsilon', s.epsilon, 'unused without std scaling');
    // A group of one arises only when truncated completions leave their group; TRL keeps them in it.
    if (isSet(a, 'singleton') || (s.singleton === 'raw' && o.truncation === 'mask')) {
      if (s.singleton === 'zero')
        b.log.asDefault(
          'advantage.singleton',
          'zero',
          'TRL gives a one-member group 0 (and never forms one: truncated completions stay in their group)',
        );
      else
        b.log.none(
          'advantage.singleton',
          'raw',
          'TRL never keeps a raw score for a one-member group (it gives 0)',
          !isSet(a, 'singleton'),
        );
    }
    if ('compat' in a && a.compat !== undefined)
      b.log.resolved(
        'advantage.compat',
        a.compat,
        'fills the estimator options left unset; each is exported or listed here',
      );
  }
  if (o.maskZeroAdvantage)
    b.log.none(
      'maskZeroAdvantage',
      true,
      'TRL keeps all-equal groups in the loss (advantage 0, their tokens in the normaliser); no option masks them',
    );
  else b.log.asDefault('maskZeroAdvantage', false, 'all-equal groups stay in the loss with advantage 0, as TRL');
}

/** KL to the reference: GRPOConfig's β on TRL's unclamped k3 loss term (`asLoss`), PPOConfig's reward penalty. */
function kl(o: RlRunOptions, b: Builder, asLoss: boolean): void {
  const k = o.kl;
  if (!asLoss) {
    if (o.beta === 0) b.set('beta', 0, 'kl_coef', 0, "β = 0: no KL (TRL's PPO KL is a reward penalty)");
    else
      b.log.none(
        'beta',
        o.beta,
        "TRL's PPO puts the KL into the per-token reward (kl_coef, k1 or k3); Dewpoint adds it to the loss",
      );
    if (o.beta === 0) b.log.asDefault('kl.estimator', k.estimator, 'unused at β = 0');
    else b.log.none('kl.estimator', k.estimator, 'the reward-penalty KL (kl_estimator) is not a loss term');
    if (k.compat !== undefined)
      b.log.resolved('kl.compat', k.compat, o.beta === 0 ? 'unused at β = 0' : 'see kl.estimator');
    return;
  }
  b.set('beta', o.beta, 'beta', o.beta, o.beta > 0 ? undefined : 'β = 0: no reference model');
  if (o.beta === 0) {
    b.log.asDefault('kl.estimator', k.estimator, 'unused at β = 0');
    if (k.compat !== undefined) b.log.resolved('kl.compat', k.compat, 'unused at β = 0');
    return;
  }
  if (o.aggregation.mode !== 'token-mean')
    b.log.none(
      'beta',
      o.beta,
      `TRL adds the KL per token before the loss_type aggregation (${o.aggregation.mode}); Dewpoint takes its token-mean`,
    );
  if (k.estimator !== 'k3') {
    b.log.none('kl.estimator', k.estimator, "TRL's only KL estimator is k3 (unclamped)");
    if (k.compat !== undefined) b.log.resolved('kl.compat', k.compat, 'see kl.estimator');
    return;
  }
  b.log.asDefault('kl.estimator', 'k3', "TRL's k3 loss term");
  const compat = k.compat ?? 'verl';
  if (compat !== 'trl')
    b.log.none(
      'kl.compat',
      compat,
      "Dewpoint's k3 under compat verl/rllm clamps the log-ratio to ±20 and the value to ±10; TRL's k3 is unclamped",
      k.compat === undefined,
    );
  else b.log.resolved('kl.compat', 'trl', "TRL's unclamped k3");
}

function importance(o: RlRunOptions, b: Builder): void {
  const imp = o.importance;
  const note = 'TRL corrects only a vLLM sampler (use_vllm=True): old / sampling log-probs, as Dewpoint';
  if (imp.kind === 'off') {
    b.set(
      'importance.kind',
      'off',
      'vllm_importance_sampling_correction',
      false,
      'no IS weights (TRL applies them by default with vLLM)',
    );
    return;
  }
  const mode = `${imp.level}_${imp.kind === 'tis' ? 'truncate' : 'mask'}`;
  b.set('importance.kind', imp.kind, 'vllm_importance_sampling_correction', true, note);
  b.set('importance.kind', imp.kind, 'vllm_importance_sampling_mode', mode);
  b.set(
    'importance.level',
    imp.level,
    'vllm_importance_sampling_mode',
    mode,
    imp.level === 'sequence' ? 'exp of the summed log-ratio, as Dewpoint' : undefined,
  );
  if (imp.kind === 'tis') {
    b.set('importance.cap', imp.cap, 'vllm_importance_sampling_clip_max', imp.cap, 'w = min(ratio, cap)');
  } else if (imp.low < imp.high) {
    b.set(
      'importance.low',
      imp.low,
      'vllm_importance_sampling_clip_min',
      imp.low,
      'the ratio inside [low, high], 0 outside',
    );
    b.set('importance.high', imp.high, 'vllm_importance_sampling_clip_max', imp.high);
  } else {
    b.log.none('importance.low', imp.low, 'TRL needs clip_min < clip_max');
    b.log.none('importance.high', imp.high, 'TRL needs clip_min < clip_max');
  }
  if (imp.batchNormalize)
    b.log.none('importance.batchNormalize', true, 'TRL does not renormalise the IS weights to mean 1');
  else b.log.asDefault('importance.batchNormalize', false, 'raw weights, as TRL');
}

function ppo(o: PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions, b: Builder): void {
  const P = o.prompts;
  const G = o.group;
  const M = o.miniBatches;
  const total = P * G;
  const episodes = 'maxTurns' in o && o.maxTurns > 1 ? "; TRL's PPO has no multi-turn episodes" : '';
  b.log.none(
    'preset',
    o.preset,
    `the task (${taskOf(o)}) is not a config option: pass train_dataset (each prompt ${G} times: TRL's ` +
      `PPO samples one response per query) and a reward_model to PPOTrainer${episodes}`,
  );
  environmentUnmapped(o, b.log, 'trl');
  b.fixed('stop_token', 'eos');
  common(o, b, 1, null);
  b.set('steps', o.steps, 'total_episodes', o.steps * total, `${o.steps} batches × ${total} responses`);
  b.set(
    'prompts',
    P,
    'per_device_train_batch_size',
    total,
    `the rollout batch, ${P} prompts × ${G} (one process, no accumulation)`,
  );
  b.set('group', G, 'per_device_train_batch_size', total, 'repeat each prompt G times in train_dataset');
  if (total % M === 0)
    b.set('miniBatches', M, 'num_mini_batches', M, `one optimizer step per mini-batch of ${total / M}`);
  else {
    b.set('miniBatches', M, 'num_mini_batches', 1);
    b.log.none(
      'miniBatches',
      M,
      `TRL splits the batch into equal mini-batches: ${total} does not split into ${M} (exported as one)`,
    );
  }
  b.set('epochs', o.epochs, 'num_ppo_epochs', o.epochs);
  sampling(o, b, 'response_length');
  for (const [key, off] of [
    ['topK', 0],
    ['topP', 1],
  ] as const) {
    if (o[key] === off) b.log.asDefault(key, off, "TRL's PPO samples with top_k 0 and top_p 1 (fixed)");
    else b.log.none(key, o[key], "TRL's PPO samples with top_k 0 and top_p 1 (not configurable)");
  }
  const p = o.policyLoss;
  const s = lossSettings(p);
  if (s.name === 'ppo') {
    b.log.asDefault('policyLoss.name', 'ppo', "PPOConfig's loss is the clipped surrogate");
    b.set(
      'policyLoss.clipLow',
      s.clipLow,
      'cliprange',
      s.clipLow,
      isSet(p, 'clipLow') ? undefined : "unset: Dewpoint's default",
    );
    if (s.clipHigh !== s.clipLow)
      b.log.none('policyLoss.clipHigh', s.clipHigh, "TRL's PPO has one symmetric cliprange");
    else if (isSet(p, 'clipHigh'))
      b.log.asDefault('policyLoss.clipHigh', s.clipHigh, 'equal to ε low: the symmetric cliprange');
    if (Number.isFinite(s.dualClip))
      b.log.none('policyLoss.dualClip', s.dualClip, "TRL's PPO has no dual clip", !isSet(p, 'dualClip'));
    if (Number.isFinite(s.delta)) b.log.none('policyLoss.delta', s.delta, "TRL's PPO has no δ (that is GRPOConfig's)");
    if (Number.isFinite(s.logRatioClamp))
      b.log.none(
        'policyLoss.logRatioClamp',
        s.logRatioClamp,
        "TRL's PPO does not clamp the log-ratio",
        !isSet(p, 'logRatioClamp'),
      );
    if (p.name === 'ppo' && p.compat !== undefined)
      b.log.resolved(
        'policyLoss.compat',
        p.compat,
        `resolved: dual clip ${bound(s.dualClip)}, log-ratio clamp ${bound(s.logRatioClamp)}`,
      );
  } else b.noneAll('policyLoss', p, `TRL's PPO has only the clipped surrogate (ppo), not ${s.name}`);
  if (o.aggregation.mode === 'token-mean')
    b.log.asDefault('aggregation.mode', 'token-mean', "TRL's PPO takes the masked mean over each mini-batch");
  else b.noneAll('aggregation', o.aggregation, "TRL's PPO always takes the token mean (masked_mean)");
  b.set('gamma', o.gamma, 'gamma', o.gamma);
  b.set('lam', o.lam, 'lam', o.lam);
  if (o.shiftMean) b.log.asDefault('shiftMean', true, "TRL's PPO whitens the advantages with shift_mean=True");
  else b.log.none('shiftMean', false, "TRL's PPO always re-centres the whitened advantages");
  b.set(
    'valueCoefficient',
    o.valueCoefficient,
    'vf_coef',
    o.valueCoefficient,
    'loss = pg + vf_coef · ½·masked_mean(max((v−R)², (v̂−R)²)), as Dewpoint',
  );
  b.set('valueClip', o.valueClip, 'cliprange_value', o.valueClip);
  kl(o, b, false);
  if (o.entropyBonus.kind === 'off') b.log.asDefault('entropyBonus.kind', 'off', "TRL's PPO has no entropy bonus");
  else b.noneAll('entropyBonus', o.entropyBonus, "TRL's PPO has no entropy bonus (entropy_coef is GRPOConfig's)");
  if (o.importance.kind === 'off') b.log.asDefault('importance.kind', 'off', "TRL's PPO applies no IS weights");
  else b.noneAll('importance', o.importance, "TRL's PPO has no trainer/sampler IS weights");
  for (const [name, value] of Object.entries(o.rejection))
    if (value !== undefined) b.log.none(`rejection.${name}`, value, "TRL's PPO has no rejection masks");
  if (o.offPolicyMask !== undefined)
    b.log.none(
      'offPolicyMask',
      o.offPolicyMask,
      "off_policy_mask_threshold is GRPOConfig's; TRL's PPO has no such mask",
    );
  if (o.topEntropyQuantile !== undefined)
    b.log.none(
      'topEntropyQuantile',
      o.topEntropyQuantile,
      "top_entropy_quantile is GRPOConfig's; TRL's PPO has no such mask",
    );
  if (o.evalEvery > 0)
    b.log.none(
      'evalEvery',
      o.evalEvery,
      "TRL's PPO has no held-out evaluation (num_sample_generations only logs samples)",
    );
  else b.log.asDefault('evalEvery', 0, 'no evaluation');
  b.log.none('evalN', o.evalN, "TRL's PPO has no held-out evaluation");
  if (o.evalSamples) b.log.none('evalSamples', o.evalSamples, "TRL's PPO has no held-out evaluation");
}

function dpo(o: DpoRunOptions, b: Builder): void {
  b.log.none(
    'preset',
    o.preset,
    "TRL's DPO trains on a preference dataset; Dewpoint builds its pairs online from the base model's " +
      'own samples (a correct and an incorrect completion of each addition prompt): pass those pairs as train_dataset',
  );
  common(o, b, 1, 'max_steps');
  b.set('pairs', o.pairs, 'per_device_train_batch_size', o.pairs, 'pairs per optimizer step (one process)');
  b.set('beta', o.beta, 'beta', o.beta);
  const types: string[] = [o.loss.type];
  if (o.loss.type === 'sigmoid' || o.loss.type === 'robust') {
    const ls = o.loss.labelSmoothing;
    if (o.loss.type === 'robust')
      b.set('loss.labelSmoothing', ls ?? 0, 'label_smoothing', ls ?? 0, ls === undefined ? 'unset: 0' : undefined);
    else if (ls !== undefined && ls > 0)
      b.log.none(
        'loss.labelSmoothing',
        ls,
        "TRL ≥ 0.29's sigmoid has no label smoothing (cDPO was removed; TRL ≤ 0.28 read label_smoothing)",
      );
    else if (ls !== undefined) b.log.asDefault('loss.labelSmoothing', ls, 'no smoothing, as TRL sigmoid');
  }
  if (o.nllWeight > 0) types.push('sft');
  b.set('loss.type', o.loss.type, 'loss_type', types);
  if (o.nllWeight > 0) {
    b.set(
      'nllWeight',
      o.nllWeight,
      'loss_type',
      types,
      "TRL's sft term: the token-mean NLL on the chosen completions (rpo_alpha is gone)",
    );
    b.set('nllWeight', o.nllWeight, 'loss_weights', [1, o.nllWeight]);
  } else b.set('nllWeight', 0, 'loss_type', types, 'no NLL term');
  for (const [key, why] of [
    ['samplesPerPrompt', 'completions sampled per prompt to find a pair'],
    ['temperature', 'the temperature those samples are drawn at'],
    ['maxNew', 'their length limit'],
  ] as const) {
    b.log.none(
      key,
      o[key],
      `pair construction (${why}) happens before TRL's DPO: sample the pairs when building train_dataset`,
    );
  }
  if (o.evalEvery > 0)
    b.log.none(
      'evalEvery',
      o.evalEvery,
      "Dewpoint's held-out accuracy (greedy exact match) is no DPOTrainer metric: evaluate the saved checkpoints",
    );
  else b.log.asDefault('evalEvery', 0, 'no evaluation');
  b.log.none('evalN', o.evalN, "no held-out accuracy in TRL's DPO");
}
