/**
 * A run's options as a verl launch: `python3 -m verl.trainer.main_ppo` with Hydra overrides, and
 * every option verl cannot take listed with its reason (types.ts). GRPO-family presets map onto
 * the GRPO/RLOO/REINFORCE++-baseline estimators, PPO presets onto GAE with a critic; SFT,
 * Flow-GRPO and DPO have no main_ppo equivalent and give `{ ok: false, reason }`.
 *
 * Keys and names checked against verl-project/verl @ 1dda039b9c6311889a9c9a26040677e1254814f9
 * (2026-08-22, 0.10.0.dev; the volcengine/verl snapshot available stops at b178a3c, 2026-01-29,
 * before DPPO and token-sum, so the current repository is the reference): verl/trainer/config/_generated_ppo_trainer.yaml and actor/actor.yaml (the
 * keys and defaults), verl/workers/config/actor.py (loss modes, `loss_agg_mode` values),
 * verl/workers/config/optimizer.py (`optim.clip_grad`, `betas`, `override_optimizer_config`; the
 * actor's `grad_clip` is read by nothing), verl/trainer/ppo/core_algos.py (`AdvantageEstimator`,
 * `register_policy_loss` names, `kl_penalty` with the `+` straight-through suffix, dual clip
 * asserting `clip_ratio_c > 1`, GSPO forcing seq-mean-token-mean), verl/trainer/config/algorithm.py
 * and verl/trainer/ppo/rollout_corr_helper.py (`algorithm.rollout_correction.*`: IS level and
 * `"lo_hi"` thresholds, comma-separated rejection options, bypass mode forcing
 * `loss_mode=bypass_mode`), verl/trainer/ppo/v1/trainer_base.py (`save_freq`/`test_freq` also fire
 * on the last step; `train_max_samples`; the train dataloader drops an incomplete batch),
 * verl/workers/config/rollout.py (`multi_turn.max_assistant_turns`), and
 * verl/workers/engine/fsdp/transformer_impl.py (the actor scores at the rollout temperature).
 * Semantics: docs/rl-formulas.md.
 */
import type {
  AdvantageRunOptions,
  EnvRunOptions,
  EpisodeGrpoRunOptions,
  GrpoRunOptions,
  PpoEnvRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
  RunOptions,
} from '../contract/options';
import { SHAPING_COMPONENTS } from '../contract/run-options/grpo';
import { REJECTION_OPTIONS } from '../rl/index';
import { advantageSettings, isSet, lossSettings } from './resolve';
import { isFamily, presetOf } from '../presets/table';
import { environmentUnmapped, taskOf, unsupported } from './tasks';
import { MappingLog, bound, type ExportFailure, type Mapped, type Unmapped } from './types';

export type RlRunOptions =
  GrpoRunOptions | EpisodeGrpoRunOptions | EnvRunOptions | PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions;

export interface VerlExport {
  ok: true;
  /** The shell command, one override per line. */
  command: string;
  /** The Hydra overrides in order, unquoted for the shell (`actor_rollout_ref.actor.clip_ratio_c=3`). */
  overrides: string[];
  /** Overrides that stand for no option: placeholders ($MODEL_PATH, $TRAIN_FILES) and sizes verl requires. */
  launch: string[];
  mapped: Mapped[];
  unmapped: Unmapped[];
}

export const VERL_ENTRY = 'python3 -m verl.trainer.main_ppo';
/**
 * DAPO's dynamic sampling and overlong buffer are options of verl's DAPO recipe, not of main_ppo:
 * its trainer (verl-project/verl-recipe dapo/, as verl's tests/special_e2e/run_dapo.sh launches it)
 * adds `data.gen_batch_size`, `algorithm.filter_groups.*` and `reward_model.overlong_buffer.*`.
 */
export const VERL_DAPO_ENTRY = 'python3 -m recipe.dapo.main_dapo';
/** verl's fully asynchronous trainer (rollouter and trainer apart, a message queue between): Dewpoint's staleness bound. */
export const VERL_ASYNC_ENTRY = 'python3 -m verl.experimental.fully_async_policy.fully_async_main';

/** verl's `kl_loss_type` for each Dewpoint estimator: its documented names, `+` for the straight-through k2 gradient. */
export const VERL_KL_TYPE: Record<GrpoRunOptions['kl']['estimator'], string> = {
  k1: 'kl',
  abs: 'abs',
  k2: 'mse',
  k3: 'low_var_kl',
  'k1+': 'kl+',
  'abs+': 'abs+',
  'k2+': 'mse+',
  'k3+': 'low_var_kl+',
};

/** A dual-clip bound above e^20 ≈ 4.85e8, the largest ratio verl's ±20 log-ratio clamp allows: no dual clip. */
export const NO_DUAL_CLIP = 1e9;

type HydraValue = string | number | boolean | null | (number | string)[] | Record<string, number>;

/**
 * A Hydra override value. Strings that are not plain names are quoted so Hydra reads them as
 * strings: a comma would make a sweep, and `0.5_5` could read as a number with a digit separator.
 */
export function hydraValue(v: HydraValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map((x) => hydraValue(x)).join(',')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}:${hydraValue(x)}`)
      .join(',')}}`;
  if (typeof v === 'string') return /^[A-Za-z_$][\w\-/$.]*$/.test(v) ? v : `"${v}"`;
  return String(v);
}

/** Single-quotes an override for the shell unless it is plain (placeholders like $MODEL_PATH stay unquoted to expand). */
const shellWord = (s: string) => (/^[\w.\-=/$+:@%,]+$/.test(s) ? s : `'${s}'`);

export function verlCommand(options: RunOptions): VerlExport | ExportFailure {
  const refused = unsupported(options, 'verl');
  if (refused !== null) return { ok: false, reason: refused };
  return translate(options as RlRunOptions);
}

