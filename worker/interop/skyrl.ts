/**
 * A run's options as a SkyRL launch: `python3 -m skyrl_main` (the bundle's copy of SkyRL's
 * entrypoint with its environment registered, skyrl_main.py) with SkyRL's CLI overrides, and every
 * option SkyRL cannot take listed with its reason (types.ts), as verl.ts does for verl. GRPO-family
 * presets map onto SkyRL's GRPO/RLOO estimators, PPO presets onto GAE with a critic; SFT, Flow-GRPO
 * and DPO are refused by the preset table (SkyRL has no DPO trainer).
 *
 * Keys, values and semantics checked against NovaSky-AI/SkyRL @ a9564572eb8e91076be43c1bd5e4615e3de17265
 * (2026-08-21): skyrl/train/config/config.py (every key and its default: `AlgorithmConfig`,
 * `OptimizerConfig`, `SamplingParams`, `GeneratorConfig`, `TrainerConfig`, `SkyRLLoraConfig`,
 * `OffPolicyCorrectionConfig`), skyrl/backends/skyrl_train/utils/ppo_utils.py (`PolicyLossType` and
 * each loss: `ppo_policy_loss` clamps the log-ratio at ±20 and applies `dual_clip` to negative
 * advantages only, `gspo_policy_loss` caps the sequence log-ratio at 10 and reduces by
 * `loss_reduction`, `compute_policy_loss_cispo` clips both sides with `cispo.*`, `rollout_is_policy_loss`
 * zeroes ratios against the sampler outside (1 − ε_low, 1 + ε_high), `dppo_policy_loss` has no
 * ratio truncation; `AdvantageEstimator`: `grpo` with torch.std and ε 1e-6, a one-member group r/(1+ε),
 * `rloo` giving a one-member group 0, `reinforce++` whitening returns over the batch with no group
 * baseline; `compute_approx_kl` k1/k2/k3/abs; `apply_loss_reduction_to_advantages_minibatch`: no
 * token sum), skyrl/backends/skyrl_train/utils/off_policy_correction_utils.py (TIS on old − rollout,
 * token and sequence masks), skyrl/backends/skyrl_train/distributed/fsdp_strategy.py (torch AdamW
 * without eps, transformers' `get_scheduler` stepped per mini-batch), skyrl/train/utils/utils.py
 * `validate_batch_sizes`, and examples/train/gsm8k/run_gsm8k.sh for the shape of a launch.
 * Pure: options in, overrides and lists out.
 */
import type {
  GrpoRunOptions,
  PpoEpisodeRunOptions,
  PpoEnvRunOptions,
  PpoRunOptions,
  RunOptions,
} from '../contract/options';
import { isFamily, presetOf } from '../presets/table';
import { SKYRL_ENV_CLASS } from './files';
import { advantageSettings, isSet, lossSettings } from './resolve';
import { environmentUnmapped, taskOf, unsupported } from './tasks';
import { MappingLog, bound, type ExportFailure, type Mapped, type Unmapped } from './types';
import { hydraValue, type RlRunOptions } from './verl';

/** The commit every key and behaviour here was read at. */
export const SKYRL_COMMIT = 'a9564572eb8e91076be43c1bd5e4615e3de17265';
/**
 * The bundle's entrypoint: SkyRL's main_base with `dewpoint_reward` registered in the Ray task (skyrl_main.py).
 * SKYRL_PYTHON is left unquoted so that a command of several words (`uv run --isolated --extra fsdp python`) runs.
 */
export const SKYRL_ENTRY = '${SKYRL_PYTHON:-python3} -m skyrl_main';
/** The env class the bundle's parquet rows name, registered by skyrl_env.py (whose ENV_CLASS the bundle test checks). */
export const SKYRL_ENV = SKYRL_ENV_CLASS;

export interface SkyrlExport {
  ok: true;
  /** The shell command, one override per line. */
  command: string;
  /** The overrides in order, unquoted (`trainer.algorithm.eps_clip_low=0.2`). */
  overrides: string[];
  /** Overrides that stand for no option: placeholders ($MODEL_PATH), the env class, sizes SkyRL requires. */
  launch: string[];
  mapped: Mapped[];
  unmapped: Unmapped[];
}

/** SkyRL's `kl_estimator_type` for each Dewpoint estimator; the straight-through `+` forms have none. */
export const SKYRL_KL_TYPE: Record<GrpoRunOptions['kl']['estimator'], string> = {
  k1: 'k1',
  abs: 'abs',
  k2: 'k2',
  k3: 'k3',
  'k1+': 'k1',
  'abs+': 'abs',
  'k2+': 'k2',
  'k3+': 'k3',
};

type Value = Parameters<typeof hydraValue>[0];
/** An override value written as it stands (SkyRL's own launch quotes a file list so: `"data.train_data=['$DIR/train.parquet']"`). */
class Raw {
  constructor(readonly text: string) {}
}
type SetFn = (path: string, value: unknown, key: string, to: Value, note?: string) => void;

/** A shell word: a value with a placeholder in double quotes (it expands), any other non-plain one in single quotes. */
const shellWord = (s: string) => (/^[\w.\-=/+:@%,]+$/.test(s) ? s : s.includes('$') ? `"${s}"` : `'${s}'`);

