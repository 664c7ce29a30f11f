/**
 * The worker's API as the app sees it through comlink (types only, plus the list of error names).
 * Only `name`, `message` and `stack` of an Error survive comlink: the app switches on `name`,
 * and every name a worker error can carry is in ERROR_NAMES.
 */

export const ERROR_NAMES = [
  'GpuUnavailable',
  'GpuDeviceLost',
  'GpuValidationError',
  'GpuOutOfMemory',
  'ShaderCompileError',
  'NotInitialized',
  'InvalidConfig',
  'UnknownRun',
  /** A Hugging Face model folder that cannot be loaded (worker/hf/errors.ts HfFolderError). */
  'InvalidModelFolder',
] as const;
export type ErrorName = (typeof ERROR_NAMES)[number];

export type BackendName = 'cpu' | 'webgpu' | 'wasm';
export type BackendPreference = 'auto' | 'webgpu' | 'wasm' | 'cpu';

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  /** Key limits of the device in use. */
  limits: Record<string, number>;
  /** Features enabled on the device. */
  features: string[];
}

export interface BackendInfo {
  backend: BackendName;
  /** The WebGPU adapter in use (webgpu backend only). */
  adapter: AdapterSummary | null;
  /** Why this backend: requested, software adapter, probe, or why the faster ones were unavailable. */
  reason: string;
  /** Why the CPU backend is in use (cpu backend only). */
  fallbackReason: string | null;
  /** `auto`'s measured probe (hardware WebGPU adapter and wasm both available): ms per repetition by backend. */
  probe: { workload: string; msPerRep: Partial<Record<BackendName, number>> } | null;
  /** Threads the kernels run on (wasm over SharedArrayBuffer when the page is cross-origin isolated; 1 elsewhere). */
  threads: number;
}

/** What a run records of the backend that trained it (BackendInfo less the adapter's details). */
export type RunBackendChoice = Pick<BackendInfo, 'reason' | 'threads' | 'probe'>;

export interface SelfTestCase {
  /** e.g. `matmul_tiled nt 65x17x130`. */
  name: string;
  maxAbsError: number;
  tolerance: number;
  passed: boolean;
}

export interface SelfTestResult {
  backend: BackendName;
  passed: boolean;
  /** Largest |GPU − reference| over all cases. */
  maxAbsError: number;
  /** Throughput of the default matmul at `gflopsSize`³ on the active backend, median of runs. */
  gflops: number;
  gflopsSize: number;
  cases: SelfTestCase[];
  /** Milliseconds the whole self-test took. */
  ms: number;
}

/** The companion as `GET /v1/health` describes it (companion/server.ts). */
export interface CompanionHealth {
  version: string;
  runner: string;
  workers: number;
  running: number;
  queue: number;
  queueLimit: number;
  networkIsolation: boolean;
  limits: { wallSeconds: number; cpuSeconds: number; memoryBytes: number; messageBytes: number };
  /**
   * What the runner contains, from its probe at start (companion/containment.ts `Containment`):
   * who programs run as, the process bound (null: none), one line per property. Absent from an older companion.
   */
  containment?: {
    networkIsolation: boolean;
    dedicatedUser: boolean;
    user: string;
    maxProcesses: number | null;
    notes: string[];
  };
  /** Environment sessions (`/v1/sessions`): open now, the most at once, the idle timeout. Absent from an older companion. */
  sessions?: { open: number; max: number; idleSeconds: number };
}

/** The worker's connection to the companion: where, and its health or why it cannot be reached. */
export type CompanionStatus =
  { url: string; connected: true; health: CompanionHealth } | { url: string; connected: false; error: string };