function translate(o: RlRunOptions): VerlExport {
  const log = new MappingLog();
  const keys = new Map<string, HydraValue>();
  const launch = new Set<string>();
  const put = (key: string, to: HydraValue) => keys.set(key, to);
  const set = (path: string, value: unknown, key: string, to: HydraValue, note?: string) => {
    log.map(path, value, key, to, note);
    put(key, to);
  };
  const fixed = (key: string, to: HydraValue) => {
    put(key, to);
    launch.add(key);
  };
  const ppo = isFamily(o, 'ppo');
  const turns = 'maxTurns' in o ? o.maxTurns : 1;
  const P = o.prompts;
  const G = o.group;
  const M = o.miniBatches;

  // The task: verl reads prompts from parquet files and scores them with a reward function.
  const reward =
    presetOf(o).export.reward === 'code'
      ? 'a custom_reward_function.path that runs the program on the cases (or sandbox_fusion.url)'
      : 'a custom_reward_function.path computing the reward';
  const multi =
    turns > 1
      ? "; the environment's answers need verl's multi-turn rollout (actor_rollout_ref.rollout.multi_turn: " +
        'tool_config_path with a tool, or an agent loop), which this export cannot write'
      : '';
  log.none(
    'preset',
    o.preset,
    `the task (${taskOf(o)}) is not a verl option: supply data.train_files/val_files with the prompts and ${reward}${multi}`,
  );
  environmentUnmapped(o, log, 'verl');
  fixed('data.train_files', '$TRAIN_FILES');
  fixed('data.val_files', '$VAL_FILES');
  fixed('actor_rollout_ref.model.path', '$MODEL_PATH');
  fixed('actor_rollout_ref.rollout.name', 'vllm');
  fixed('trainer.n_gpus_per_node', 1);
  fixed('trainer.nnodes', 1);
  if (ppo) {
    set('preset', o.preset, 'algorithm.adv_estimator', 'gae', "PPO: GAE over the critic's values");
    fixed('critic.model.path', '$MODEL_PATH');
  }

  // Run length, batch shape, seeds.
  set(
    'steps',
    o.steps,
    'trainer.total_training_steps',
    o.steps,
    'one verl training step = one sampled batch, as a Dewpoint step',
  );
  set(
    'steps',
    o.steps,
    'trainer.total_epochs',
    o.steps,
    'an upper bound (a step takes at least one batch of an epoch) so that total_training_steps decides',
  );
  set('seed', o.seed, 'data.seed', o.seed, 'the same number seeds another generator: the samples differ');
  set(
    'seed',
    o.seed,
    'actor_rollout_ref.rollout.seed',
    o.seed,
    'the same number seeds another generator: the samples differ',
  );
  set('prompts', P, 'data.train_batch_size', P);
  set('group', G, 'actor_rollout_ref.rollout.n', G);
  let miniPrompts = P;
  if (P % M === 0) {
    miniPrompts = P / M;
    set(
      'miniBatches',
      M,
      'actor_rollout_ref.actor.ppo_mini_batch_size',
      miniPrompts,
      `counted in prompts (verl multiplies by rollout.n): ${M} updates per epoch of ${miniPrompts * G} completions`,
    );
  } else {
    fixed('actor_rollout_ref.actor.ppo_mini_batch_size', P);
    log.none(
      'miniBatches',
      M,
      `verl splits a batch by prompts: ppo_mini_batch_size = ${P} / ${M} is not a whole number (exported as one mini-batch of ${P} prompts)`,
    );
  }
  const micro = miniPrompts * G;
  fixed('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', micro);
  fixed('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', micro);
  if (o.beta > 0) fixed('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', micro);
  if (ppo) fixed('critic.ppo_micro_batch_size_per_gpu', micro);
  set(
    'epochs',
    o.epochs,
    'actor_rollout_ref.actor.ppo_epochs',
    o.epochs,
    ppo ? 'critic.ppo_epochs follows it (oc.select)' : undefined,
  );

  // Optimizer: Dewpoint has one AdamW over every parameter (the value head included), verl one per model.
  const optims = ppo ? ['actor_rollout_ref.actor.optim', 'critic.optim'] : ['actor_rollout_ref.actor.optim'];
  for (const optim of optims) {
    const critic = optim.startsWith('critic')
      ? "Dewpoint's value head shares the policy's one optimizer and learning rate; verl trains the critic as its own model"
      : undefined;
    const scheduled = o.lrSchedule !== undefined || o.lrWarmup !== undefined;
    set(
      'lr',
      o.lr,
      `${optim}.lr`,
      o.lr,
      critic ?? (scheduled ? undefined : 'constant (verl lr_scheduler_type constant, no warmup)'),
    );
    // verl steps its LambdaLR once per training step, as Dewpoint schedules per sampled batch (train/schedule.ts rlLrAt).
    if (scheduled) {
      set('lrSchedule', o.lrSchedule ?? 'constant', `${optim}.lr_scheduler_type`, o.lrSchedule ?? 'constant');
      set('lrWarmup', o.lrWarmup ?? 0, `${optim}.lr_warmup_steps`, o.lrWarmup ?? 0);
      if (o.lrSchedule === 'cosine') set('minLrRatio', o.minLrRatio ?? 0, `${optim}.min_lr_ratio`, o.minLrRatio ?? 0);
    }
    set('beta1', o.beta1, `${optim}.betas`, [o.beta1, o.beta2]);
    set('beta2', o.beta2, `${optim}.betas`, [o.beta1, o.beta2]);
    set(
      'eps',
      o.eps,
      `${optim}.override_optimizer_config`,
      { eps: o.eps },
      'verl passes it to torch.optim.AdamW (its optim config has no eps key)',
    );
    set(
      'weightDecay',
      o.weightDecay,
      `${optim}.weight_decay`,
      o.weightDecay,
      o.weightDecay > 0 ? 'verl decays every parameter; Dewpoint only the matrices' : undefined,
    );
    set('maxGradNorm', o.maxGradNorm, `${optim}.clip_grad`, o.maxGradNorm);
  }

  // Sampling.
  // verl's actor divides its logits by the rollout temperature when it scores them, as Dewpoint's trainer does.
  set('temperature', o.temperature, 'actor_rollout_ref.rollout.temperature', o.temperature);
  set(
    'topK',
    o.topK,
    'actor_rollout_ref.rollout.top_k',
    o.topK === 0 ? -1 : o.topK,
    o.topK === 0 ? 'off: verl writes -1' : undefined,
  );
  set('topP', o.topP, 'actor_rollout_ref.rollout.top_p', o.topP);
  if (turns > 1) {
    set(
      'maxNew',
      o.maxNew,
      'data.max_response_length',
      o.maxNew * turns,
      `the whole episode's budget, ${turns} × ${o.maxNew}; the environment's tokens count in it too`,
    );
    log.none(
      'maxNew',
      o.maxNew,
      'a limit per action: verl bounds the whole multi-turn response (data.max_response_length), not each turn',
    );
    set('maxTurns', turns, 'actor_rollout_ref.rollout.multi_turn.enable', true);
    set('maxTurns', turns, 'actor_rollout_ref.rollout.multi_turn.max_assistant_turns', turns);
  } else {
    set('maxNew', o.maxNew, 'data.max_response_length', o.maxNew);
    if ('maxTurns' in o) log.asDefault('maxTurns', turns, "one action per episode: verl's single-turn rollout");
  }
  if ('envErrorLimit' in o && o.envErrorLimit !== undefined)
    log.none(
      'envErrorLimit',
      o.envErrorLimit,
      "verl has no share of failed episodes that stops a run: a tool or agent loop's exception fails the step",
    );
  if ('trainProblems' in o && o.trainProblems !== undefined) {
    set(
      'trainProblems',
      o.trainProblems,
      'data.train_max_samples',
      o.trainProblems,
      'verl keeps that many rows of data.train_files and passes over them in epochs',
    );
    // verl's train dataloader drops the last incomplete batch (v1/trainer_base.py, drop_last=True).
    if (o.trainProblems < P)
      log.none(
        'trainProblems',
        o.trainProblems,
        `fewer problems than data.train_batch_size (${P}): verl drops the incomplete batch, so an epoch has none; Dewpoint draws repeats`,
      );
  }
  if ('renormalize' in o && o.renormalize !== undefined) {
    if (o.renormalize)
      log.none(
        'renormalize',
        true,
        'verl scores the full softmax (at the rollout temperature); it has no renormalisation over the top-k/top-p support',
      );
    else log.asDefault('renormalize', false, 'the full softmax, as verl');
  }

  policyLoss(o, log, set, put);
  aggregation(o, log, set);
  if (ppo) critic(o as PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions, log, set);
  else advantage(o as GrpoRunOptions | EpisodeGrpoRunOptions, log, set);
  if (o.truncation === 'mask')
    log.none(
      'truncation',
      'mask',
      "verl trains a truncated response on its reward; no option drops it from the loss (DAPO's overlong reward shaping is a different thing)",
    );
  else log.asDefault('truncation', 'score', 'verl trains truncated responses on their reward');
  // DAPO's dynamic sampling (train/dynamic-sampling.ts): verl's DAPO trainer.
  if (o.filterGroups) {
    set(
      'filterGroups',
      o.filterGroups,
      'algorithm.filter_groups.enable',
      true,
      'the DAPO trainer (recipe.dapo.main_dapo)',
    );
    set(
      'filterGroups',
      o.filterGroups,
      'algorithm.filter_groups.metric',
      o.filterGroups === 'success' ? 'acc' : 'seq_final_reward',
      o.filterGroups === 'success' ? 'acc as the reward function reports it (reward_extra_info)' : undefined,
    );
    set(
      'maxGenBatches',
      o.maxGenBatches ?? 10,
      'algorithm.filter_groups.max_num_gen_batches',
      o.maxGenBatches ?? 10,
      'verl raises when a step reaches it short of groups; Dewpoint trains on the groups kept',
    );
    fixed('data.gen_batch_size', P);
  }
  // DAPO's soft overlong punishment: verl's DAPO reward manager (rewards/overlong.ts).
  if (o.overlongBuffer !== undefined) {
    fixed('reward_model.reward_manager', 'dapo');
    set(
      'overlongBuffer',
      o.overlongBuffer,
      'reward_model.overlong_buffer.enable',
      true,
      `launched by ${VERL_DAPO_ENTRY}`,
    );
    set('overlongBuffer', o.overlongBuffer, 'reward_model.overlong_buffer.len', o.overlongBuffer);
    set(
      'overlongPenalty',
      o.overlongPenalty ?? 1,
      'reward_model.overlong_buffer.penalty_factor',
      o.overlongPenalty ?? 1,
      turns > 1 ? "the budget is data.max_response_length, the whole episode's, as Dewpoint's" : undefined,
    );
  }

  // KL to the reference, as a loss term.
  set(
    'beta',
    o.beta,
    'actor_rollout_ref.actor.use_kl_loss',
    o.beta > 0,
    o.beta > 0 ? undefined : 'β = 0: no reference model',
  );
  if (o.beta > 0) set('beta', o.beta, 'actor_rollout_ref.actor.kl_loss_coef', o.beta);
  if (o.beta > 0 && o.aggregation.mode !== 'token-mean')
    log.none(
      'beta',
      o.beta,
      `verl aggregates the KL term with loss_agg_mode (${o.aggregation.mode}); Dewpoint always takes its token-mean`,
    );
  set(
    'kl.estimator',
    o.kl.estimator,
    'actor_rollout_ref.actor.kl_loss_type',
    VERL_KL_TYPE[o.kl.estimator],
    o.beta > 0 ? undefined : 'unused at β = 0',
  );
  if (o.kl.compat !== undefined) {
    if (o.kl.compat === 'trl' && o.kl.estimator.startsWith('k3'))
      log.none(
        'kl.compat',
        'trl',
        "TRL's k3 is unclamped; verl's low_var_kl clamps the log-ratio to ±20 and the value to ±10",
      );
    else
      log.resolved(
        'kl.compat',
        o.kl.compat,
        `k3 clamped as verl's low_var_kl${o.kl.compat === 'trl' ? ' (trl only changes k3)' : ''}`,
      );
  }

  corrections(o, log, set);
  entropyBonus(o, log, set);
  if (o.staleness) asyncTraining(o, o.staleness, log, set);
  if (o.samplerWorker)
    log.none(
      'samplerWorker',
      true,
      "where Dewpoint's batches sampled ahead draw (a worker per slot) has no option in verl: its fully async " +
        'trainer always samples on rollouter workers of their own',
    );
  if (o.samplerBf16)
    log.none(
      'samplerBf16',
      true,
      "the mismatch lab's injected gap has no option: verl's rollout engine holds its own weights " +
        '(actor_rollout_ref.rollout.dtype, bf16 by default) whatever the trainer computes in',
    );
  if (o.samplerTemperature !== undefined)
    log.none(
      'samplerTemperature',
      o.samplerTemperature,
      "the mismatch lab's injected gap has no option: verl samples and scores at actor_rollout_ref.rollout.temperature",
    );
  if (o.loraRank !== undefined) {
    // verl's LoRA (PEFT underneath); with a rank its reference is the actor with the adapters off, as here.
    // Its guide (volcengine/verl @ b178a3c docs/advance/ppo_lora.rst, "Required configurations") also
    // requires rollout.load_format=safetensors, so that vLLM loads the base model (the default is dummy).
    fixed('actor_rollout_ref.rollout.load_format', 'safetensors');
    const targets = o.loraTargets ?? 'all-linear';
    set('loraRank', o.loraRank, 'actor_rollout_ref.model.lora_rank', o.loraRank);
    set('loraAlpha', o.loraAlpha ?? o.loraRank, 'actor_rollout_ref.model.lora_alpha', o.loraAlpha ?? o.loraRank);
    set(
      'loraTargets',
      targets,
      'actor_rollout_ref.model.target_modules',
      targets === 'all-linear' ? targets : targets.split(','),
    );
    if (o.loraDropout)
      log.none(
        'loraDropout',
        o.loraDropout,
        "verl's LoraConfig sets no lora_dropout (PEFT's default 0): its run has no adapter dropout",
      );
  }
  if (o.idsPerPass !== undefined)
    log.none(
      'idsPerPass',
      o.idsPerPass,
      "a memory setting of this machine: verl's nearest is use_dynamic_bsz with ppo_max_token_len_per_gpu (a " +
        "micro-batch's token budget), to be sized for the cluster's GPUs",
    );
  if (o.frozenWeights !== undefined)
    log.none(
      'frozenWeights',
      o.frozenWeights,
      "a memory setting of this machine: verl holds its reference in its FSDP config's param dtype",
    );
  if (o.recomputeLayers !== undefined)
    set(
      'recomputeLayers',
      o.recomputeLayers,
      'actor_rollout_ref.model.enable_gradient_checkpointing',
      o.recomputeLayers,
    );
  // Evaluation and checkpoints; both also fire on verl's last step.
  set('evalEvery', o.evalEvery, 'trainer.test_freq', o.evalEvery > 0 ? o.evalEvery : -1);
  set(
    'evalEvery',
    o.evalEvery,
    'trainer.val_before_train',
    o.evalEvery > 0,
    'Dewpoint evaluates before the first step when it evaluates at all',
  );
  set(
    'evalN',
    o.evalN,
    'data.val_max_samples',
    o.evalN,
    "greedy, as verl's val_kwargs (do_sample false); the accuracy is whatever the reward function reports",
  );
  if (o.evalSamples) {
    // verl validates one way per run: sampled here, its val-core/…/mean@k and best@k are pass@1 and pass@k.
    const val = 'actor_rollout_ref.rollout.val_kwargs';
    set('evalSamples', o.evalSamples, `${val}.do_sample`, true, 'Dewpoint runs the greedy pass too; verl runs one');
    set('evalSamples', o.evalSamples, `${val}.n`, o.evalSamples, 'mean@n is pass@1, best@n pass@n');
    set('temperature', o.temperature, `${val}.temperature`, o.temperature);
    set('topK', o.topK, `${val}.top_k`, o.topK === 0 ? -1 : o.topK);
    set('topP', o.topP, `${val}.top_p`, o.topP);
  }
  set(
    'checkpointEvery',
    o.checkpointEvery,
    'trainer.save_freq',
    o.checkpointEvery > 0 ? o.checkpointEvery : o.steps,
    o.checkpointEvery > 0 ? undefined : '0 = at the end only: every `steps` steps (verl also saves on the last step)',
  );

  const overrides = [...keys].map(([k, v]) => `${k}=${hydraValue(v)}`);
  return {
    ok: true,
    command: [
      o.staleness ? VERL_ASYNC_ENTRY : o.filterGroups || o.overlongBuffer !== undefined ? VERL_DAPO_ENTRY : VERL_ENTRY,
      ...overrides.map(shellWord),
    ].join(' \\\n    '),
    overrides,
    launch: overrides.filter((s) => launch.has(s.slice(0, s.indexOf('=')))),
    mapped: log.mapped,
    unmapped: log.unmapped,
  };
}