const ALG = 'trainer.algorithm';
const OPC = `${ALG}.off_policy_correction`;

export function skyrlCommand(options: RunOptions): SkyrlExport | ExportFailure {
  const refused = unsupported(options, 'skyrl');
  if (refused !== null) return { ok: false, reason: refused };
  return translate(options as RlRunOptions);
}

function translate(o: RlRunOptions): SkyrlExport {
  const log = new MappingLog();
  const keys = new Map<string, Value | Raw>();
  const launch = new Set<string>();
  const put = (key: string, to: Value | Raw) => keys.set(key, to);
  const set: SetFn = (path, value, key, to, note) => {
    log.map(path, value, key, to, note);
    put(key, to);
  };
  const fixed = (key: string, to: Value | Raw) => {
    put(key, to);
    launch.add(key);
  };
  const ppo = isFamily(o, 'ppo');
  const turns = 'maxTurns' in o ? o.maxTurns : 1;
  const P = o.prompts;
  const G = o.group;
  const M = o.miniBatches;

  log.none(
    'preset',
    o.preset,
    `the task (${taskOf(o)}) is not a SkyRL option: data.train_data/val_data hold its prompts, and skyrl_env.py's ` +
      `${SKYRL_ENV} environment scores them with reward.py`,
  );
  environmentUnmapped(o, log, 'skyrl');
  // One file each, as a list of quoted strings (a path may hold characters OmegaConf would parse).
  fixed('data.train_data', new Raw("['$TRAIN_FILES']"));
  fixed('data.val_data', new Raw("['$VAL_FILES']"));
  fixed('trainer.policy.model.path', '$MODEL_PATH');
  fixed('environment.env_class', SKYRL_ENV);
  fixed('trainer.logger', 'console');
  if (ppo) {
    set('preset', o.preset, `${ALG}.advantage_estimator`, 'gae', "PPO: GAE over the critic's values");
    fixed('trainer.critic.model.path', '$MODEL_PATH');
  }

  // Run length, batch shape, seed.
  set(
    'steps',
    o.steps,
    'trainer.max_training_steps',
    o.steps,
    'one SkyRL training step = one batch of prompts, as a Dewpoint step',
  );
  set(
    'steps',
    o.steps,
    'trainer.epochs',
    o.steps,
    'an upper bound (an epoch has at least one batch) so that max_training_steps decides',
  );
  set('seed', o.seed, 'trainer.seed', o.seed, 'the same number seeds another generator: the samples differ');
  set('prompts', P, 'trainer.train_batch_size', P, 'counted in prompts, as Dewpoint');
  set('group', G, 'generator.n_samples_per_prompt', G);
  let miniPrompts = P;
  if (P % M === 0) {
    miniPrompts = P / M;
    set(
      'miniBatches',
      M,
      'trainer.policy_mini_batch_size',
      miniPrompts,
      `counted in prompts: ${M} optimizer steps per pass`,
    );
  } else {
    fixed('trainer.policy_mini_batch_size', P);
    log.none(
      'miniBatches',
      M,
      `SkyRL splits a batch by prompts and requires train_batch_size % policy_mini_batch_size = 0: ${P} / ${M} is not ` +
        `whole (exported as one mini-batch of ${P} prompts)`,
    );
  }
  if (ppo) fixed('trainer.critic_mini_batch_size', miniPrompts);
  // One micro-batch per mini-batch on one GPU (validate_batch_sizes: the mini-batch per GPU divides by it).
  fixed('trainer.micro_train_batch_size_per_gpu', miniPrompts * G);
  fixed('trainer.micro_forward_batch_size_per_gpu', miniPrompts * G);
  set('epochs', o.epochs, 'trainer.update_epochs_per_batch', o.epochs);

  optimizer(o, log, set, ppo);

  // Sampling. SkyRL copies the sampling temperature to trainer.algorithm.temperature, which scales the trainer's logits.
  set(
    'temperature',
    o.temperature,
    'generator.sampling_params.temperature',
    o.temperature,
    'the trainer scores at it too',
  );
  set(
    'topK',
    o.topK,
    'generator.sampling_params.top_k',
    o.topK === 0 ? -1 : o.topK,
    o.topK === 0 ? 'off: SkyRL writes -1' : undefined,
  );
  set('topP', o.topP, 'generator.sampling_params.top_p', o.topP);
  set('maxNew', o.maxNew, 'generator.sampling_params.max_generate_length', o.maxNew);
  if ('maxTurns' in o) {
    if (turns > 1)
      log.none(
        'maxTurns',
        turns,
        `skyrl_env.py's step scores one action and ends the episode: the environment's answers (Dewpoint's ${presetOf(o).episodes} ` +
          'episodes) are not written for SkyRL, so it runs one turn (generator.max_turns 1)',
      );
    else log.asDefault('maxTurns', turns, "one action per episode: SkyRL's generator.max_turns default");
  }
  if ('envErrorLimit' in o && o.envErrorLimit !== undefined)
    log.none(
      'envErrorLimit',
      o.envErrorLimit,
      "SkyRL has no share of failed episodes that stops a run: an environment's exception fails the step",
    );
  if ('trainProblems' in o && o.trainProblems !== undefined)
    log.none(
      'trainProblems',
      o.trainProblems,
      'SkyRL has no cap on the rows it reads: train.parquet holds the prompts the run sampled, and SkyRL passes over all of them',
    );
  if ('renormalize' in o && o.renormalize !== undefined) {
    if (o.renormalize)
      log.none('renormalize', true, 'SkyRL scores the full softmax: no renormalisation over the top-k/top-p support');
    else log.asDefault('renormalize', false, 'the full softmax, as SkyRL');
  }

  policyLoss(o, log, set);
  aggregation(o, log, set, fixed, turns);
  if (ppo) critic(o as PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions, log, set);
  else advantage(o as GrpoRunOptions, log, set, fixed);
  if (o.truncation === 'mask')
    set(
      'truncation',
      'mask',
      'generator.apply_overlong_filtering',
      true,
      'a response cut at its limit (no EOS) leaves the loss mask, as DAPO overlong filtering',
    );
  else log.asDefault('truncation', 'score', 'SkyRL trains truncated responses on their reward');
  if (o.filterGroups) {
    set(
      'filterGroups',
      o.filterGroups,
      `${ALG}.dynamic_sampling.type`,
      'filter',
      "DAPO's filter: groups whose rewards all agree are dropped",
    );
    if (o.filterGroups === 'success')
      log.none(
        'filterGroups',
        'success',
        "SkyRL filters on the reward trained on, not on success before shaping (Dewpoint's score)",
      );
    set(
      'maxGenBatches',
      o.maxGenBatches ?? 10,
      `${ALG}.dynamic_sampling.max_sample_batches`,
      o.maxGenBatches ?? 10,
      'SkyRL stops sampling there; Dewpoint trains on the groups kept',
    );
  }
  if (o.overlongBuffer !== undefined) {
    log.none(
      'overlongBuffer',
      o.overlongBuffer,
      "SkyRL's core has no overlong reward shaping: its DAPO example adds it in its own trainer",
    );
    log.none(
      'overlongPenalty',
      o.overlongPenalty ?? 1,
      'read only with the overlong buffer',
      o.overlongPenalty === undefined,
    );
  }

  // KL to the reference, as a loss term.
  set(
    'beta',
    o.beta,
    `${ALG}.use_kl_loss`,
    o.beta > 0,
    o.beta > 0 ? undefined : 'β = 0: no reference model (SkyRL defaults to true)',
  );
  if (o.beta > 0) set('beta', o.beta, `${ALG}.kl_loss_coef`, o.beta);
  set(
    'kl.estimator',
    o.kl.estimator,
    `${ALG}.kl_estimator_type`,
    SKYRL_KL_TYPE[o.kl.estimator],
    o.beta > 0 ? undefined : 'unused at β = 0',
  );
  if (o.kl.estimator.endsWith('+'))
    log.none(
      'kl.estimator',
      o.kl.estimator,
      "SkyRL has no straight-through form: its KL term's gradient is the estimator's own",
    );
  if (o.kl.compat !== undefined) {
    if (o.kl.compat === 'trl' && o.kl.estimator.startsWith('k3'))
      log.none(
        'kl.compat',
        'trl',
        "TRL's k3 is unclamped; SkyRL's k3 clamps the log-ratio to ±20 and the value to ±10",
      );
    else log.resolved('kl.compat', o.kl.compat, "k3 clamped as SkyRL's k3 (±20, ±10)");
  }

  corrections(o, log, set);
  entropyBonus(o, log, set);
  if (o.staleness)
    log.none(
      'staleness',
      o.staleness,
      "SkyRL's fully async trainer (trainer.fully_async.max_staleness_steps) starts from its own entrypoint " +
        '(examples/train/fully_async/main_fully_async.py), not main_base: this launch trains synchronously',
    );
  if (o.samplerWorker)
    log.none(
      'samplerWorker',
      true,
      "where Dewpoint's batches sampled ahead draw has no option: SkyRL samples on its inference engines",
    );
  if (o.samplerBf16)
    log.none(
      'samplerBf16',
      true,
      "the mismatch lab's injected gap has no option: SkyRL's engines hold their own weights (inference_engine.model_dtype)",
    );
  if (o.samplerTemperature !== undefined)
    log.none(
      'samplerTemperature',
      o.samplerTemperature,
      "the mismatch lab's injected gap has no option: SkyRL samples and scores at one temperature",
    );
  if (o.offPolicyMask !== undefined)
    log.none(
      'offPolicyMask',
      o.offPolicyMask,
      "SkyRL has no off-policy sequence mask (TRL's OPSM): its off_policy_correction masks (geo_mask, outlier tokens) " +
        "ignore the advantage's sign",
    );
  if (o.topEntropyQuantile !== undefined)
    log.none(
      'topEntropyQuantile',
      o.topEntropyQuantile,
      "SkyRL has no high-entropy token mask (TRL's top_entropy_quantile)",
    );
  if (o.loraRank !== undefined) {
    const targets = o.loraTargets ?? 'all-linear';
    const lora = 'trainer.policy.model.lora';
    set('loraRank', o.loraRank, `${lora}.rank`, o.loraRank);
    set('loraAlpha', o.loraAlpha ?? o.loraRank, `${lora}.alpha`, o.loraAlpha ?? o.loraRank);
    if (targets === 'all-linear') set('loraTargets', targets, `${lora}.target_modules`, targets);
    else
      log.none(
        'loraTargets',
        targets,
        "SkyRL's target_modules is one string (all-linear): a module list is not exported, SkyRL takes all-linear",
      );
    set('loraDropout', o.loraDropout ?? 0, `${lora}.dropout`, o.loraDropout ?? 0);
  }
  if (o.idsPerPass !== undefined)
    log.none(
      'idsPerPass',
      o.idsPerPass,
      "a memory setting of this machine: SkyRL's nearest is max_tokens_per_microbatch, to be sized for the cluster's GPUs",
    );
  if (o.frozenWeights !== undefined)
    log.none(
      'frozenWeights',
      o.frozenWeights,
      "a memory setting of this machine: SkyRL holds its reference in its FSDP config's param dtype",
    );
  if (o.recomputeLayers !== undefined)
    set('recomputeLayers', o.recomputeLayers, 'trainer.gradient_checkpointing', o.recomputeLayers);

  evaluation(o, log, set);
  set(
    'checkpointEvery',
    o.checkpointEvery,
    'trainer.ckpt_interval',
    o.checkpointEvery > 0 ? o.checkpointEvery : o.steps,
    o.checkpointEvery > 0 ? undefined : '0 = at the end only: every `steps` steps',
  );

  const overrides = [...keys].map(([k, v]) => `${k}=${v instanceof Raw ? v.text : hydraValue(v)}`);
  return {
    ok: true,
    command: [SKYRL_ENTRY, ...overrides.map(shellWord)].join(' \\\n    '),
    overrides,
    launch: overrides.filter((s) => launch.has(s.slice(0, s.indexOf('=')))),
    mapped: log.mapped,
    unmapped: log.unmapped,
  };
}

