/**
 * Run options: what a person sets for each preset (the form, the config JSON, the CLI's
 * `--config`), the presets as the Experiments view lists them, and the form's field specs.
 * worker/presets/schema.ts holds each field's range and meaning and checks that these types are
 * exactly what its schemas accept; worker/presets/table.ts holds each preset. Types (and two
 * lists) only; part of the contract protocol.ts re-exports.
 */

/** Options of an SFT run a person can set (the rest comes from the preset). */
export interface SftRunOptions {
  /** Supervised training from scratch. */
  preset: 'sft-arith';
  /** Optimizer steps, 1..5000. */
  steps: number;
  /** Peak learning rate, (0, 0.1]. */
  lr: number;
  /** Seed of the weight init and the task stream. */
  seed: number;
  /** Evaluate held-out accuracy every N steps (0: never), on `evalN` tasks (1..1000). */
  evalEvery: number;
  evalN: number;
  /** Export a checkpoint every N steps (0: only at the end); the latest is kept for download. */
  checkpointEvery: number;
}

/** Which framework's behaviour an option left unset reproduces (worker/rl/compat.ts). */
export type CompatName = 'verl' | 'trl' | 'rllm';

/**
 * The policy loss by registry name with that loss's options (worker/rl/losses). An option left
 * out takes the loss's default (often per `compat`). `echo` is not offered: it needs environment
 * observation tokens, which the single-turn arithmetic task does not have.
 */
export type PolicyLossRunOptions =
  | {
      name: 'ppo';
      clipLow?: number;
      clipHigh?: number;
      dualClip?: number;
      logRatioClamp?: number;
      delta?: number;
      compat?: CompatName;
    }
  | { name: 'gspo'; clipLow?: number; clipHigh?: number; logRatioCap?: number; compat?: CompatName }
  | { name: 'cispo'; clipLow?: number; clipHigh?: number; cap?: number; compat?: CompatName }
  | { name: 'reinforce' }
  | {
      name: 'dppo_tv' | 'dppo_kl';
      deltaLow?: number;
      deltaHigh?: number;
      truncation?: number;
      compat?: 'verl' | 'rllm';
    }
  | { name: 'icepop'; alpha?: number; beta?: number }
  | {
      name: 'reinforce_kl';
      bwdKlCoef?: number;
      fwdKlCoef?: number;
      klApprox: boolean;
      ratioClampMin?: number;
      ratioClampMax?: number;
    };

/** Loss aggregation (worker/rl/aggregate.ts); two modes take a constant (default: the batch width). */
export type AggregationRunOptions =
  | { mode: 'token-mean' | 'token-sum' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'session-mean' | 'grpo' }
  | { mode: 'seq-mean-token-sum-norm'; lossScaleFactor?: number; compat?: 'verl' | 'verl-legacy' }
  | { mode: 'dr_grpo'; maxCompletionLength?: number };

/** The outcome advantage estimator and its options (worker/rl/advantages); unset options follow `compat`. */
export type AdvantageRunOptions =
  | {
      estimator: 'grpo';
      scale?: 'group' | 'batch' | 'none';
      stdType?: 'unbiased' | 'population';
      epsilon?: number;
      singleton?: 'raw' | 'zero';
      compat?: CompatName;
    }
  | { estimator: 'rloo'; singleton?: 'raw' | 'zero'; normalize: boolean; compat?: CompatName }
  | { estimator: 'reinforce++-baseline'; shiftMean?: boolean; compat?: 'verl' | 'rllm' };

export type KlEstimatorName = 'k1' | 'abs' | 'k2' | 'k3' | 'k1+' | 'abs+' | 'k2+' | 'k3+';

/** Behavior-policy IS weights (worker/rl/corrections/is-weights.ts): none, a TIS cap, or an IcePop band. */
export type ImportanceRunOptions =
  | { kind: 'off' }
  | { kind: 'tis'; level: 'token' | 'sequence'; cap: number; batchNormalize: boolean }
  | { kind: 'band'; level: 'token' | 'sequence'; low: number; high: number; batchNormalize: boolean };