type SetFn = (path: string, value: unknown, key: string, to: HydraValue, note?: string) => void;

/**
 * The staleness bound s on verl's fully async trainer: one parameter sync per Dewpoint batch (a
 * trainer step that takes the whole batch, its M mini-batches), a budget of (1 + s) batches of
 * samples per version, no partial rollout (a sample is never served under two versions), and
 * old log-probs recomputed by the trainer (Dewpoint's proximal policy for a batch that trails the
 * weights; verl's default reuses the rollout's). Under FIFO consumption the lag is then at most
 * s versions, Dewpoint's bound; verl counts a budget of samples, Dewpoint the versions themselves.
 */
function asyncTraining(o: RlRunOptions, s: number, log: MappingLog, set: SetFn): void {
  set(
    'staleness',
    s,
    'async_training.staleness_threshold',
    s,
    'verl admits (1 + s) batches of samples per version; with one sync a batch that bounds the lag by s, as Dewpoint',
  );
  set('staleness', s, 'async_training.trigger_parameter_sync_step', 1, 'one version per batch, as Dewpoint');
  set(
    'miniBatches',
    o.miniBatches,
    'async_training.require_batches',
    o.miniBatches,
    'a trainer step takes the whole batch: its mini-batches',
  );
  set(
    'staleness',
    s,
    'async_training.partial_rollout',
    false,
    'Dewpoint serves every call of a batch under one version',
  );
  set(
    'staleness',
    s,
    'async_training.use_rollout_log_probs',
    false,
    "old log-probs recomputed under the weights a batch trains on (Dewpoint's proximal policy)",
  );
  if (o.filterGroups || o.overlongBuffer !== undefined)
    log.none(
      'filterGroups',
      o.filterGroups ?? null,
      "the fully async entry is not DAPO's recipe: check that it reads algorithm.filter_groups and the overlong buffer",
    );
}
const ACTOR = 'actor_rollout_ref.actor';
const CORR = 'algorithm.rollout_correction';