function optimizer(o: RlRunOptions, log: MappingLog, set: SetFn, ppo: boolean): void {
  const perBatch = o.miniBatches * o.epochs;
  for (const optim of ppo
    ? ['trainer.policy.optimizer_config', 'trainer.critic.optimizer_config']
    : ['trainer.policy.optimizer_config']) {
    const critic = optim.startsWith('trainer.critic');
    set(
      'lr',
      o.lr,
      `${optim}.lr`,
      o.lr,
      critic
        ? "Dewpoint's value head shares the policy's optimizer and learning rate; SkyRL trains the critic as its own model"
        : undefined,
    );
    const schedule = o.lrSchedule ?? 'constant';
    set(
      'lrSchedule',
      schedule,
      `${optim}.scheduler`,
      schedule === 'cosine' ? 'cosine' : 'constant_with_warmup',
      "transformers' get_scheduler",
    );
    if (schedule === 'cosine')
      log.none(
        'lrSchedule',
        'cosine',
        "SkyRL steps its scheduler per mini-batch over its own count of optimizer steps; Dewpoint's cosine runs per batch over `steps`",
      );
    set(
      'lrWarmup',
      o.lrWarmup ?? 0,
      `${optim}.num_warmup_steps`,
      (o.lrWarmup ?? 0) * perBatch,
      `SkyRL counts optimizer steps: ${perBatch} per batch (mini-batches × epochs)`,
    );
    if (o.lrSchedule === 'cosine' && (o.minLrRatio ?? 0) > 0)
      log.none('minLrRatio', o.minLrRatio, "transformers' cosine ends at 0: SkyRL's optimizer_config has no floor");
    else if (o.minLrRatio !== undefined)
      log.asDefault('minLrRatio', o.minLrRatio, 'a floor of 0, or read only with a cosine');
    set('beta1', o.beta1, `${optim}.adam_betas`, [o.beta1, o.beta2]);
    set('beta2', o.beta2, `${optim}.adam_betas`, [o.beta1, o.beta2]);
    set(
      'weightDecay',
      o.weightDecay,
      `${optim}.weight_decay`,
      o.weightDecay,
      o.weightDecay > 0 ? 'SkyRL decays every parameter; Dewpoint only the matrices' : undefined,
    );
    set('maxGradNorm', o.maxGradNorm, `${optim}.max_grad_norm`, o.maxGradNorm);
  }
  if (o.eps === 1e-8) log.asDefault('eps', o.eps, "torch AdamW's default, which SkyRL builds without an eps key");
  else log.none('eps', o.eps, 'SkyRL builds torch AdamW without eps (its default 1e-8): no key sets it');
}

