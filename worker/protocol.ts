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
] as const;
export type ErrorName = (typeof ERROR_NAMES)[number];

export type BackendName = 'cpu' | 'webgpu';
export type BackendPreference = 'auto' | 'webgpu' | 'cpu';

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
  /** Why the CPU backend is in use (cpu backend only). */
  fallbackReason: string | null;
}

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

export interface WorkbenchApi {
  /** Selects the backend (default `auto`) and reports it; safe to call again to switch. */
  init(preference?: BackendPreference): Promise<BackendInfo>;
  /** Runs matmul on the active backend against the CPU reference. */
  selfTest(): Promise<SelfTestResult>;
  /** The presets the Experiments view offers. */
  presets(): Promise<PresetInfo[]>;
  /**
   * Starts a run of a preset and returns its id at once; progress arrives through `onEvent` (a
   * comlink proxy). One run at a time: starting another stops the current one.
   */
  startRun(options: RunOptions, onEvent: (event: RunEvent) => void): Promise<string>;
  pauseRun(runId: string): Promise<void>;
  resumeRun(runId: string): Promise<void>;
  stopRun(runId: string): Promise<void>;
  /** Where runs are stored: 'indexeddb' (survives a reload) or 'memory'. */
  storage(): Promise<'indexeddb' | 'memory'>;
  /** Stored runs, newest first. */
  listRuns(): Promise<RunSummary[]>;
  /** A stored run's per-step metrics and evaluations. */
  runHistory(runId: string): Promise<{ steps: { step: number; metrics: Record<string, number> }[]; evaluations: { step: number; accuracy: number; meanLength: number; n: number }[] }>;
  /** Steps of a run whose advantage groups are stored. */
  groupSteps(runId: string): Promise<number[]>;
  /** The advantage groups of one step, or null when that step is not kept. */
  groupsAt(runId: string, step: number): Promise<GroupRecord[] | null>;
  /** The packed batch of one step, or null when that step has none. */
  batchAt(runId: string, step: number): Promise<BatchRecord | null>;
  /** The latest checkpoint of the current or last run, or null if none was written yet. */
  latestCheckpoint(): Promise<CheckpointDownload | null>;
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

/** A stored run, as listed after a reload. */
export interface RunSummary {
  runId: string;
  options: RunOptions;
  /** ms since the epoch. */
  createdAt: number;
  status: RunStatus;
  /** Last committed step (0 before the first). */
  lastStep: number;
  message?: string;
}

export type RunStatus = 'running' | 'paused' | 'finished' | 'stopped' | 'failed';

export type RunEvent =
  | { type: 'status'; runId: string; status: RunStatus; message?: string; errorName?: string }
  | { type: 'step'; runId: string; step: number; totalSteps: number; metrics: Record<string, number> }
  | { type: 'checkpoint'; runId: string; step: number; bytes: number }
  | { type: 'eval'; runId: string; step: number; accuracy: number; meanLength: number; n: number; samples: { prompt: string; completion: string; answer: string; correct: boolean }[] };

/** Options of a GRPO run from the shipped base checkpoint (the rest comes from the preset). */
export interface GrpoRunOptions {
  preset: 'grpo-arith';
  /** Optimizer steps, 1..5000. */
  steps: number;
  /** Learning rate (constant), (0, 0.1]. */
  lr: number;
  /** Seed of the task stream and the samplers. */
  seed: number;
  /** Prompts per step (1..256) and completions per prompt, the advantage group (2..64). */
  prompts: number;
  group: number;
  /** Sampling temperature, (0, 10]. */
  temperature: number;
  evalEvery: number;
  evalN: number;
  checkpointEvery: number;
}

/** Options of a DPO run from the shipped base checkpoint (pairs from the base model's samples). */
export interface DpoRunOptions {
  preset: 'dpo-arith';
  steps: number;
  lr: number;
  seed: number;
  /** Preference pairs per step, 1..256. */
  pairs: number;
  /** DPO β, (0, 10]. */
  beta: number;
  /** Weight of the NLL term on chosen completions (TRL rpo_alpha), [0, 10]. */
  nllWeight: number;
  evalEvery: number;
  evalN: number;
  checkpointEvery: number;
}

export type RunOptions = SftRunOptions | GrpoRunOptions | DpoRunOptions;

export type PresetInfo =
  | { name: 'sft-arith'; title: string; description: string; defaults: SftRunOptions }
  | { name: 'grpo-arith'; title: string; description: string; defaults: GrpoRunOptions }
  | { name: 'dpo-arith'; title: string; description: string; defaults: DpoRunOptions };

/** One completion of an advantage group, as the Groups view shows it. */
export interface GroupSample {
  sample: number;
  /** Decoded completion (specials hidden). */
  completion: string;
  reward: number;
  components: Record<string, number>;
  /** The session's advantage (0 when it carries no loss mass, e.g. masked or zero-std). */
  advantage: number;
  status: string;
  /** Sampled ids, EOS included. */
  length: number;
  truncated: boolean;
}

/** An advantage group at one step: one prompt, its G completions. */
export interface GroupRecord {
  group: string;
  prompt: string;
  answer: string;
  rewardMean: number;
  rewardStd: number;
  /** All rewards equal: no learning signal from this group. */
  zeroStd: boolean;
  samples: GroupSample[];
}

/** Layers of a packed batch the Batch view can colour, each [rows × width] row-major. */
export type BatchLayer = 'segments' | 'responseMask' | 'advantage' | 'mismatch' | 'dlogp' | 'version';

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
  /** mismatch = old (raw, trainer-side at sampling) − behavior log-prob on sampled ids. */
  layers: Record<BatchLayer, Float32Array>;
}