export interface WorkbenchApi {
  /**
   * Connects the worker to a companion (`npx dewpoint companion` prints its address and token)
   * and reports its health, or why not (unreachable, wrong token, origin not allowed). The token
   * stays in the worker for later requests.
   */
  connectCompanion(url: string, token: string): Promise<CompanionStatus>;
  /** The connected companion's health now (null when none was connected). */
  companionStatus(): Promise<CompanionStatus | null>;
  /** Selects the backend (default `auto`) and reports it; safe to call again to switch. */
  init(preference?: BackendPreference): Promise<BackendInfo>;
  /** Runs matmul on the active backend against the CPU reference. */
  selfTest(): Promise<SelfTestResult>;
  /** The presets the Experiments view offers, each with the form description of its options. */
  presets(): Promise<PresetInfo[]>;
  /**
   * Problems with a run's options, each naming the field and its allowed range or values; empty
   * when valid. The same check `startRun` applies (the worker is the only validator).
   */
  checkRunOptions(options: RunOptions): Promise<OptionProblem[]>;
  /**
   * Reads a prompt dataset file (`.jsonl` or `.parquet`, worker/data/dataset.ts) for the run
   * options' `dataset` of grpo-arith, ppo-arith or dpo-arith: every prompt checked against the
   * arithmetic base's vocabulary and length (with `modelId`: that picked model's tokenizer and
   * trained width instead; a model this worker no longer holds gives `ok: false`), test cases
   * checked for `reward.kind` 'code'. `heldOut`
   * defaults to a tenth of the records (at least 1 of 2 or more). A bad file gives `ok: false`
   * naming its file, line or row, field and what was expected; nothing is kept.
   */
  loadDataset(
    file: { name: string; bytes: Uint8Array },
    choice: { reward: DatasetRewardOptions; heldOut?: number; modelId?: string },
  ): Promise<DatasetLoadResult>;
  /**
   * What a Hugging Face Llama-family folder holds, before loading it (worker/hf/folder.ts
   * `inspectHfFolder`: config.json and the safetensors headers only; a `Blob` is read by ranges,
   * so its tensor data is not read): architecture, parameter count, dtypes, the config and the f32
   * training memory for a `rows` × trained-width batch (default 1 row). A folder the loader would
   * refuse gives `ok: false` with every problem, each naming its file and field.
   */
  inspectModel(files: ModelFolderFile[], options?: { name?: string; rows?: number }): Promise<InspectModelResult>;
  /**
   * Loads the folder whole (every check first, then the tensors converted to F32) and keeps it in
   * this worker's memory as a checkpoint under an id (a hash of its weights, config and tokenizer,
   * so the same folder picked again has the same id), for the run options' `base`. Kept until the
   * worker ends (a reload); a run on it keeps it in its own checkpoints. A bad folder gives
   * `ok: false` naming file and field, and nothing is kept.
   */
  useModel(files: ModelFolderFile[], options?: { name?: string }): Promise<UseModelResult>;
  /** The picked model `id` when this worker holds it, else null (a reload drops picked models). */
  pickedModel(id: string): Promise<PickedModel | null>;
  /**
   * Starts a run of a preset and returns its id at once; progress arrives through `onEvent` (a
   * comlink proxy). One run at a time: starting another stops the current one.
   */
  startRun(options: RunOptions, onEvent: (event: RunEvent) => void): Promise<string>;
  pauseRun(runId: string): Promise<void>;
  resumeRun(runId: string): Promise<void>;
  stopRun(runId: string): Promise<void>;
  /**
   * Continues a stored run (stopped, failed or interrupted) from its last checkpoint under the same
   * id, to its `options.steps`: steps committed after that checkpoint are deleted and computed
   * again. Like `startRun`, returns at once (with the checkpoint's step); progress arrives through
   * `onEvent`. A run that cannot continue (unknown, finished, active, or without a resumable
   * checkpoint) gives `ok: false` and the reason.
   */
  continueRun(runId: string, onEvent: (event: RunEvent) => void): Promise<ContinueResult>;
  /** Names a stored run (an empty name: back to the default) or edits its notes. */
  updateRun(
    runId: string,
    meta: { name?: string; notes?: string },
  ): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Deletes every stored record of a run that is not running or paused anywhere. */
  deleteRun(runId: string): Promise<DeleteResult>;
  /** Where runs are stored: 'indexeddb' (survives a reload) or 'memory'. */
  storage(): Promise<'indexeddb' | 'memory'>;
  /** Stored runs, newest first; one stored as running or paused that this worker is not running is 'interrupted'. */
  listRuns(): Promise<RunSummary[]>;
  /** A stored run's per-step metrics and evaluations. */
  runHistory(
    runId: string,
  ): Promise<{
    steps: { step: number; metrics: Record<string, number> }[];
    evaluations: { step: number; accuracy: number; meanLength: number; n: number }[];
  }>;
  /** Steps of a run whose advantage groups are stored. */
  groupSteps(runId: string): Promise<number[]>;
  /** The advantage groups of one step, or null when that step is not kept. */
  groupsAt(runId: string, step: number): Promise<GroupRecord[] | null>;
  /** The packed batch of one step, or null when that step has none. */
  batchAt(runId: string, step: number): Promise<BatchRecord | null>;
  /** A Flow-GRPO step's sample cloud, or null when that step has none. */
  flowAt(runId: string, step: number): Promise<FlowCloud | null>;
  /** A stored Flow-GRPO run's reward over its view box (`size` × `size`), or null when the run is not one. */
  flowField(runId: string, size?: number): Promise<FlowField | null>;
  /** The sessions of one step (GRPO), with every call's ids and log-probs, or null when that step has none. */
  sessionsAt(runId: string, step: number): Promise<SessionRecord[] | null>;
  /**
   * The text of each id under a stored run's tokenizer (specials by name: `<eos>`), or null when no
   * run `runId` is stored. An id outside the vocabulary is an error.
   */
  tokenTexts(runId: string, ids: Int32Array): Promise<string[] | null>;
  /** Steps of a run with journaled episodes (multi-turn presets), ascending. */
  episodeSteps(runId: string): Promise<number[]>;
  /** The journaled episodes of one step, or null when the step has none. */
  episodesAt(runId: string, step: number): Promise<EpisodeSummary[] | null>;
  /** One episode with its turns, or null when it is not journaled. */
  episodeAt(runId: string, step: number, index: number): Promise<EpisodeDetail | null>;
  /** Re-executes an episode's journaled actions against a fresh environment and compares every observation. */
  replayEpisode(runId: string, step: number, index: number): Promise<ReplayResult>;
  /** A run's episodes as JSONL: one line per episode (turns, token ids, behavior and raw log-probs, rewards, statuses). */
  exportEpisodes(runId: string): Promise<string>;
  /** The latest checkpoint of run `runId` (default: the current or last run), or null if it has none. */
  latestCheckpoint(runId?: string): Promise<CheckpointDownload | null>;
  /**
   * Stores verl rollout dumps (`trainer.rollout_data_dir`'s `{step}.jsonl`, or parquet with the
   * same columns) as one run with status `imported`: per step its groups, and its sessions and
   * batch when the dump has token ids (worker/interop/verl-import.ts). A bad file gives `ok: false`
   * naming its file, line, field and what was expected, and stores nothing.
   */
  importVerlRun(files: { name: string; bytes: Uint8Array }[]): Promise<VerlImportResult>;
  /**
   * A stored run for verl (rollouts and prompts as parquet, the launch command) or TRL (GRPO and
   * DPO datasets as JSONL, the config's keyword arguments), worker/interop/files.ts; `ok: false`
   * with the reason for a run the target cannot take (SFT, Flow-GRPO; DPO on verl) or an unknown run.
   */
  exportRunFiles(
    runId: string,
    to: 'verl' | 'trl',
  ): Promise<{ ok: true; files: ExportFile[] } | { ok: false; reason: string }>;
}