/** Lists every option set under `prefix` as having no equivalent. */

function policyLoss(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const p = o.policyLoss;
  const s = lossSettings(p);
  const type = `${ALG}.policy_loss_type`;
  const clips = (
    low: number,
    high: number,
    lowKey = `${ALG}.eps_clip_low`,
    highKey = `${ALG}.eps_clip_high`,
    lowPath = 'clipLow',
    highPath = 'clipHigh',
  ) => {
    set(`policyLoss.${lowPath}`, low, lowKey, low, isSet(p, lowPath) ? undefined : "unset: Dewpoint's default");
    set(`policyLoss.${highPath}`, high, highKey, high, isSet(p, highPath) ? undefined : 'unset: ε low');
  };
  const compat = (what: string) => {
    if ('compat' in p && p.compat !== undefined) log.resolved('policyLoss.compat', p.compat, what);
  };
  const clamp20 = (path: string, value: number) => {
    if (value === 20) {
      if (isSet(p, path.split('.')[1]))
        log.asDefault(path, 20, 'SkyRL always clamps logp − old to ±20 (not configurable)');
    } else
      log.none(
        path,
        bound(value),
        'SkyRL always clamps logp − old to ±20 (not configurable)',
        !isSet(p, path.split('.')[1]),
      );
  };
  switch (s.name) {
    case 'ppo': {
      // TRL's δ caps r in the unclipped term: for δ > 1 + ε_high that is a dual clip at δ (verl.ts).
      const deltaActs = Number.isFinite(s.delta) && s.delta > 1 + s.clipHigh;
      const c = Math.min(s.dualClip, deltaActs ? s.delta : Infinity);
      set(
        'policyLoss.name',
        'ppo',
        type,
        Number.isFinite(c) ? 'dual_clip' : 'regular',
        Number.isFinite(c) ? 'dual clip on negative advantages' : undefined,
      );
      clips(s.clipLow, s.clipHigh);
      if (Number.isFinite(s.delta) && !deltaActs)
        log.none(
          'policyLoss.delta',
          s.delta,
          `TRL δ ≤ 1 + ε_high (${1 + s.clipHigh}) also caps positive-advantage tokens; SkyRL's dual clip bounds only negative ones`,
        );
      if (Number.isFinite(c)) {
        if (isSet(p, 'dualClip') || !deltaActs) set('policyLoss.dualClip', bound(s.dualClip), `${ALG}.clip_ratio_c`, c);
        if (deltaActs)
          set(
            'policyLoss.delta',
            s.delta,
            `${ALG}.clip_ratio_c`,
            c,
            "TRL's δ > 1 + ε_high bounds a negative-advantage token's loss at −A·δ",
          );
      } else
        log.asDefault(
          'policyLoss.dualClip',
          'none',
          `no dual clip under compat ${s.compat}: policy_loss_type regular`,
          true,
        );
      clamp20('policyLoss.logRatioClamp', s.logRatioClamp);
      compat(`resolved: dual clip ${bound(s.dualClip)}, log-ratio clamp ${bound(s.logRatioClamp)}`);
      return;
    }
    case 'gspo':
      set(
        'policyLoss.name',
        'gspo',
        type,
        'gspo',
        'GSPO-token; SkyRL reduces it by loss_reduction (it recommends sequence_mean)',
      );
      clips(s.clipLow, s.clipHigh);
      if (s.logRatioCap === 10) {
        if (isSet(p, 'logRatioCap'))
          log.asDefault(
            'policyLoss.logRatioCap',
            10,
            "SkyRL's gspo caps the log of the sequence ratio at 10 (not configurable)",
          );
      } else
        log.none(
          'policyLoss.logRatioCap',
          bound(s.logRatioCap),
          "SkyRL's gspo always caps the log of the sequence ratio at 10",
          !isSet(p, 'logRatioCap'),
        );
      compat(`resolved: log-ratio cap ${bound(s.logRatioCap)}`);
      return;
    case 'cispo':
      if (s.compat === 'trl') {
        log.noneAll(
          'policyLoss',
          p,
          "TRL's cispo (an upper cap on the ratio only) is not SkyRL's cispo, which clips both sides around 1",
        );
        return;
      }
      set('policyLoss.name', 'cispo', type, 'cispo', 'anchored on the old policy (cispo_anchor old, its default)');
      clips(s.clipLow, s.clipHigh, `${ALG}.cispo.cispo_eps_clip_low`, `${ALG}.cispo.cispo_eps_clip_high`);
      if (isSet(p, 'cap'))
        log.asDefault('policyLoss.cap', s.cap, 'used only under compat trl (unused here, as in SkyRL)');
      compat('resolved: the two-sided clip, as SkyRL');
      return;
    case 'reinforce':
      set(
        'policyLoss.name',
        'reinforce',
        type,
        'importance_sampling',
        "−r·A with r = π/π_old: its gradient is REINFORCE's −A·∇logp while r = 1 (one mini-batch, one epoch)",
      );
      if (o.miniBatches * o.epochs > 1)
        log.none(
          'policyLoss.name',
          'reinforce',
          `${o.miniBatches * o.epochs} updates per batch: after the first, SkyRL's r·A is not −A·logp (SkyRL has no plain REINFORCE loss)`,
        );
      return;
    case 'dppo_tv':
    case 'dppo_kl': {
      if (s.name === 'dppo_kl' && s.compat === 'rllm') {
        log.noneAll('policyLoss', p, "rLLM's dppo_kl (clamped binary KL, one δ) is not SkyRL's binary_kl");
        return;
      }
      set('policyLoss.name', s.name, type, 'dppo');
      set('policyLoss.name', s.name, `${ALG}.dppo.dppo_type`, s.name === 'dppo_tv' ? 'binary_tv' : 'binary_kl');
      clips(s.deltaLow, s.deltaHigh, `${ALG}.dppo.delta_low`, `${ALG}.dppo.delta_high`, 'deltaLow', 'deltaHigh');
      if (Number.isFinite(s.truncation))
        log.none(
          'policyLoss.truncation',
          s.truncation,
          "SkyRL's dppo does not truncate the ratio",
          !isSet(p, 'truncation'),
        );
      else if (isSet(p, 'truncation')) log.asDefault('policyLoss.truncation', 'none', "no truncation, as SkyRL's dppo");
      compat(`resolved: truncation ${bound(s.truncation)}`);
      return;
    }
    case 'icepop':
      // rLLM's −A·d·logp·1[α ≤ d ≤ β] against the sampler is SkyRL's rollout_is with the band (1 − ε_low, 1 + ε_high).
      set(
        'policyLoss.name',
        'icepop',
        type,
        'rollout_is',
        'ratios against the sampler outside the band are zeroed (open interval)',
      );
      set(
        'policyLoss.alpha',
        s.alpha,
        `${ALG}.eps_clip_low`,
        1 - s.alpha,
        `1 − α${isSet(p, 'alpha') ? '' : ' (unset: 0.5)'}`,
      );
      set(
        'policyLoss.beta',
        s.beta,
        `${ALG}.eps_clip_high`,
        s.beta - 1,
        `β − 1${isSet(p, 'beta') ? '' : ' (unset: 5)'}`,
      );
      return;
    case 'reinforce_kl':
      log.noneAll(
        'policyLoss',
        p,
        'SkyRL has no reinforce_kl (rLLM: REINFORCE with KL terms to the sampler); its default regular PPO runs instead',
      );
      return;
    case 'geo_mean':
      log.noneAll('policyLoss', p, 'SkyRL has no geo_mean (GMPO) loss; its default regular PPO runs instead');
      return;
    case 'clip_cov': {
      set('policyLoss.name', 'clip_cov', type, 'clip_cov');
      clips(s.clipLow, s.clipHigh);
      const unset = (key: string, v: number) => (isSet(p, key) ? undefined : `unset: ${v}`);
      set('policyLoss.ratio', s.ratio, `${ALG}.clip_cov.clip_ratio`, s.ratio, unset('ratio', s.ratio));
      set('policyLoss.lb', s.lb, `${ALG}.clip_cov.clip_cov_lb`, s.lb, unset('lb', s.lb));
      set('policyLoss.ub', s.ub, `${ALG}.clip_cov.clip_cov_ub`, s.ub, unset('ub', s.ub));
      return;
    }
    case 'kl_cov':
      set('policyLoss.name', 'kl_cov', type, 'kl_cov');
      set(
        'policyLoss.ratio',
        s.ratio,
        `${ALG}.kl_cov.kl_cov_frac`,
        s.ratio,
        isSet(p, 'ratio') ? undefined : `unset: ${s.ratio} (SkyRL's default is 0.2)`,
      );
      set(
        'policyLoss.coef',
        s.coef,
        `${ALG}.kl_cov.ppo_kl_coef`,
        s.coef,
        isSet(p, 'coef') ? undefined : `unset: ${s.coef} (SkyRL's default is 1)`,
      );
      return;
    case 'sapo':
      set('policyLoss.name', 'sapo', type, 'sapo', 'SkyRL recommends sequence_mean with it');
      set(
        'policyLoss.tauPos',
        s.tauPos,
        `${ALG}.sapo.tau_pos`,
        s.tauPos,
        isSet(p, 'tauPos') ? undefined : 'unset: 1, as SkyRL',
      );
      set(
        'policyLoss.tauNeg',
        s.tauNeg,
        `${ALG}.sapo.tau_neg`,
        s.tauNeg,
        isSet(p, 'tauNeg') ? undefined : 'unset: 1.05, as SkyRL',
      );
      if (s.compat === 'trl')
        log.none('policyLoss.compat', 'trl', 'SkyRL always clamps logp − old to ±20 (not configurable)');
      else compat('resolved: the ±20 clamp, as SkyRL');
      return;
    case 'dro':
      log.noneAll('policyLoss', p, 'SkyRL has no DRO loss; its default regular PPO runs instead');
      return;
    case 'vespo':
      log.noneAll('policyLoss', p, "SkyRL has no VESPO loss (TRL's vespo); its default regular PPO runs instead");
      return;
  }
}