export type RejectionName =
  | 'token_k1'
  | 'token_k2'
  | 'token_k3'
  | 'seq_sum_k1'
  | 'seq_sum_k2'
  | 'seq_sum_k3'
  | 'seq_mean_k1'
  | 'seq_mean_k2'
  | 'seq_mean_k3'
  | 'seq_max_k2'
  | 'seq_max_k3';

/** The projections LoRA adapts, as the form offers them (PEFT target_modules; all-linear: all seven). */
export const LORA_TARGET_CHOICES = [
  'all-linear',
  'q_proj,v_proj',
  'q_proj,k_proj,v_proj,o_proj',
  'gate_proj,up_proj,down_proj',
] as const;
export type LoraTargetsChoice = (typeof LORA_TARGET_CHOICES)[number];

/**
 * Options of a GRPO run from the shipped base checkpoint; worker/presets/schema.ts holds each
 * field's range and meaning (the form shows them).
 */
/** How a model's weights are held (model.ts `storage`): f32, or the layer matrices as bf16. */
export const WEIGHT_STORAGES = ['f32', 'bf16'] as const;
export type WeightStorage = (typeof WEIGHT_STORAGES)[number];

export interface GrpoRunOptions {
  preset: 'grpo-arith';
  /** Optimizer steps (sampled batches). */
  steps: number;
  /** Learning rate (constant). */
  lr: number;
  /** Seed of the task stream and the samplers. */
  seed: number;
  /** Prompts per step and completions per prompt (the advantage group). */
  prompts: number;
  group: number;
  /** A training set of this many problems, in passes; absent: every training problem, i.i.d. */
  trainProblems?: number;
  /** Sampling: temperature, top-k (0: off), top-p (1: off), max new tokens. */
  temperature: number;
  topK: number;
  topP: number;
  maxNew: number;
  policyLoss: PolicyLossRunOptions;
  aggregation: AggregationRunOptions;
  advantage: AdvantageRunOptions;
  /** Mask sessions of all-equal groups. */
  maskZeroAdvantage: boolean;
  /** Truncated completions: no loss mass ('mask') or trained on their reward ('score'). */
  truncation: 'mask' | 'score';
  /** KL strength to the frozen starting weights (0: no reference) and the estimator. */
  beta: number;
  kl: { estimator: KlEstimatorName; compat?: CompatName };
  importance: ImportanceRunOptions;
  /** Rejection masks: k1 options take u (keep ratios in [1/u, u]), k2/k3 an upper bound; absent: off. */
  rejection: Partial<Record<RejectionName, number>>;
  /** AdamW and global-norm clipping. */
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  maxGradNorm: number;
  /** Passes over each sampled batch and optimizer steps per pass. */
  epochs: number;
  miniBatches: number;
  /** Learning-rate schedule per sampled batch (verl optim.lr_scheduler_type); absent: constant. */
  lrSchedule?: 'constant' | 'cosine';
  /** Batches of linear warmup from 0 (verl optim.lr_warmup_steps); absent: none. */
  lrWarmup?: number;
  /** The cosine's floor as a fraction of lr (verl optim.min_lr_ratio); absent: 0. */
  minLrRatio?: number;
  /** DAPO dynamic sampling: the metric a kept group varies on (verl algorithm.filter_groups.metric); absent: off. */
  filterGroups?: 'success' | 'score';
  /** Batches sampled at most per step (verl filter_groups.max_num_gen_batches); absent: 10. */
  maxGenBatches?: number;
  /** Samples per held-out task at the training temperature for pass@1 and pass@k; absent: greedy only. */
  evalSamples?: number;
  /** DAPO's soft overlong punishment: the ids of the buffer (verl reward_model.overlong_buffer.len); absent: off. */
  overlongBuffer?: number;
  /** Its penalty at the full budget (verl reward_model.overlong_buffer.penalty_factor); absent: 1. */
  overlongPenalty?: number;
  /** Asynchronous rollouts: batch k may sample under version k − 1 − s at the oldest (worker/train/scheduler.ts); absent: 0, synchronous. */
  staleness?: number;
  /** With a staleness bound, the batches sampled ahead draw in workers of their own (a Web Worker, a worker thread); absent: in the trainer. */
  samplerWorker?: boolean;
  /** Ids one training pass holds activations for (micro-batches, verl ppo_max_token_len_per_gpu); absent: a 1 GiB budget's. */
  idsPerPass?: number;
  /**
   * LoRA: the adapters' rank (PEFT r); absent: full fine-tuning. With `loraAlpha` (absent: the
   * rank), `loraTargets` (absent: all-linear) and `loraDropout` (PEFT lora_dropout; absent: 0).
   */
  loraRank?: number;
  loraAlpha?: number;
  loraTargets?: LoraTargetsChoice;
  loraDropout?: number;
  /** Per-layer activation recomputation; absent: on for models of 100M parameters or more. */
  recomputeLayers?: boolean;
  /** The reference's (full fine-tuning) or the LoRA base's weights as bf16; absent: f32. */
  frozenWeights?: WeightStorage;
  /** Train on log-probs renormalised over the sampler's top-k/top-p support; absent: off (the full softmax). */
  renormalize?: boolean;
  /** A person's prompt dataset instead of the arithmetic generator (worker/data/dataset.ts); absent: arithmetic. */
  dataset?: DatasetRunOptions;
  /** A person's own model (`useModel`) instead of the shipped arithmetic base; absent: the shipped base. */
  base?: BaseModelRunOptions;
  evalEvery: number;
  evalN: number;
  checkpointEvery: number;
}