/** Lists every option set under `prefix` as having no equivalent. */

function policyLoss(o: RlRunOptions, log: MappingLog, set: SetFn, put: (key: string, to: HydraValue) => void): void {
  const p = o.policyLoss;
  const s = lossSettings(p);
  const clips = (low: number, high: number, lowPath = 'clipLow', highPath = 'clipHigh') => {
    set(
      `policyLoss.${lowPath}`,
      low,
      `${ACTOR}.clip_ratio_low`,
      low,
      isSet(p, lowPath) ? undefined : "unset: Dewpoint's default",
    );
    set(
      `policyLoss.${highPath}`,
      high,
      `${ACTOR}.clip_ratio_high`,
      high,
      isSet(p, highPath) ? undefined : 'unset: ε low, as verl',
    );
  };
  const compat = (what: string) => {
    if ('compat' in p && p.compat !== undefined) log.resolved('policyLoss.compat', p.compat, what);
  };
  switch (s.name) {
    case 'ppo': {
      set('policyLoss.name', 'ppo', `${ACTOR}.policy_loss.loss_mode`, 'vanilla');
      clips(s.clipLow, s.clipHigh);
      // TRL's δ caps r in the unclipped term: for δ > 1 + ε_high that is verl's dual clip at δ.
      const deltaActs = Number.isFinite(s.delta) && s.delta > 1 + s.clipHigh;
      if (Number.isFinite(s.delta) && !deltaActs)
        log.none(
          'policyLoss.delta',
          s.delta,
          `TRL δ ≤ 1 + ε_high (${1 + s.clipHigh}) also caps positive-advantage tokens; verl's dual clip bounds only negative ones`,
        );
      const c = Math.min(s.dualClip, deltaActs ? s.delta : Infinity);
      const to = Number.isFinite(c) ? c : NO_DUAL_CLIP;
      const note = Number.isFinite(c)
        ? undefined
        : `no dual clip: ${NO_DUAL_CLIP} is above e^20, the largest ratio verl's ±20 clamp lets through`;
      if (isSet(p, 'dualClip') || !deltaActs)
        set(
          'policyLoss.dualClip',
          bound(s.dualClip),
          `${ACTOR}.clip_ratio_c`,
          to,
          isSet(p, 'dualClip')
            ? note
            : `unset: ${s.compat === 'verl' ? '3 under compat verl' : `none under compat ${s.compat}`}${note ? `; ${note}` : ''}`,
        );
      if (deltaActs)
        set(
          'policyLoss.delta',
          s.delta,
          `${ACTOR}.clip_ratio_c`,
          to,
          `TRL's δ > 1 + ε_high bounds a negative-advantage token's loss at −A·δ, as verl's dual clip${c < s.delta ? ` (the dual clip ${c} binds first)` : ''}`,
        );
      if (s.logRatioClamp === 20) {
        if (isSet(p, 'logRatioClamp'))
          log.asDefault('policyLoss.logRatioClamp', 20, 'verl always clamps logp − old to ±20 (not configurable)');
      } else
        log.none(
          'policyLoss.logRatioClamp',
          bound(s.logRatioClamp),
          'verl always clamps logp − old to ±20 (not configurable)',
          !isSet(p, 'logRatioClamp'),
        );
      compat(`resolved: dual clip ${bound(s.dualClip)}, log-ratio clamp ${bound(s.logRatioClamp)}`);
      return;
    }
    case 'gspo':
      set('policyLoss.name', 'gspo', `${ACTOR}.policy_loss.loss_mode`, 'gspo');
      clips(s.clipLow, s.clipHigh);
      if (s.logRatioCap === 10) {
        if (isSet(p, 'logRatioCap'))
          log.asDefault(
            'policyLoss.logRatioCap',
            10,
            "verl's gspo caps the log of the sequence ratio at 10 (not configurable)",
          );
      } else
        log.none(
          'policyLoss.logRatioCap',
          bound(s.logRatioCap),
          "verl's gspo always caps the log of the sequence ratio at 10",
          !isSet(p, 'logRatioCap'),
        );
      if (o.aggregation.mode !== 'seq-mean-token-mean')
        log.none(
          'aggregation.mode',
          o.aggregation.mode,
          "verl's gspo always aggregates its policy term seq-mean-token-mean (loss_agg_mode still applies to the KL term)",
        );
      compat(`resolved: log-ratio cap ${bound(s.logRatioCap)}`);
      return;
    case 'cispo':
      if (s.compat === 'trl') {
        log.noneAll(
          'policyLoss',
          p,
          "TRL's cispo (an upper cap on the ratio only, no clamp) is not verl's cispo, which clips both sides around 1",
        );
        return;
      }
      set('policyLoss.name', 'cispo', `${ACTOR}.policy_loss.loss_mode`, 'cispo');
      clips(s.clipLow, s.clipHigh);
      if (isSet(p, 'cap'))
        log.asDefault('policyLoss.cap', s.cap, 'used only under compat trl (unused here, as in verl)');
      compat('resolved: the two-sided clip, as verl');
      return;
    case 'reinforce':
      set(
        'policyLoss.name',
        'reinforce',
        `${ACTOR}.policy_loss.loss_mode`,
        'gpg',
        "verl's gpg: −A·logp (times the IS weight when one is set)",
      );
      return;
    case 'dppo_tv':
    case 'dppo_kl': {
      if (s.name === 'dppo_kl' && s.compat === 'rllm') {
        log.noneAll('policyLoss', p, "rLLM's dppo_kl (clamped binary KL, one δ) is not verl's dppo_kl");
        return;
      }
      set('policyLoss.name', s.name, `${ACTOR}.policy_loss.loss_mode`, s.name);
      clips(s.deltaLow, s.deltaHigh, 'deltaLow', 'deltaHigh');
      const C = Number.isFinite(s.truncation) ? s.truncation : NO_DUAL_CLIP;
      set(
        'policyLoss.truncation',
        bound(s.truncation),
        `${ACTOR}.clip_ratio_c`,
        C,
        `verl truncates the detached ratio at clip_ratio_c${isSet(p, 'truncation') ? '' : ` (unset: ${s.compat === 'rllm' ? `none under rllm; ${NO_DUAL_CLIP} is above e^20` : '3 under verl'})`}`,
      );
      compat(`resolved: truncation ${bound(s.truncation)}`);
      return;
    }
    case 'icepop': {
      // rLLM's icepop loss −A·d·logp·1[α ≤ d ≤ β] is verl's bypass-mode REINFORCE with an IcePop IS band.
      if (!(s.alpha > 0)) {
        log.noneAll(
          'policyLoss',
          p,
          'verl needs a positive lower IcePop bound (rollout_is_threshold "lo_hi" with lo > 0)',
        );
        return;
      }
      const band = `${s.alpha}_${s.beta}`;
      set(
        'policyLoss.name',
        'icepop',
        `${CORR}.bypass_mode`,
        true,
        'bypass mode (old := rollout) sets loss_mode bypass_mode itself',
      );
      set(
        'policyLoss.name',
        'icepop',
        `${CORR}.loss_type`,
        'reinforce',
        'REINFORCE with explicit IS weights against the sampler',
      );
      set('policyLoss.name', 'icepop', `${CORR}.rollout_is`, 'token');
      set(
        'policyLoss.alpha',
        s.alpha,
        `${CORR}.rollout_is_threshold`,
        band,
        isSet(p, 'alpha') ? undefined : 'unset: 0.5',
      );
      set('policyLoss.beta', s.beta, `${CORR}.rollout_is_threshold`, band, isSet(p, 'beta') ? undefined : 'unset: 5');
      put(`${CORR}.rollout_is_batch_normalize`, false);
      return;
    }
    case 'reinforce_kl':
      log.noneAll('policyLoss', p, 'verl has no reinforce_kl (rLLM: REINFORCE with KL terms to the sampler)');
      return;
    case 'geo_mean':
      set('policyLoss.name', 'geo_mean', `${ACTOR}.policy_loss.loss_mode`, 'geo_mean');
      clips(s.clipLow, s.clipHigh);
      if (o.aggregation.mode !== 'seq-mean-token-mean')
        log.none(
          'aggregation.mode',
          o.aggregation.mode,
          "verl's geo_mean always takes the mean over sequences of −Ā·s (seq-mean-token-mean); loss_agg_mode still applies to the KL term",
        );
      if (o.importance.kind !== 'off')
        log.none(
          'importance.kind',
          o.importance.kind,
          "verl's geo_mean weighs a sequence by the geometric mean of its IS weights; Dewpoint weighs each token by its own",
        );
      return;
    case 'clip_cov': {
      set('policyLoss.name', 'clip_cov', `${ACTOR}.policy_loss.loss_mode`, 'clip_cov');
      clips(s.clipLow, s.clipHigh);
      const unset = (key: string, v: number) => (isSet(p, key) ? undefined : `unset: ${v}, as verl`);
      set('policyLoss.ratio', s.ratio, `${ACTOR}.policy_loss.clip_cov_ratio`, s.ratio, unset('ratio', 2e-4));
      set('policyLoss.lb', s.lb, `${ACTOR}.policy_loss.clip_cov_lb`, s.lb, unset('lb', 1));
      set('policyLoss.ub', s.ub, `${ACTOR}.policy_loss.clip_cov_ub`, s.ub, unset('ub', 5));
      return;
    }
    case 'kl_cov':
      set('policyLoss.name', 'kl_cov', `${ACTOR}.policy_loss.loss_mode`, 'kl_cov');
      set(
        'policyLoss.ratio',
        s.ratio,
        `${ACTOR}.policy_loss.kl_cov_ratio`,
        s.ratio,
        isSet(p, 'ratio') ? undefined : 'unset: 2e-4, as verl',
      );
      set(
        'policyLoss.coef',
        s.coef,
        `${ACTOR}.policy_loss.ppo_kl_coef`,
        s.coef,
        isSet(p, 'coef') ? undefined : 'unset: 0.1, as verl',
      );
      return;
    case 'sapo':
      set('policyLoss.name', 'sapo', `${ACTOR}.policy_loss.loss_mode`, 'sapo');
      set(
        'policyLoss.tauPos',
        s.tauPos,
        `${ACTOR}.tau_pos`,
        s.tauPos,
        isSet(p, 'tauPos') ? undefined : 'unset: 1, as verl',
      );
      set(
        'policyLoss.tauNeg',
        s.tauNeg,
        `${ACTOR}.tau_neg`,
        s.tauNeg,
        isSet(p, 'tauNeg') ? undefined : 'unset: 1.05, as verl',
      );
      if (s.compat === 'trl')
        log.none('policyLoss.compat', 'trl', 'verl always clamps logp − old to ±20 (not configurable)');
      if (o.aggregation.mode !== 'seq-mean-token-mean')
        log.none(
          'aggregation.mode',
          o.aggregation.mode,
          "verl's sapo always aggregates its policy term seq-mean-token-mean (loss_agg_mode still applies to the KL term)",
        );
      return;
    case 'dro':
      set('policyLoss.name', 'dro', `${ACTOR}.policy_loss.loss_mode`, 'dro');
      set('policyLoss.beta', s.beta, `${ACTOR}.policy_loss.dro_beta`, s.beta);
      return;
    case 'vespo':
      log.noneAll(
        'policyLoss',
        p,
        "verl has no VESPO loss (TRL's loss_type vespo: a Gamma weight of the sequence ratio)",
      );
      return;
  }
}