function aggregation(
  o: RlRunOptions,
  log: MappingLog,
  set: SetFn,
  fixed: (key: string, to: Value) => void,
  turns: number,
): void {
  const a = o.aggregation;
  const key = `${ALG}.loss_reduction`;
  const width = o.maxNew * turns;
  const sumNorm = (path: string, value: number | undefined, what: string) => {
    if (value !== undefined) set(path, value, `${ALG}.max_seq_len`, value);
    else {
      fixed(`${ALG}.max_seq_len`, width);
      log.none(
        path,
        'the batch width',
        `${what} defaults to the packed batch width; SkyRL requires max_seq_len, written as the response budget ${width}`,
        true,
      );
    }
  };
  switch (a.mode) {
    case 'token-mean':
      set('aggregation.mode', a.mode, key, 'token_mean', 'over the mini-batch');
      return;
    case 'seq-mean-token-mean':
      set('aggregation.mode', a.mode, key, 'sequence_mean');
      return;
    case 'token-sum':
    case 'seq-mean-token-sum':
      log.none(
        'aggregation.mode',
        a.mode,
        "SkyRL's reductions (token_mean, sequence_mean, seq_mean_token_sum_norm, prompt_mean) have no token sum: it runs token_mean",
      );
      return;
    case 'seq-mean-token-sum-norm':
      set('aggregation.mode', a.mode, key, 'seq_mean_token_sum_norm', 'Σ/(sequences·max_seq_len)');
      sumNorm('aggregation.lossScaleFactor', a.lossScaleFactor, 'K');
      if (a.compat === 'verl-legacy')
        log.none('aggregation.compat', a.compat, 'verl before #5417 did not divide by the sequence count; SkyRL does');
      else if (a.compat !== undefined) log.resolved('aggregation.compat', a.compat, 'Σ/(K·sequences), as SkyRL');
      return;
    case 'grpo':
      set(
        'aggregation.mode',
        'grpo',
        key,
        'sequence_mean',
        "TRL's grpo counts fully masked rows in the mean; SkyRL clamps their token count at 1",
      );
      return;
    case 'dr_grpo':
      set('aggregation.mode', 'dr_grpo', key, 'seq_mean_token_sum_norm', 'Σ/(sequences·L_max)');
      sumNorm('aggregation.maxCompletionLength', a.maxCompletionLength, 'L_max');
      return;
    case 'session-mean':
      set(
        'aggregation.mode',
        'session-mean',
        key,
        'sequence_mean',
        'equal when each session packs as one sequence (single-turn); SkyRL has no sessions',
      );
      return;
  }
}