/**
 * How a dataset's completions are scored (worker/rewards/dataset-reward.ts): `math` MathReward on
 * the last \boxed{}; `exact` the trimmed completion equals the ground truth; `regex` the last
 * match of `pattern` (its one capture group, or the whole match) equals it; `code` the companion
 * runs the completion's program on the ground truth's test cases.
 */
export interface DatasetRewardOptions {
  kind: 'math' | 'exact' | 'regex' | 'code';
  /** `regex` only (required there): a JavaScript regular expression with one capture group, or none. */
  pattern?: string;
}

/** One prompt of a dataset, as loaded: the prompt text, the ground truth as text, the record's other fields. */
export interface DatasetRecord {
  /** The prompt text (a chat list's user turns, joined by a newline). */
  prompt: string;
  /** A chat-list prompt's turns as given, rendered with a base's chat template when it has one (task-source.ts). */
  messages?: { role: string; content: string }[];
  /** The ground truth (a number as its text; test cases for `code` as JSON text). */
  answer: string;
  /** The record's other fields (verl's data_source, extra_info, ...), JSON values. */
  metadata?: Record<string, unknown>;
}

/**
 * A person's dataset carried in the run options (so a stored run continues after a reload):
 * `loadDataset` makes it from a file. The `heldOut` records whose prompts rank first by a fixed
 * hash are the held-out split (worker/data/dataset.ts `splitDataset`); the rest are trained on.
 */
export interface DatasetRunOptions {
  /** The file's name, as the person chose it. */
  name: string;
  format: 'jsonl' | 'parquet';
  records: DatasetRecord[];
  /** Records held out for evaluation (0..records − 1). */
  heldOut: number;
  reward: DatasetRewardOptions;
}

/**
 * A run's base when it is not the shipped one: a Hugging Face folder picked in the app
 * (`useModel`), by the id the worker keeps it under, its name and parameter count (shown with the
 * run). When the worker no longer holds it (after a reload), the run continues from its own
 * checkpoints, which carry the model and its tokenizer.
 */
export interface BaseModelRunOptions {
  kind: 'hf';
  /** `useModel`'s id: `hf-` and 16 hex digits of the model's hash. */
  id: string;
  /** The folder's name. */
  name: string;
  parameters: number;
}

/** The presets that run episodes of an environment (worker/episodes). */
export const EPISODE_PRESETS = ['grpo-calc', 'grpo-guess', 'grpo-code'] as const;

export type EpisodePreset = (typeof EPISODE_PRESETS)[number];