function aggregation(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const a = o.aggregation;
  const key = `${ACTOR}.loss_agg_mode`;
  const critic = isFamily(o, 'ppo') ? '; the critic follows it (oc.select)' : '';
  switch (a.mode) {
    case 'token-mean':
    case 'token-sum':
    case 'seq-mean-token-mean':
    case 'seq-mean-token-sum':
      set('aggregation.mode', a.mode, key, a.mode, critic ? critic.slice(2) : undefined);
      return;
    case 'seq-mean-token-sum-norm':
      set('aggregation.mode', a.mode, key, a.mode);
      if (a.lossScaleFactor !== undefined)
        set('aggregation.lossScaleFactor', a.lossScaleFactor, `${ACTOR}.loss_scale_factor`, a.lossScaleFactor);
      else
        log.none(
          'aggregation.lossScaleFactor',
          'the batch width',
          'Dewpoint divides by the packed batch width, verl (loss_scale_factor null) by data.max_response_length: set loss_scale_factor to the width',
          true,
        );
      if (a.compat === 'verl-legacy')
        log.none(
          'aggregation.compat',
          a.compat,
          'verl before #5417 (v0.7.0 and earlier) did not divide by the sequence count; current verl does',
        );
      else if (a.compat !== undefined) log.resolved('aggregation.compat', a.compat, "current verl's Σ/(K·sequences)");
      return;
    case 'grpo':
      set(
        'aggregation.mode',
        'grpo',
        key,
        'seq-mean-token-mean',
        `TRL's grpo counts fully masked rows in the mean, verl's seq-mean-token-mean does not${critic}`,
      );
      return;
    case 'dr_grpo':
      set(
        'aggregation.mode',
        'dr_grpo',
        key,
        'seq-mean-token-sum-norm',
        `Σ/(sequences·L_max); verl counts only sequences with tokens${critic}`,
      );
      if (a.maxCompletionLength !== undefined)
        set(
          'aggregation.maxCompletionLength',
          a.maxCompletionLength,
          `${ACTOR}.loss_scale_factor`,
          a.maxCompletionLength,
        );
      else
        log.none(
          'aggregation.maxCompletionLength',
          'the batch width',
          'L_max defaults to the packed batch width, verl to data.max_response_length: set loss_scale_factor to the width',
          true,
        );
      return;
    case 'session-mean':
      set(
        'aggregation.mode',
        'session-mean',
        key,
        'seq-mean-token-mean',
        `equal when each session packs as one sequence (single-turn, or turns that extend each other); verl has no sessions${critic}`,
      );
      return;
  }
}