function advantage(o: GrpoRunOptions, log: MappingLog, set: SetFn, fixed: (key: string, to: Value) => void): void {
  const a = o.advantage;
  const s = advantageSettings(a);
  const adv = `${ALG}.advantage_estimator`;
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
        "SkyRL's grpo divides by the group's std or by nothing (grpo_norm_by_std); no batch std",
      );
    else
      set(
        'advantage.scale',
        s.scale,
        `${ALG}.grpo_norm_by_std`,
        s.scale === 'group',
        isSet(a, 'scale') ? undefined : 'unset: group',
      );
    fixedAs(
      'advantage.stdType',
      'stdType',
      s.stdType,
      s.stdType === 'unbiased',
      "SkyRL's grpo uses torch.std (unbiased, ddof 1)",
    );
    fixedAs(
      'advantage.epsilon',
      'epsilon',
      s.epsilon,
      s.epsilon === 1e-6,
      "SkyRL's grpo adds 1e-6 to the std (not configurable)",
    );
    fixedAs(
      'advantage.singleton',
      'singleton',
      s.singleton,
      s.singleton === 'raw',
      "SkyRL's grpo gives a one-member group r/(1+ε) (μ 0, σ 1)",
    );
  } else if (s.estimator === 'rloo') {
    set('advantage.estimator', 'rloo', adv, 'rloo');
    fixedAs(
      'advantage.singleton',
      'singleton',
      s.singleton,
      s.singleton === 'zero',
      "SkyRL's rloo gives a one-member group 0",
    );
    if (s.normalize)
      set('advantage.normalize', true, `${ALG}.advantage_batch_normalize`, true, "the training batch's mean and std");
    else log.asDefault('advantage.normalize', false, "no whitening, as SkyRL's default");
  } else if (s.estimator === 'reinforce++-baseline') {
    // SkyRL's reinforce++ whitens discounted returns over the batch with no group baseline: not the baseline variant.
    fixed(adv, 'grpo');
    log.noneAll(
      'advantage',
      a,
      "SkyRL's reinforce++ has no group baseline (it whitens the returns over the batch): the launch writes grpo instead",
    );
  } else if (s.estimator === 'otb' || s.estimator === 'otb-tir') {
    fixed(adv, 'grpo');
    log.noneAll(
      'advantage',
      a,
      "SkyRL has no per-token baseline (verl's optimal_token_baseline needs Σπ² from the policy's log-prob pass, " +
        'which SkyRL does not compute; its estimators are gae, grpo, rloo, reinforce++, maxrl): the launch writes grpo instead',
    );
  } else {
    fixed(adv, 'grpo');
    log.noneAll('advantage', a, `SkyRL has no ${s.estimator} estimator (verl's): the launch writes grpo instead`);
  }
  if ('compat' in a && a.compat !== undefined && s.estimator !== 'reinforce++-baseline')
    log.resolved(
      'advantage.compat',
      a.compat,
      'fills the estimator options left unset; each is exported or listed here',
    );
  if (o.maskZeroAdvantage)
    set(
      'maskZeroAdvantage',
      true,
      `${ALG}.zero_variance_filter`,
      true,
      'groups whose rewards agree within 1e-6 leave the loss',
    );
  else log.asDefault('maskZeroAdvantage', false, 'all-equal groups stay in the loss with advantage 0, as SkyRL');
}