/** One file of an export to verl or TRL. */
export interface ExportFile {
  name: string;
  mime: string;
  bytes: Uint8Array;
}

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

/** A checkpoint's files (safetensors weights, HF config.json, tokenizer.json, dewpoint.json). */
export interface CheckpointDownload {
  runId: string;
  step: number;
  files: Record<string, Uint8Array>;
}

export type ContinueResult = { ok: true; fromStep: number } | { ok: false; reason: string };

/** A deleted run: its committed steps and the approximate bytes of every record removed. */
export type DeleteResult = { ok: true; steps: number; bytes: number } | { ok: false; reason: string };

/** A stored run, as listed after a reload. */
export interface RunSummary {
  runId: string;
  /** What the run was started with; an imported run (status `imported`) holds its import record instead. */
  options: RunOptions | ImportedRunOptions;
  /** ms since the epoch. */
  createdAt: number;
  status: RunStatus;
  /** Last committed step (0 before the first). */
  lastStep: number;
  /** Step of the latest checkpoint the run can continue from (weights, AdamW state, trainer position); absent when none. */
  checkpointStep?: number;
  message?: string;
  /** Running or paused in another tab of this origin (its run lock is held there): it cannot be continued here. */
  elsewhere?: boolean;
  /** The run's name: the one a person gave it, else (filled in by listRuns) the preset and the id's time part, `grpo-arith · m3x9k2`. */
  name?: string;
  /** Free-text notes about the run. */
  notes?: string;
  /** The backend that trained it (the last one, for a continued run). */
  backend?: BackendName;
  /** Why that backend, its threads and auto's probe, as the backend selection reported them. */
  backendChoice?: RunBackendChoice;
  /** Milliseconds spent computing its committed steps and evaluations (pauses and gaps excluded). */
  activeMs?: number;
  /** ms since the epoch of the last committed step. */
  updatedAt?: number;
  /** The latest values the runs table shows: mean reward (GRPO, DPO pairs' chosen reward for DPO) and held-out accuracy. */
  latest?: { rewardMean?: number; accuracy?: number; accuracyStep?: number };
}