/**
 * Options of a GRPO run on episodes of an environment (`grpo-calc`: a calculator tool,
 * `grpo-guess`: guess a number from higher/lower answers, `grpo-code`: a program graded in the
 * companion), from that environment's base checkpoint: GRPO's options, `maxNew` per action, and
 * the turn limit.
 */
export interface EpisodeGrpoRunOptions extends Omit<
  GrpoRunOptions,
  'preset' | 'trainProblems' | 'renormalize' | 'dataset' | 'base'
> {
  preset: EpisodePreset;
  /** Turns (model actions) an episode may take before it is truncated (`max_turns`). */
  maxTurns: number;
  /** The share of a batch's episodes that may fail for the infrastructure before the run stops as failed; absent: 0.5. */
  envErrorLimit?: number;
}

/** One task of an environment program's task file (a JSONL line): what `reset` sends the program. */
export interface EnvTaskRecord {
  /** Unique in the file: the task's name in the journal, the views and the program's log. */
  id: string;
  /** The prompt in words (the views show it; the program may build its first context from it). */
  prompt: string;
  /** The expected answer ('' when the file gives none): the verifier's when the program gives no reward. */
  answer: string;
  /** Anything else the program needs (JSON), passed through as the task's `data`. */
  data: Record<string, unknown>;
}

/**
 * A person's environment program and its tasks (grpo-env), carried in the run options so a
 * stored run continues, and its episodes replay, with the same program after a reload:
 * `loadEnvironment` makes it from the two files. The run refuses a program whose text no longer
 * has the recorded `sha256`.
 */
export interface EnvProgramRunOptions {
  program: {
    /** The file's name, as the person chose it (`calc_env.py`): the companion writes it under this name. */
    name: string;
    text: string;
    /** SHA-256 of `text` (UTF-8), hex: which program the run trains on. */
    sha256: string;
    /** The command the companion starts in the session's job directory (`python3 -I -S calc_env.py`). */
    argv: string[];
  };
  tasks: {
    /** The task file's name. */
    name: string;
    records: EnvTaskRecord[];
    /** Tasks held out for evaluation: the first by a fixed hash of their prompts and data (worker/episodes/program.ts `splitTasks`). */
    heldOut: number;
  };
}

/**
 * Options of a GRPO run on a person's environment program (grpo-env): the episode options, the
 * companion's wall per request, and the program with its tasks (required to start; the form
 * starts without one).
 */
export interface EnvRunOptions extends Omit<EpisodeGrpoRunOptions, 'preset'> {
  preset: 'grpo-env';
  /** Seconds the companion gives the program for one reset or step (its wall per request). */
  stepSeconds: number;
  environment?: EnvProgramRunOptions;
}

/**
 * Options of a PPO run from the arithmetic base (ppo-arith): GRPO's sampling, policy loss,
 * corrections and optimizer; no outcome estimator (GAE over the critic's values gives each token
 * its advantage); and the critic's options.
 */
export interface PpoRunOptions extends Omit<
  GrpoRunOptions,
  'preset' | 'advantage' | 'maskZeroAdvantage' | 'trainProblems'
> {
  preset: 'ppo-arith';
  /** GAE discount γ and λ (verl algorithm.gamma, algorithm.lam). */
  gamma: number;
  lam: number;
  /** Re-centre the whitened advantages (verl masked_whiten shift_mean). */
  shiftMean: boolean;
  /** Weight of the value loss in the one loss, and the value clip range. */
  valueCoefficient: number;
  valueClip: number;
}

/** Options of a PPO run on multi-turn episodes (ppo-calc): PPO's, the turn limit and `maxNew` per action. */
export interface PpoEpisodeRunOptions extends Omit<PpoRunOptions, 'preset' | 'renormalize' | 'dataset' | 'base'> {
  preset: 'ppo-calc';
  maxTurns: number;
  envErrorLimit?: number;
}