function critic(o: PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions, log: MappingLog, set: SetFn): void {
  set('gamma', o.gamma, `${ALG}.gamma`, o.gamma);
  set('lam', o.lam, `${ALG}.lambd`, o.lam);
  if (o.shiftMean) log.asDefault('shiftMean', true, "SkyRL's GAE whitens with masked_whiten(shift_mean=True)");
  else log.none('shiftMean', false, "SkyRL's GAE always re-centres the whitened advantages");
  log.none(
    'valueCoefficient',
    o.valueCoefficient,
    "SkyRL trains the critic as a separate model with its own optimizer: no weight between the two losses (Dewpoint's value head shares the one loss)",
  );
  set('valueClip', o.valueClip, `${ALG}.value_clip`, o.valueClip);
}

/**
 * The entropy bonus: SkyRL subtracts entropy_loss_coef × masked_mean(entropy, loss_mask) per
 * micro-batch (skyrl_train workers/worker.py), a token mean; no adaptive coefficient.
 */
function entropyBonus(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const e = o.entropyBonus;
  if (e.kind === 'off')
    return log.asDefault('entropyBonus.kind', 'off', 'no entropy bonus (SkyRL use_entropy_loss false)');
  if (e.kind === 'adaptive')
    return log.noneAll(
      'entropyBonus',
      e,
      "SkyRL has only a static algorithm.entropy_loss_coef: no adaptive coefficient (TRL's use_adaptive_entropy)",
    );
  if (e.aggregation === 'loss' && o.aggregation.mode !== 'token-mean')
    return log.noneAll(
      'entropyBonus',
      e,
      `SkyRL's entropy term is a token mean, not the policy's aggregation (${o.aggregation.mode} here)`,
    );
  set('entropyBonus.kind', 'static', 'trainer.algorithm.use_entropy_loss', true);
  set(
    'entropyBonus.coef',
    e.coef,
    'trainer.algorithm.entropy_loss_coef',
    e.coef,
    "subtracted times masked_mean(entropy, loss_mask) per micro-batch (Dewpoint's per update: one micro-batch)",
  );
  log.resolved('entropyBonus.aggregation', e.aggregation, "SkyRL's token mean over the loss mask");
}

