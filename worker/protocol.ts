/**
 * The worker's API as the app sees it through comlink: `WorkbenchApi`, and the contract types it
 * speaks in, re-exported from worker/contract/ (run options and presets, stored records and
 * views, a person's files, the backend and the companion, the error names). The app imports
 * types from this file only (lint and the tsconfigs enforce it); the worker's own modules import
 * the contract files they need, never this one.
 *
 * Only `name`, `message` and `stack` of an Error survive comlink: the app switches on `name`,
 * and every name a worker error can carry is in ERROR_NAMES (contract/errors.ts).
 */
import type { BackendInfo, BackendPreference } from '../kernels/backends/info';
import type {
  DatasetLoadResult,
  EnvironmentLoadResult,
  EnvironmentPreview,
  InspectModelResult,
  MemoryPlanSummary,
  ModelFolderFile,
  PickedModel,
  UseModelResult,
} from './contract/models';
import type {
  ConfigCompletion,
  DatasetRewardOptions,
  EnvProgramRunOptions,
  OptionProblem,
  PresetInfo,
  RunOptions,
} from './contract/options';
import type {
  BatchRecord,
  CheckpointDownload,
  ContinueResult,
  DeleteResult,
  EpisodeDetail,
  EpisodeSummary,
  ExportFile,
  RunBundle,
  FlowCloud,
  FlowField,
  GroupRecord,
  HealthFlag,
  HealthOptions,
  LabRow,
  MismatchLabPlan,
  ReplayResult,
  RewardAudit,
  RunEvent,
  RunHistory,
  RunSummary,
  SessionRecord,
  StepDistribution,
  VerlImportResult,
} from './contract/records';
import type { CompanionStatus, SelfTestResult } from './contract/system';

export { ERROR_NAMES, type ErrorName } from './contract/errors';
export type * from './contract/models';
export type * from './contract/options';
export type * from './contract/records';
export type * from './contract/system';

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
   * A config JSON (the Experiments view's import) read onto its preset's defaults, a partial one
   * completed (worker/presets/config-import.ts), and checked as `checkRunOptions` checks; refused
   * when it names no preset.
   */
  completeRunOptions(config: unknown): Promise<ConfigCompletion>;
  /**
   * Reads a prompt dataset file (`.jsonl` or `.parquet`, worker/data/dataset.ts) for the run
   * options' `dataset` of grpo-arith, ppo-arith or dpo-arith: every prompt checked against the
   * arithmetic base's vocabulary and length (with `modelId`: that picked model's tokenizer and
   * trained width instead; a model this worker no longer holds gives `ok: false`), test cases
   * checked for `reward.kind` 'code'. `heldOut`
   * defaults to a tenth of the records (at least 1 of 2 or more). A bad file gives `ok: false`
   * naming its file, line or row, field and what was expected; nothing is kept.
   */
  /**
   * A person's environment program and task file for grpo-env (worker/episodes/program.ts
   * `loadEnvironment`): both UTF-8, the tasks one JSON object per line ({id, prompt, answer?,
   * data?}); `argv` is the command (default by the program's extension), `heldOut` the tasks held
   * out (default a tenth). A bad file gives `ok: false` naming its first bad line and field.
   */
  loadEnvironment(
    files: { program: { name: string; bytes: Uint8Array }; tasks: { name: string; bytes: Uint8Array } },
    choice?: { argv?: string[]; heldOut?: number },
  ): Promise<EnvironmentLoadResult>;
  /**
   * The first task's reset and one step (the base's greedy first action of at most `maxNew` ids, the
   * run's action length), run by the connected companion with `stepSeconds` as its wall: the first
   * model context a run of `environment` would sample from and the program's reply, or its failure
   * in a run's words, before starting one.
   */
  previewEnvironment(
    environment: EnvProgramRunOptions,
    stepSeconds: number,
    maxNew: number,
  ): Promise<EnvironmentPreview>;
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
  inspectModel(
    files: ModelFolderFile[],
    options?: { name?: string; rows?: number; plan?: RunOptions },
  ): Promise<InspectModelResult>;
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
   * The memory plan on wasm of a step of `options` (GRPO/PPO, full fine-tuning or LoRA) on the
   * picked model `id`, as `inspectModel` gives it; null when the worker does not hold the model or
   * the options have no plan (DPO).
   */
  modelPlan(id: string, options: RunOptions): Promise<MemoryPlanSummary | null>;
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
  /** A stored run's per-step metrics (with when each step was committed, where stored) and evaluations. */
  runHistory(runId: string): Promise<RunHistory>;
  /**
   * Per kept step (ascending), the rewards and lengths of its samples, from its advantage groups
   * (DPO pairs and Flow-GRPO clouds have none): the Compare view's histograms over steps.
   */
  stepDistributions(runId: string): Promise<StepDistribution[]>;
  /**
   * Run health (worker/runs/health.ts): the flags a stored run's per-step metrics raise (a
   * collapse's precursors: within-group reward std falling without reward rising, few groups with
   * a signal, entropy, length or truncation drift, falling diversity, gradient spikes, sampler/
   * trainer mismatch), each with the step where it began, its reason and the view to look in.
   * Thresholds left out take their defaults. An unknown run has none.
   */
  runHealth(runId: string, options?: Partial<HealthOptions>): Promise<HealthFlag[]>;
  /**
   * The reward-hacking audit (worker/runs/audit.ts) of a stored run, read over every step it keeps:
   * length against reward, reward-component dominance, group collapse and KL acceleration, each
   * found, clear or not applicable with its figures. An audit of the whole run, not an early warning.
   */
  rewardAudit(runId: string): Promise<RewardAudit>;
  /**
   * The mismatch lab's runs (worker/presets/mismatch-lab.ts) for an injection (`bf16`, `stale:K`,
   * `temperature:T`): grpo-arith with `steps` and `seed`, evaluated at the end, on-policy first and
   * then once per correction named (all when absent); or why not, naming the allowed forms. The app
   * starts them one after another as ordinary runs.
   */
  mismatchLabPlan(request: {
    inject: string;
    corrections?: string[];
    steps: number;
    seed: number;
  }): Promise<{ ok: true; plan: MismatchLabPlan } | { ok: false; message: string }>;
  /**
   * The lab's table over stored runs: each run's row (its correction named) from its stored metrics
   * and last evaluation, with the header and cells as the CLI prints them.
   */
  mismatchLabRows(
    runs: { runId: string; correction: string }[],
  ): Promise<{ rows: LabRow[]; header: string[]; cells: string[][] }>;
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
  /**
   * A stored run as the bundle `dewpoint export RUN --to verl|skyrl` writes (worker/interop/stored-bundle.ts):
   * its latest checkpoint as model/, prompts, rollouts, reward.py with parity.jsonl, launch.sh (verl),
   * preflight.json and README.md, with the preflight's checks; `ok: false` with the reason for an
   * unknown run, an imported one, or a flow policy's.
   */
  exportRunBundle(runId: string, to: 'verl' | 'skyrl'): Promise<RunBundle | { ok: false; reason: string }>;
}