/** Options of a PPO run on a person's environment program (ppo-env): ppo-calc's, the wall per request and the program. */
export interface PpoEnvRunOptions extends Omit<PpoEpisodeRunOptions, 'preset'> {
  preset: 'ppo-env';
  /** Seconds the companion gives the program for one reset or step (its wall per request). */
  stepSeconds: number;
  environment?: EnvProgramRunOptions;
}

/**
 * Options of a Flow-GRPO run on 2-D points (flowgrpo-2d, worker/flow): a small rectified-flow
 * policy pretrained by flow matching at the start of the run, then GRPO on its SDE samples with a
 * "land inside this shape" reward.
 */
export interface FlowRunOptions {
  preset: 'flowgrpo-2d';
  steps: number;
  lr: number;
  seed: number;
  /** Groups per step (each shares its starting noise) and samples per group. */
  groups: number;
  group: number;
  /** Denoising steps of the SDE sampler and its noise level a (σ_t = a·√(t/(1−t))). */
  sdeSteps: number;
  noiseLevel: number;
  /** PPO ratio band 1 ± clipRange, advantage clip, KL strength to the pretrained policy. */
  clipRange: number;
  advClipMax: number;
  beta: number;
  epochs: number;
  miniBatches: number;
  /** The shape to land in, and the length scale of the smooth reward outside it (0: 0/1 reward). */
  target: 'ring' | 'discs';
  smooth: number;
  /** Flow-matching steps that make the starting policy (from N(0, I) to three blobs). */
  pretrainSteps: number;
  evalEvery: number;
  /** Fixed starting points whose ODE samples are scored (the accuracy: the fraction inside the shape). */
  evalN: number;
  checkpointEvery: number;
}

/** Options of a DPO run from the shipped base checkpoint (pairs from the base model's samples). */
export interface DpoRunOptions {
  preset: 'dpo-arith';
  steps: number;
  lr: number;
  seed: number;
  /** Preference pairs per step. */
  pairs: number;
  /** DPO β (τ for IPO). */
  beta: number;
  /** The DPO variant (worker/rl/dpo.ts) and its label smoothing (sigmoid: cDPO, robust). */
  loss: { type: 'sigmoid' | 'robust'; labelSmoothing?: number } | { type: 'ipo' | 'hinge' };
  /** Weight of the NLL term on chosen completions (TRL rpo_alpha). */
  nllWeight: number;
  /** Completions sampled per prompt to find a pair, their temperature and length. */
  samplesPerPrompt: number;
  temperature: number;
  maxNew: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  maxGradNorm: number;
  /** Ids one training pass holds activations for, as GRPO's; absent: a 1 GiB budget's. */
  idsPerPass?: number;
  /** LoRA, as GRPO's (GrpoRunOptions `loraRank`); absent: full fine-tuning. */
  loraRank?: number;
  loraAlpha?: number;
  loraTargets?: LoraTargetsChoice;
  loraDropout?: number;
  /** Per-layer activation recomputation, as GRPO's. */
  recomputeLayers?: boolean;
  /** bf16 storage of the weights no step changes, as GRPO's. */
  frozenWeights?: WeightStorage;
  /** A person's prompt dataset (rewards math, exact or regex) instead of the arithmetic generator; absent: arithmetic. */
  dataset?: DatasetRunOptions;
  /** A person's own model (`useModel`) instead of the shipped arithmetic base: the policy, the reference and the pairs' sampler. */
  base?: BaseModelRunOptions;
  evalEvery: number;
  evalN: number;
  checkpointEvery: number;
}

export type RunOptions =
  | SftRunOptions
  | GrpoRunOptions
  | EpisodeGrpoRunOptions
  | EnvRunOptions
  | PpoRunOptions
  | PpoEpisodeRunOptions
  | PpoEnvRunOptions
  | DpoRunOptions
  | FlowRunOptions;

/** A preset's name (worker/presets/table.ts holds each preset's entry). */
export type PresetName = RunOptions['preset'];

/** The objective a preset trains with: the views and exports read this, never the preset's name. */
export type PresetFamily = 'sft' | 'grpo' | 'ppo' | 'dpo' | 'flow';