function corrections(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  const imp = o.importance;
  if (imp.kind === 'off') log.asDefault('importance.kind', 'off', 'no IS weights (tis_ratio_type null, SkyRL default)');
  else if (imp.kind === 'tis') {
    // SkyRL's TIS weight is min(exp(old − rollout), cap): decoupled, as Dewpoint's.
    set('importance.kind', 'tis', `${OPC}.tis_ratio_type`, imp.level);
    set('importance.level', imp.level, `${OPC}.tis_ratio_type`, imp.level);
    set('importance.cap', imp.cap, `${OPC}.${imp.level}_tis_ratio_clip_high`, imp.cap, 'w = min(old/rollout, cap)');
  } else if (imp.level === 'token') {
    // An IcePop band: a TIS weight capped at the band's top, and tokens outside the band masked.
    set('importance.kind', 'band', `${OPC}.tis_ratio_type`, 'token', 'the weight old/rollout, capped at the band top');
    set('importance.level', 'token', `${OPC}.tis_ratio_type`, 'token');
    set('importance.high', imp.high, `${OPC}.token_tis_ratio_clip_high`, imp.high);
    set('importance.low', imp.low, `${OPC}.token_mask_is_threshold_low`, imp.low, 'tokens below leave the loss mask');
    set(
      'importance.high',
      imp.high,
      `${OPC}.token_mask_is_threshold_high`,
      imp.high,
      'tokens above leave the loss mask',
    );
  } else
    log.noneAll(
      'importance',
      imp,
      "SkyRL masks whole sequences by a product band (sequence_mask_metric) but has no weight inside it: Dewpoint's sequence band is not exported",
    );
  if (imp.kind !== 'off' && !(imp.kind === 'band' && imp.level === 'sequence')) {
    if (imp.batchNormalize)
      log.none('importance.batchNormalize', true, 'SkyRL does not renormalise the IS weights over the batch');
    else log.asDefault('importance.batchNormalize', false, 'no renormalisation, as SkyRL');
  }
  for (const [k, v] of Object.entries(o.rejection))
    if (v !== undefined)
      log.none(
        `rejection.${k}`,
        v,
        "SkyRL's masks bound the ratio old/rollout per token, or a sequence's product or geometric mean, in its own band options: " +
          "Dewpoint's k1/k2/k3 rejection thresholds are not exported",
      );
}

function evaluation(o: RlRunOptions, log: MappingLog, set: SetFn): void {
  set(
    'evalEvery',
    o.evalEvery,
    'trainer.eval_interval',
    o.evalEvery > 0 ? o.evalEvery : -1,
    o.evalEvery > 0 ? undefined : 'off: SkyRL evaluates only at a positive interval',
  );
  set(
    'evalEvery',
    o.evalEvery,
    'trainer.eval_before_train',
    o.evalEvery > 0,
    'Dewpoint evaluates before the first step when it evaluates at all',
  );
  log.asDefault(
    'evalN',
    o.evalN,
    "val.parquet holds the run's held-out tasks and SkyRL evaluates every row, greedy (eval_sampling_params' default temperature 0)",
  );
  if (o.evalSamples) {
    const ev = 'generator.eval_sampling_params';
    set(
      'evalSamples',
      o.evalSamples,
      'generator.eval_n_samples_per_prompt',
      o.evalSamples,
      'sampled: Dewpoint runs the greedy pass too; SkyRL one',
    );
    set('temperature', o.temperature, `${ev}.temperature`, o.temperature);
    set('topK', o.topK, `${ev}.top_k`, o.topK === 0 ? -1 : o.topK);
    set('topP', o.topP, `${ev}.top_p`, o.topP);
    set('maxNew', o.maxNew, `${ev}.max_generate_length`, o.maxNew);
  }
}