function advantage(o: GrpoRunOptions | EpisodeGrpoRunOptions, log: MappingLog, set: SetFn): void {
  const a = o.advantage;
  const s = advantageSettings(a);
  const adv = 'algorithm.adv_estimator';
  const fixedAs = (path: string, key: string, value: unknown, equal: boolean, reason: string) => {
    if (equal) {
      if (isSet(a, key)) log.asDefault(path, value, reason);
    } else log.none(path, value, reason, !isSet(a, key));
  };
  if (s.estimator === 'grpo') {
    set('advantage.estimator', 'grpo', adv, 'grpo');
    if (s.scale === 'batch')
      log.none(
        'advantage.scale',
        'batch',
        "verl's grpo divides by the group's std or by nothing (norm_adv_by_std_in_grpo); no batch std",
      );
    else
      set(
        'advantage.scale',
        s.scale,
        'algorithm.norm_adv_by_std_in_grpo',
        s.scale === 'group',
        isSet(a, 'scale') ? undefined : 'unset: group',
      );
    fixedAs(
      'advantage.stdType',
      'stdType',
      s.stdType,
      s.stdType === 'unbiased',
      "verl's grpo uses torch.std (unbiased, ddof 1)",
    );
    fixedAs(
      'advantage.epsilon',
      'epsilon',
      s.epsilon,
      s.epsilon === 1e-6,
      "verl's grpo adds 1e-6 to the std (not configurable)",
    );
    fixedAs(
      'advantage.singleton',
      'singleton',
      s.singleton,
      s.singleton === 'raw',
      "verl's grpo gives a one-member group r/(1+ε) (μ 0, σ 1)",
    );
  } else if (s.estimator === 'rloo') {
    set(
      'advantage.estimator',
      'rloo',
      adv,
      s.singleton === 'raw' ? 'rloo' : 'rloo_vectorized',
      s.singleton === 'raw'
        ? 'the loop version: a one-member group keeps its raw score'
        : 'the vectorised version: a one-member group gets 0',
    );
    if (isSet(a, 'singleton'))
      set('advantage.singleton', s.singleton, adv, s.singleton === 'raw' ? 'rloo' : 'rloo_vectorized');
    if (s.normalize) log.none('advantage.normalize', true, "verl's rloo does not whiten over the batch");
    else log.asDefault('advantage.normalize', false, "no whitening, as verl's rloo");
  } else if (s.estimator === 'gpg') {
    set('advantage.estimator', 'gpg', adv, 'gpg', 'α·(r − group mean), α = batch size / non-zero scores');
  } else if (s.estimator === 'grpo-passk') {
    set('advantage.estimator', 'grpo-passk', adv, 'grpo_passk');
    set(
      'advantage.scale',
      s.scale,
      'algorithm.norm_adv_by_std_in_grpo',
      s.scale === 'group',
      isSet(a, 'scale') ? 'grpo_passk reads it from the algorithm config' : 'unset: group',
    );
  } else if (s.estimator === 'gdpo') {
    gdpo(a, s, log, set);
  } else if (s.estimator === 'otb' || s.estimator === 'otb-tir') {
    otb(a, s, log, set);
  } else {
    set('advantage.estimator', s.estimator, adv, 'reinforce_plus_plus_baseline');
    fixedAs(
      'advantage.shiftMean',
      'shiftMean',
      s.shiftMean,
      s.shiftMean,
      'verl whitens with masked_whiten(shift_mean=True)',
    );
    if (s.compat === 'rllm')
      log.none('advantage.compat', 'rllm', "rLLM's sequence-level std is not verl's token-weighted whitening");
  }
  if ('compat' in a && a.compat !== undefined && !(s.estimator === 'reinforce++-baseline' && s.compat === 'rllm'))
    log.resolved(
      'advantage.compat',
      a.compat,
      'fills the estimator options left unset; each is exported or listed here',
    );
  const otbRun = s.estimator === 'otb' || s.estimator === 'otb-tir';
  if (o.maskZeroAdvantage)
    log.none(
      'maskZeroAdvantage',
      true,
      `verl keeps all-equal groups in the loss (${otbRun ? "OTB's advantages near 0, a lone longest tail at its reward" : 'advantage 0'}, ` +
        "their tokens in token-mean's count); no option masks them (algorithm.filter_groups resamples instead)",
    );
  else
    log.asDefault(
      'maskZeroAdvantage',
      false,
      otbRun
        ? 'all-equal groups stay in the loss, as verl'
        : 'all-equal groups stay in the loss with advantage 0, as verl',
    );
}