/** The views that show a preset's steps, besides the dashboard. */
export type PresetView = 'Groups' | 'Batch' | 'Episodes' | 'Flow';

/** What the Experiments view needs of a preset (worker/presets/table.ts `PresetSpec`, less its functions and schema). */
export interface PresetTraits {
  title: string;
  description: string;
  fields: FieldSpec[];
  family: PresetFamily;
  /** The shipped base checkpoint it starts from (public/checkpoints/NAME); null: none. */
  base: string | null;
  views: PresetView[];
  /** The dataset rewards it takes with a person's prompt file (and a person's model as its base); null: neither. */
  dataset: DatasetRewardOptions['kind'][] | null;
  /** Its rewards are graded by the companion. */
  companion: boolean;
  /** It runs a person's environment program (the options' `environment`, set by `loadEnvironment`). */
  environment?: boolean;
  /** How long its default run takes on the README's machine; absent: the README gives no figure. */
  speed?: PresetSpeed;
  /** The first-visit guide suggests it (lower `rank` first) with what it shows; absent: not suggested. */
  firstStep?: { rank: number; why: string };
}

/**
 * A measured speed, quoted from README.md (a 2-core machine without a GPU, the wasm backend that
 * `auto` picks there): seconds per training step (one figure or a range, evaluations left out), or
 * one whole run; `source` says where in the README.
 */
export type PresetSpeed =
  | { perStep: [number, number]; source: string }
  | { run: { steps: number; seconds: number; what: string }; source: string };

export type PresetInfo = PresetTraits &
  (
    | { name: 'sft-arith'; defaults: SftRunOptions }
    | { name: 'grpo-arith'; defaults: GrpoRunOptions }
    | { name: EpisodePreset; defaults: EpisodeGrpoRunOptions }
    | { name: 'grpo-env'; defaults: EnvRunOptions }
    | { name: 'ppo-arith'; defaults: PpoRunOptions }
    | { name: 'ppo-calc'; defaults: PpoEpisodeRunOptions }
    | { name: 'ppo-env'; defaults: PpoEnvRunOptions }
    | { name: 'dpo-arith'; defaults: DpoRunOptions }
    | { name: 'flowgrpo-2d'; defaults: FlowRunOptions }
  );

/** A problem with run options: the dotted path of the field and a message naming it and its allowed range or values. */
export interface OptionProblem {
  path: string;
  message: string;
}

/**
 * A config JSON (a partial set of run options) read onto its preset's defaults
 * (worker/presets/config-import.ts): the completed options and their problems (empty: valid), or,
 * when it names no preset (or is not an object), the problems that say so.
 */
export type ConfigCompletion =
  { ok: true; options: RunOptions; problems: OptionProblem[] } | { ok: false; problems: OptionProblem[] };

export const FIELD_SECTIONS = ['Objective', 'Advantage', 'KL', 'Corrections', 'Sampling', 'Optimizer', 'Run'] as const;

export type FieldSection = (typeof FIELD_SECTIONS)[number];

/**
 * One input of the options form, derived from the worker's schema (worker/presets/schema.ts) so the
 * app renders it without the validator.
 */
export interface FieldSpec {
  /** Dotted path into the options, e.g. `policyLoss.clipHigh`. */
  path: string;
  label: string;
  section: FieldSection;
  /** What the field means and its default when left empty. */
  help: string;
  kind: 'number' | 'integer' | 'select' | 'boolean';
  /** Bounds (number, integer); `*Exclusive` when the bound itself is not allowed. */
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxExclusive?: boolean;
  /** Allowed values (select). */
  values?: string[];
  /** May be left out (empty): the RL core's default applies. */
  optional: boolean;
  /** Shown only while each named field holds one of the listed values (a variant's option). */
  when?: { path: string; values: string[] }[];
  /** The value the form fills in when the field appears (a required option of a variant). */
  initial?: number | string | boolean;
  /** One of the options changed on most runs: the form shows it first, in an always-open section, whatever its `section`. */
  common?: boolean;
  /** The allowed range or values in words, as problems state them: `a number in [0, 10]`. */
  allowed: string;
}