/**
 * `interrupted` appears only in listings: the store says running or paused, but no worker of this
 * page runs it (the tab was closed or reloaded mid-run); it can be continued like a stopped run.
 * `imported`: read from another framework's files (`importVerlRun`), never trained here.
 */
export type RunStatus = 'running' | 'paused' | 'finished' | 'stopped' | 'failed' | 'interrupted' | 'imported';

export type RunEvent =
  | { type: 'status'; runId: string; status: RunStatus; message?: string; errorName?: string }
  | { type: 'step'; runId: string; step: number; totalSteps: number; metrics: Record<string, number> }
  | { type: 'checkpoint'; runId: string; step: number; bytes: number }
  /** Where the step under way is: its phase and, when counted, how far (`done` of `total` `unit`). */
  | { type: 'phase'; runId: string; step: number; phase: StepPhase; done?: number; total?: number; unit?: string }
  | {
      type: 'eval';
      runId: string;
      step: number;
      accuracy: number;
      meanLength: number;
      n: number;
      samples: { prompt: string; completion: string; answer: string; correct: boolean }[];
    };

/**
 * The phases of a step, as the dashboard names them: sampling the rollouts, recomputing the old
 * log-probs before the first update (verl `old_log_prob`, only with several updates per batch),
 * the frozen reference's log-probs (β > 0), training (forward, backward, AdamW), the held-out
 * evaluation, storing the step, writing a checkpoint. `step` covers a trainer that does not
 * report its phases (SFT). DPO's sampling counts the pairs found.
 */
export type StepPhase =
  | 'pretraining'
  | 'sampling'
  | 'old log-probs'
  | 'reference log-probs'
  | 'training'
  | 'evaluating'
  | 'storing'
  | 'checkpointing'
  | 'step';

/** How a trainer tells where its step is: the phase and, when counted, `done` of `total` `unit`. */
export type PhaseReport = (phase: StepPhase, done?: number, total?: number, unit?: string) => void;

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

/**
 * Options of a GRPO run from the shipped base checkpoint; worker/runs/schema.ts holds each
 * field's range and meaning (the form shows them).
 */
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
  prompt: string;
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

/** One file of a model folder as the app hands it over: its plain name and its bytes, or the File itself (read by ranges). */
export interface ModelFolderFile {
  name: string;
  bytes: Uint8Array | FileBlob;
}