/**
 * OTB: verl's `optimal_token_baseline` (single turn, members aligned by response position) and
 * `tir_optimal_token_baseline` (aligned by the response's masked tokens: episodes), verl-project/verl
 * 1dda039 `compute_optimal_token_baseline_advantage` and its multi-turn twin. Both read `sum_pi_squared`,
 * which the actor's log-prob pass writes only with `actor_rollout_ref.actor.calculate_sum_pi_squared`
 * (verl/workers/config/actor.py; the trainer asserts it), and `rollout_is_weights` when rollout IS is
 * on, as Dewpoint's. verl's trainer passes no `handle_zero_tail`: its default, on, is fixed.
 */
function otb(
  a: AdvantageRunOptions,
  s: { estimator: 'otb' | 'otb-tir'; handleZeroTail: boolean },
  log: MappingLog,
  set: SetFn,
): void {
  const name = s.estimator === 'otb' ? 'optimal_token_baseline' : 'tir_optimal_token_baseline';
  set('advantage.estimator', s.estimator, 'algorithm.adv_estimator', name);
  set(
    'advantage.estimator',
    s.estimator,
    'actor_rollout_ref.actor.calculate_sum_pi_squared',
    true,
    "Σπ² per token from the actor's log-prob pass, which OTB's path variance reads",
  );
  if (!s.handleZeroTail)
    log.none(
      'advantage.handleZeroTail',
      false,
      "verl's trainer never passes handle_zero_tail to OTB: a lone longest response always gets baseline 0 past the others",
    );
  else if (isSet(a, 'handleZeroTail'))
    log.asDefault('advantage.handleZeroTail', true, "verl's OTB default (handle_zero_tail=True)");
}

/**
 * GDPO: verl's `gdpo` estimator (verl-project/verl 1dda039 `compute_gdpo_outcome_advantage`) reads
 * `algorithm.gdpo_reward_keys` / `gdpo_reward_weights` with `config.get`; they are AlgoConfig fields
 * but not in the generated trainer YAML, so Hydra needs them added (`+algorithm.…`, as verl's
 * examples/gdpo_trainer does). Each key is read from compute_score's returned dict. DAPO shaping's
 * score and penalty are added by verl's DAPO reward manager after compute_score, not returned by it.
 */