/** What the worker reads of a File or Blob (this file compiles without the DOM lib; a File is one). */
export interface FileBlob {
  readonly size: number;
  slice(start?: number, end?: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

/** What is wrong with a model folder: the file, the field (a config.json key, `tensor 'name'`, `header`, `(file)`) and what was expected. */
export interface ModelFolderProblem {
  file: string;
  field: string;
  detail: string;
}

/** A model folder as inspected (worker/hf/folder.ts `HfFolderInspection`, for the app). */
export interface ModelSummary {
  /** The folder's name. */
  name: string;
  architecture: string;
  parameters: number;
  /** Dtypes of the tensors as stored (loading converts them to F32). */
  dtypes: string[];
  config: {
    layers: number;
    dModel: number;
    heads: number;
    kvHeads: number;
    ffn: number;
    vocab: number;
    maxPositions: number;
    tiedEmbeddings: boolean;
    ropeTheta: number;
    normEps: number;
  };
  /** The longest sequence a run trains on here (max_position_embeddings capped at 256). */
  trainedWidth: number;
  weightFiles: { file: string; bytes: number; tensors: number }[];
  index: string | null;
  /** Tensors the files hold that the model ignores, as transformers does. */
  ignoredTensors: string[];
  /** What was assumed for absent config fields. */
  notes: string[];
  /** f32 training memory for a rows × seq batch, in bytes, and what it counts (worker/hf/memory.ts). */
  training: {
    rows: number;
    seq: number;
    parameters: number;
    weights: number;
    grads: number;
    adamMoments: number;
    activations: number;
    total: number;
    counts: string;
  };
}

export type InspectModelResult =
  { ok: true; summary: ModelSummary } | { ok: false; problems: ModelFolderProblem[]; message: string };

/** A model `useModel` keeps in the worker: what the run options' `base` names, and what the app shows of it. */
export interface PickedModel {
  id: string;
  name: string;
  architecture: string;
  parameters: number;
  dtypes: string[];
  trainedWidth: number;
  vocab: number;
  /** The tokenizer's special tokens and whether it has a chat template. */
  tokenizer: { bos: string; eos: string; pad: string; chatTemplate: boolean };
  /** Bytes of the F32 checkpoint the worker holds. */
  bytes: number;
}

export type UseModelResult =
  { ok: true; model: PickedModel } | { ok: false; problems: ModelFolderProblem[]; message: string };

/**
 * Where a file a person gave is bad (a dataset, a verl dump): the file, its line (JSONL) or row
 * (parquet), the field and what was expected.
 */
export interface FileProblem {
  file: string;
  /** 1-based; null for a problem with the whole file. */
  line: number | null;
  unit: 'line' | 'row';
  /** null for a line that is not a JSON object, or a file that cannot be read. */
  field: string | null;
  expected: string;
  got?: string;
}

/** What `loadDataset` read: the dataset for the run options, or the first problem (and nothing loaded). */
export type DatasetLoadResult =
  { ok: true; dataset: DatasetRunOptions } | { ok: false; problem: FileProblem; message: string };

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

/** One step's sample cloud of a Flow-GRPO run: N final points (N × 2, group-major), their rewards and advantages (0: not trained). */
export interface FlowCloud {
  step: number;
  points: Float32Array;
  rewards: Float32Array;
  advantages: Float32Array;
  group: number;
}

/** The reward of a Flow-GRPO run over its view box: `values` is size × size, row 0 at y = −box, column 0 at x = −box. */
export interface FlowField {
  box: number;
  size: number;
  values: Float32Array;
  target:
    | { kind: 'ring'; center: [number, number]; inner: number; outer: number }
    | { kind: 'discs'; discs: { center: [number, number]; radius: number }[] };
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
  /** A person's prompt dataset (rewards math, exact or regex) instead of the arithmetic generator; absent: arithmetic. */
  dataset?: DatasetRunOptions;
  /** A person's own model (`useModel`) instead of the shipped arithmetic base: the policy, the reference and the pairs' sampler. */
  base?: BaseModelRunOptions;
  evalEvery: number;
  evalN: number;
  checkpointEvery: number;
}

/**
 * The record of a run imported from verl's rollout dumps (worker/interop/verl-import.ts), kept
 * where a trained run keeps its options: what was read, how the samples were grouped, where the
 * advantages came from, and what the dump lacks. Nothing to start, continue or run again.
 */
export interface ImportedRunOptions {
  preset: 'verl-import';
  /** The last step's number (verl counts from 1), so views say "step s of steps". */
  steps: number;
  /** The steps imported, ascending. */
  stepNumbers: number[];
  /** The files read, in order, with the rows each held. */
  files: { name: string; rows: number }[];
  /** `uid`: grouped by the dump's `uid` column (verl's own group key); `input`: by identical `input` within a step (the dump has no uid). */
  grouping: 'uid' | 'input';
  /** `dump`: the dump's `advantages` column; `recomputed`: Dewpoint's GRPO estimator with verl's defaults, because the dump has none. */
  advantages: 'dump' | 'recomputed';
  /** The optional columns the dump has (`uid`, `response_ids`, …). */
  present: string[];
  /** What the dump lacks and, per view, what that view cannot draw without it. */
  missing: ImportMissing[];
  /** Where the format was read: the verl file, function and commit. */
  format: string;
}

/** A field an imported dump lacks, and what one view cannot draw without it. */
export interface ImportMissing {
  field: string;
  view: 'Groups' | 'Batch' | 'Replay';
  /** What the view cannot draw, and when verl writes the field. */
  cannot: string;
}

/** What `importVerlRun` did: the stored run, or the first problem (and nothing stored). */
export type VerlImportResult =
  | { ok: true; runId: string; steps: number; groups: number; samples: number; missing: ImportMissing[] }
  | { ok: false; problem: FileProblem; message: string };

export type RunOptions =
  | SftRunOptions
  | GrpoRunOptions
  | EpisodeGrpoRunOptions
  | PpoRunOptions
  | PpoEpisodeRunOptions
  | DpoRunOptions
  | FlowRunOptions;

export type PresetInfo =
  | { name: 'sft-arith'; title: string; description: string; defaults: SftRunOptions; fields: FieldSpec[] }
  | { name: 'grpo-arith'; title: string; description: string; defaults: GrpoRunOptions; fields: FieldSpec[] }
  | { name: EpisodePreset; title: string; description: string; defaults: EpisodeGrpoRunOptions; fields: FieldSpec[] }
  | { name: 'ppo-arith'; title: string; description: string; defaults: PpoRunOptions; fields: FieldSpec[] }
  | { name: 'ppo-calc'; title: string; description: string; defaults: PpoEpisodeRunOptions; fields: FieldSpec[] }
  | { name: 'dpo-arith'; title: string; description: string; defaults: DpoRunOptions; fields: FieldSpec[] }
  | { name: 'flowgrpo-2d'; title: string; description: string; defaults: FlowRunOptions; fields: FieldSpec[] };

/** A problem with run options: the dotted path of the field and a message naming it and its allowed range or values. */
export interface OptionProblem {
  path: string;
  message: string;
}

export const FIELD_SECTIONS = ['Objective', 'Advantage', 'KL', 'Corrections', 'Sampling', 'Optimizer', 'Run'] as const;
export type FieldSection = (typeof FIELD_SECTIONS)[number];

/**
 * One input of the options form, derived from the worker's schema (worker/runs/schema.ts) so the
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

/** One completion of an advantage group, as the Groups view shows it. */
export interface GroupSample {
  sample: number;
  /** Decoded completion (specials hidden). */
  completion: string;
  reward: number;
  components: Record<string, number>;
  /** The session's advantage (0 when it carries no loss mass, e.g. masked or zero-std); a DPO pair's completion: its implicit reward. */
  advantage: number;
  /** The baseline the estimator subtracted from this sample's reward (RLOO: the mean of the others; absent when not trained or not kept). */
  baseline?: number;
  status: string;
  /** Sampled ids, EOS included (an episode: over all its actions); NaN: not recorded (an import without token ids). */
  length: number;
  truncated: boolean;
  /** A multi-turn episode's turns: each action's text (EOS excluded) and the environment's answer. */
  turns?: { action: string; observation: string; detail?: string; cases?: CaseResult[] }[];
  /** PPO: the critic at the first sampled id (value, return) and the sample's GAE advantages (mean, min, max over its sampled ids). */
  critic?: { value: number; return: number; advantageMean: number; advantageMin: number; advantageMax: number };
  /** A multi-turn episode's index in the step (the Replay view opens it). */
  episode?: number;
}

/**
 * An advantage group at one step: one prompt, its G completions. A DPO step's groups are its
 * preference pairs (`kind: 'dpo-pair'`): sample 0 the chosen completion, 1 the rejected one, each
 * sample's `advantage` its implicit reward β · Σ (log π − log π_ref) before the update.
 */
export interface GroupRecord {
  /** Absent: 'advantage' (GRPO). */
  kind?: 'advantage' | 'dpo-pair';
  group: string;
  prompt: string;
  answer: string;
  rewardMean: number;
  /** Population std of all its rewards, a description only: the std the advantages divided by is `estimate.std`. */
  rewardStd: number;
  /** All rewards equal: no learning signal from this group. */
  zeroStd: boolean;
  samples: GroupSample[];
  /**
   * GRPO: how the RL core's estimator reached this group's advantages (worker/rl/advantages
   * `outcomeAdvantageDetails`); absent for pairs and for groups stored before it was kept.
   */
  estimate?: {
    estimator: 'grpo' | 'rloo' | 'reinforce++-baseline';
    /** The options the estimator read, compat's defaults filled in (grpo: compat, scale, stdType, epsilon, singleton). */
    settings: Record<string, string | number | boolean>;
    /** Samples the estimator grouped (the trained ones: truncated completions are left out under truncation 'mask'). */
    members: number;
    /** μ subtracted, when the same for every member (GRPO, REINFORCE++: the group mean); null when per sample (RLOO: `GroupSample.baseline`). */
    baseline: number | null;
    /** σ the centred reward was divided by, before ε (GRPO: the group's, or the batch's under scale 'batch'); null when none. */
    std: number | null;
    /** σ + ε; null when not divided per group. */
    divisor: number | null;
    /** The per-group step is exactly 0 (all rewards equal, or a singleton the estimator zeroes). */
    zero: boolean;
    /** A normalisation over the whole batch after the per-group step, a = (c − mean) / divisor (RLOO normalize, REINFORCE++); null when none. */
    batch: { mean: number; std: number; divisor: number } | null;
  };
  /** A DPO pair: margin = implicit reward chosen − rejected, ranked correctly when it is > 0, and the loss variant's value for this pair. */
  pair?: { margin: number; rankedCorrectly: boolean; loss: number; lossType: string; beta: number };
}

/** Layers of a packed batch the Batch view can colour, each [rows × width] row-major. */
/** Layers every packed batch has, and the critic's (PPO runs only: the value at rollout and the return target per id). */
export type CoreBatchLayer = 'segments' | 'responseMask' | 'advantage' | 'mismatch' | 'dlogp' | 'version';
export type CriticBatchLayer = 'value' | 'return';
/** With behavior-policy corrections on: the IS weight and the rejection keep flag the objective applied per sampled id. */
export type CorrectionBatchLayer = 'isWeight' | 'keep';
export type BatchLayer = CoreBatchLayer | CriticBatchLayer | CorrectionBatchLayer;

/** One step's packed batch as the trainer saw it. */
export interface BatchRecord {
  rows: number;
  width: number;
  rowsNeeded: number;
  /** Real tokens / (rows × width). */
  efficiency: number;
  /** The character of each id ('' for padding; specials as <bos>, <eos>). */
  tokens: string[];
  /** 1 + the session's index in the step (0 = padding), to open the session. */
  sessionIds: Int32Array;
  /** Trained sessions left out of the rows because they carry no loss mass (masked zero-advantage groups); absent in batches stored before. */
  notPacked?: number;
  /**
   * mismatch = old − behavior log-prob on sampled ids; old is the sampler's raw log-prob, or the
   * trainer's rescoring before the first update when a batch takes several optimizer steps. A
   * value NaN: not recorded (an imported batch: verl dumps no dlogp, and old − behavior only with
   * both log-prob columns); the Batch view lists only layers with a recorded value.
   */
  layers: Record<CoreBatchLayer, Float32Array> & Partial<Record<CriticBatchLayer | CorrectionBatchLayer, Float32Array>>;
}

/** One model call of a stored session, as the sampler served it (worker/rl/types.ts `Call`). */
export interface StoredCall {
  promptIds: Int32Array;
  /** EOS included when finishReason is 'stop'. */
  sampledIds: Int32Array;
  /** Per sampled id: log-prob under the sampling distribution, and under the unmodified model (null: not recorded). */
  behaviorLogProbs: Float64Array;
  rawLogProbs: Float64Array | null;
  finishReason: 'stop' | 'length';
  /** Policy version (optimizer steps taken) that sampled it. */
  version: number;
}

/** One stored session of a step (worker/rl/types.ts `Session`), top-k/top-p support left out. */
/**
 * One test case of a code reward as the companion graded it (companion/protocol.ts
 * `CodeCaseResult`, restated: the app and worker cannot import the companion): the verdict (null
 * when there was no program to run), whether the output matched, what the program wrote and why.
 */
export interface CaseResult {
  verdict: string | null;
  passed: boolean;
  stdout: string;
  stderr: string;
  detail: string;
}

export interface SessionRecord {
  task: string;
  group: string;
  sample: number;
  attempt: number;
  status: 'completed' | 'truncated' | 'cancelled' | 'failed';
  /** Why it ended, when known (worker/rl/types.ts `TerminationReason`). */
  termination?: string;
  reward: number | null;
  components: Record<string, number>;
  detail?: string;
  /** A code reward's test cases (grpo-code). */
  cases?: CaseResult[];
  /** PPO: per sampled id of its calls, in order, the critic's value at rollout, the return target and the (whitened) GAE advantage. */
  critic?: SessionCritic;
  calls: StoredCall[];
}

export interface SessionCritic {
  values: number[];
  returns: number[];
  advantages: number[];
}

/** How an episode ended (worker/rl/types.ts `EpisodeStatus`, never `running` once stored complete). */
export type EpisodeStatusName = 'running' | 'completed' | 'truncated' | 'cancelled' | 'error';

/** One journaled episode of a step, as the Replay view lists it. */
export interface EpisodeSummary {
  step: number;
  /** Index within the step, group-major (group g, sample s: g · G + s). */
  index: number;
  group: string;
  sample: number;
  task: { id: string; prompt: string; answer: string };
  status: EpisodeStatusName;
  /** Why it ended (worker/rl/types.ts `TerminationReason`), when it did. */
  termination?: string;
  /** null: not scored (failed, cancelled, corrupt, still running). */
  reward: number | null;
  turns: number;
  /** The policy version (updates taken) that drew its actions. */
  policyVersion: number;
  /** Carried loss mass in the step's update. */
  trained: boolean;
  /** Another episode of its group failed or was cancelled: the whole group was left out of the update. */
  groupAborted: boolean;
  /** A journal record of it failed its checksum: shown, never trained on. */
  corrupt: boolean;
  detail?: string;
  /** Turns restored from the journal after a restart instead of executed (0 for an episode that ran through). */
  resumedTurns: number;
  /** Milliseconds of sampling and environment steps, over its turns. */
  ms: number;
}

/** One turn of an episode, as the Replay view's timeline shows it. */
export interface EpisodeTurnView {
  /** 1-based. */
  turn: number;
  traceId: string;
  parentTraceId: string | null;
  /** The full prompt the model saw, rebuilt from the delta chain; null when the chain cannot be resolved (`unresolved`). */
  promptIds: Int32Array | null;
  /** promptIds[0 … inherited − 1] came from earlier turns; the rest is this turn's own delta. */
  inherited: number;
  /** This turn did not extend the previous one: a new chain root, why, and the first divergent index. */
  reset?: { reason: 'duplicate' | 'prefix_changed' | 'empty_delta'; index: number };
  /** An identical resend of another trace. */
  replayOf?: string;
  /** Why the chain could not be rebuilt (a missing or corrupt parent). */
  unresolved?: string;
  action: {
    ids: Int32Array;
    text: string;
    rawLogProbs: Float64Array;
    behaviorLogProbs: Float64Array;
    terminated: boolean;
    policyStep: number;
    temperature: number;
  };
  observation: {
    ids: Int32Array;
    text: string;
    status: EpisodeStatusName;
    detail?: string;
    termination?: string;
    reward?: number;
  };
  sampleMs: number;
  envMs: number;
  /** Restored from the journal after a restart (not executed by the process that finished the episode). */
  resumed: boolean;
  checksumOk: boolean;
}

/** An episode with its turns and the vocabulary to read their ids. */
export interface EpisodeDetail extends EpisodeSummary {
  initialIds: Int32Array;
  /** id → symbol (specials by name). */
  vocab: string[];
  turnViews: EpisodeTurnView[];
}

/** A journaled episode re-executed against a fresh environment: each turn identical or where it diverged. */
export interface ReplayResult {
  identical: boolean;
  /** `identical` or `diverged at turn N` (the first). */
  summary: string;
  turns: { turn: number; identical: boolean; firstDivergentToken?: number; expected?: string; got?: string }[];
}