function gdpo(
  a: AdvantageRunOptions,
  s: { compat: string; scale: 'group' | 'none'; weights: [string, number][] },
  log: MappingLog,
  set: SetFn,
): void {
  set('advantage.estimator', 'gdpo', 'algorithm.adv_estimator', 'gdpo');
  set(
    'advantage.scale',
    s.scale,
    'algorithm.norm_adv_by_std_in_grpo',
    s.scale === 'group',
    isSet(a, 'scale') ? 'each component normalised as verl grpo' : 'unset: group',
  );
  if (s.compat === 'trl')
    log.none('advantage.compat', 'trl', "TRL's normalize_then_sum (ε 1e-4, whitening per sequence) is not verl's gdpo");
  else if (isSet(a, 'compat')) log.asDefault('advantage.compat', 'verl', "verl's gdpo");
  const shaped = (k: string) => (SHAPING_COMPONENTS as readonly string[]).includes(k);
  const kept = s.weights.filter(([k]) => !shaped(k));
  for (const [k, w] of s.weights) {
    if (shaped(k)) {
      log.none(
        `advantage.weights.${k}`,
        w,
        "verl's DAPO reward manager adds the overlong penalty after compute_score; gdpo_reward_keys name compute_score's dict keys",
      );
      continue;
    }
    const note = 'read from the dict compute_score returns ({score, ' + kept.map(([n]) => n).join(', ') + '})';
    set(
      `advantage.weights.${k}`,
      w,
      '+algorithm.gdpo_reward_keys',
      kept.map(([n]) => n),
      note,
    );
    set(
      `advantage.weights.${k}`,
      w,
      '+algorithm.gdpo_reward_weights',
      kept.map(([, x]) => x),
    );
  }
}

function critic(o: PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions, log: MappingLog, set: SetFn): void {
  set('gamma', o.gamma, 'algorithm.gamma', o.gamma);
  set('lam', o.lam, 'algorithm.lam', o.lam);
  if (o.shiftMean) log.asDefault('shiftMean', true, "verl's GAE whitens with masked_whiten(shift_mean=True)");
  else log.none('shiftMean', false, "verl's GAE always re-centres the whitened advantages");
  log.none(
    'valueCoefficient',
    o.valueCoefficient,
    'verl trains the critic as a separate model with its own optimizer (critic.optim.*): there is no ' +
      "weight between the two losses (Dewpoint's value head shares the trunk and the one loss)",
  );
  set('valueClip', o.valueClip, 'critic.cliprange_value', o.valueClip);
}

/**
 * The entropy bonus: verl's actor subtracts entropy_coeff × agg_loss(entropy, response_mask,
 * loss_agg_mode) (dp_actor.py update_policy), Dewpoint's 'loss' aggregation; a token mean is the
 * same only under token-mean. No adaptive coefficient.
 */
function entropyBonus(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const e = o.entropyBonus;
  if (e.kind === 'off') return log.asDefault('entropyBonus.kind', 'off', 'no entropy bonus (verl entropy_coeff 0)');
  if (e.kind === 'adaptive')
    return log.noneAll(
      'entropyBonus',
      e,
      "verl has only a static actor.entropy_coeff: no adaptive coefficient (TRL's use_adaptive_entropy)",
    );
  if (e.aggregation === 'token-mean' && o.aggregation.mode !== 'token-mean')
    return log.noneAll(
      'entropyBonus',
      e,
      `verl aggregates the entropy with the policy's loss_agg_mode (${o.aggregation.mode} here), not a token mean`,
    );
  log.resolved('entropyBonus.kind', 'static', 'a static coefficient: verl entropy_coeff');
  set(
    'entropyBonus.coef',
    e.coef,
    'actor_rollout_ref.actor.entropy_coeff',
    e.coef,
    "subtracted times agg_loss(entropy, response_mask, loss_agg_mode), Dewpoint's 'loss' aggregation",
  );
  log.resolved(
    'entropyBonus.aggregation',
    e.aggregation,
    e.aggregation === 'loss' ? "verl's agg_loss with loss_agg_mode" : 'a token mean, as verl under token-mean',
  );
}

function corrections(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const imp = o.importance;
  if (o.offPolicyMask !== undefined)
    log.none(
      'offPolicyMask',
      o.offPolicyMask,
      "verl has no off-policy sequence mask (TRL's OPSM); its rollout_rs masks ignore the advantage's sign and compare " +
        'with the proximal policy, not the current one',
    );
  if (o.topEntropyQuantile !== undefined)
    log.none(
      'topEntropyQuantile',
      o.topEntropyQuantile,
      "verl has no high-entropy token mask (TRL's top_entropy_quantile); its actor computes the entropy for the " +
        'entropy_coeff bonus and metrics only',
    );
  if (o.policyLoss.name === 'icepop') {
    if (imp.kind !== 'off')
      log.noneAll(
        'importance',
        imp,
        "icepop already uses verl's rollout_is for its band; a second IS weight cannot be expressed",
      );
    else log.asDefault('importance.kind', 'off', 'no IS weight besides the icepop band');
  } else if (imp.kind === 'off') {
    set('importance.kind', 'off', `${CORR}.rollout_is`, null, 'no IS weights (verl default)');
  } else {
    set('importance.kind', imp.kind, `${CORR}.rollout_is`, imp.level);
    set('importance.level', imp.level, `${CORR}.rollout_is`, imp.level);
    if (imp.kind === 'tis')
      set(
        'importance.cap',
        imp.cap,
        `${CORR}.rollout_is_threshold`,
        imp.cap,
        'TIS: w = min(ratio, cap); decoupled mode (old / rollout), as Dewpoint',
      );
    else if (imp.low > 0) {
      set(
        'importance.low',
        imp.low,
        `${CORR}.rollout_is_threshold`,
        `${imp.low}_${imp.high}`,
        'IcePop: the ratio inside [low, high], 0 outside',
      );
      set('importance.high', imp.high, `${CORR}.rollout_is_threshold`, `${imp.low}_${imp.high}`);
    } else {
      log.none('importance.low', 0, 'verl needs a positive lower IcePop bound ("lo_hi" with lo > 0)');
      log.none('importance.high', imp.high, 'the band is exported only with a positive lower bound');
    }
    set('importance.batchNormalize', imp.batchNormalize, `${CORR}.rollout_is_batch_normalize`, imp.batchNormalize);
  }
  const chosen = REJECTION_OPTIONS.filter((k) => o.rejection[k] !== undefined);
  if (!chosen.length) return;
  const names = chosen.join(',');
  const thresholds = chosen.map((k) => String(o.rejection[k])).join(',');
  for (const k of chosen) {
    const note = k.endsWith('k1')
      ? `u keeps ratios in [1/u, u] (verl infers the lower bound 1/u); verl applies the mask before the advantages`
      : 'an upper bound; verl applies the mask before the advantages';
    set(`rejection.${k}`, o.rejection[k], `${CORR}.rollout_rs`, names, note);
    set(`rejection.${k}`, o.rejection[k], `${CORR}.rollout_rs_threshold`, thresholds);
  }
}
