/**
 * What a run stores and the views read: the run listing and its events, each step's advantage
 * groups, packed batch and sessions, Flow-GRPO clouds, journaled episodes and their replay, an
 * imported verl run's record, checkpoints and export files. The RL core's own types (worker/rl)
 * are restated here only where the app needs them. Types only; part of the contract protocol.ts
 * re-exports.
 */
import type { BackendName } from '../../kernels/backends/info';
import type { FileProblem } from './models';
import type { RunOptions } from './options';
import type { RunBackendChoice } from './system';

/** One file of an export to verl or TRL. */
export interface ExportFile {
  name: string;
  mime: string;
  bytes: Uint8Array;
}

/** One check of a bundle's preflight (worker/interop/preflight.ts): what would fail when it arrives on verl or SkyRL. */
export interface BundleCheck {
  /** The rule's name, as README and the CLI print it (`head-dim-multiple-of-32`). */
  rule: string;
  status: 'pass' | 'refused' | 'note';
  detail: string;
}

/** A stored run bundled for verl or SkyRL (worker/interop/stored-bundle.ts): its files, the preflight, the checkpoint's step. */
export interface RunBundle {
  ok: true;
  files: ExportFile[];
  preflight: BundleCheck[];
  /** The step of the checkpoint in model/ (null: the run has none, and model/ is missing). */
  checkpointStep: number | null;
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
  /** A failed run's failing episode, when the journal holds it (an environment that broke: the Episodes view opens it). */
  failedEpisode?: FailedEpisode;
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

/** The episode a run failed on (its step's journal holds it). */
export interface FailedEpisode {
  step: number;
  index: number;
}

export type RunEvent =
  | { type: 'status'; runId: string; status: RunStatus; message?: string; errorName?: string }
  /** `t`: when the step was committed, ms since the epoch, as the store keeps it (`RunHistory`'s `t`). */
  | { type: 'step'; runId: string; step: number; totalSteps: number; metrics: Record<string, number>; t?: number }
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
      /**
       * The evaluation's own metrics, when it has any: a sampled evaluation's `eval/pass@*`, an
       * environment's `eval/errors`. Step 0 has no step event, so they are its step's metrics; at a
       * later step the step event's metrics include them too.
       */
      metrics?: Record<string, number>;
    };

/**
 * The phases of a step, as the dashboard names them: sampling the rollouts, recomputing the old
 * log-probs before the first update (verl `old_log_prob`, only with several updates per batch),
 * the frozen reference's log-probs (β > 0), training (forward, backward, AdamW), the held-out
 * evaluation, storing the step, writing a checkpoint. `step` covers a trainer that does not
 * report its phases (SFT). DPO's sampling counts the pairs found. `grading`: an environment whose
 * steps are graded outside the worker (grpo-code: the companion runs each program) counts them.
 */
export type StepPhase =
  | 'pretraining'
  | 'sampling'
  | 'grading'
  | 'old log-probs'
  | 'reference log-probs'
  | 'training'
  | 'evaluating'
  | 'storing'
  | 'checkpointing'
  | 'step';

/** How a trainer tells where its step is: the phase and, when counted, `done` of `total` `unit`. */
export type PhaseReport = (phase: StepPhase, done?: number, total?: number, unit?: string) => void;

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

/** One completion of an advantage group, as the Groups view shows it. */
export interface GroupSample {
  sample: number;
  /** Decoded completion (specials hidden). */
  completion: string;
  reward: number;
  components: Record<string, number>;
  /**
   * The session's advantage (0 when it carries no loss mass, e.g. masked or zero-std; OTB: the mean
   * of its per-token ones); a DPO pair's completion: its implicit reward.
   */
  advantage: number;
  /**
   * The baseline the estimator subtracted from this sample's reward (RLOO: the mean of the others;
   * OTB: the mean of its per-token ones; absent when not trained or not kept, and under GDPO, which
   * centres each component).
   */
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
  /**
   * A step sampled ahead (asynchronous rollouts): the oldest policy version among the sample's
   * calls and how many versions that trails the weights the step trained on. Absent when no sample
   * of the step trails (every synchronous step).
   */
  served?: { version: number; staleness: number };
}

/**
 * A stored run's history as the Compare view and the dashboard read it: per step its metrics and
 * when it was committed (`t`, ms since the epoch; absent for steps stored before it was kept and
 * for an imported run, whose steps were committed at the import), and its evaluations.
 */
export interface RunHistory {
  /**
   * `t`: when the step was committed (ms since the epoch); `activeMs`: the run's compute time up to
   * and including it (pauses, stops and gaps between a stop and a Continue left out), when stored.
   */
  steps: { step: number; metrics: Record<string, number>; t?: number; activeMs?: number }[];
  evaluations: { step: number; accuracy: number; meanLength: number; n: number }[];
}

/**
 * One kept step's samples as distributions (the Compare view's histograms over steps): each
 * sample's reward and its length in sampled ids (EOS included; an episode's over all its actions),
 * read from the step's advantage groups. Lengths an import did not record are left out.
 */
export interface StepDistribution {
  step: number;
  rewards: number[];
  lengths: number[];
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
    estimator: 'grpo' | 'rloo' | 'reinforce++-baseline' | 'gpg' | 'grpo-passk' | 'gdpo' | 'otb' | 'otb-tir';
    /** The options the estimator read, compat's defaults filled in (grpo: compat, scale, stdType, epsilon, singleton). */
    settings: Record<string, string | number | boolean>;
    /** Samples the estimator grouped (the trained ones: truncated completions are left out under truncation 'mask'). */
    members: number;
    /**
     * μ subtracted, when the same for every member (GRPO, REINFORCE++: the group mean); null when per
     * sample (RLOO: `GroupSample.baseline`) or per token (OTB: the sample's mean B_t).
     */
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

/** A batch sampled ahead (asynchronous rollouts): per sampled id, the versions its call trails the weights it trained on; −1 elsewhere. */
export type AsyncBatchLayer = 'staleness';

export type BatchLayer = CoreBatchLayer | CriticBatchLayer | CorrectionBatchLayer | AsyncBatchLayer;

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
  layers: Record<CoreBatchLayer, Float32Array> &
    Partial<Record<CriticBatchLayer | CorrectionBatchLayer | AsyncBatchLayer, Float32Array>>;
}

/** One model call of a stored session, as the sampler served it (worker/rl/types.ts `Call`). */
export interface StoredCall {
  promptIds: Int32Array;
  /** EOS included when finishReason is 'stop'. */
  sampledIds: Int32Array;
  /** Per sampled id: log-prob under the sampling distribution, and under the unfiltered model at the temperature (null: not recorded). */
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
 * `input` and `expected` are the case's stdin and expected stdout, attached by the worker's grader
 * (rewards/code-grader.ts `withCaseIO`); absent in runs stored before they were kept.
 */
export interface CaseResult {
  verdict: string | null;
  passed: boolean;
  stdout: string;
  stderr: string;
  detail: string;
  input?: string;
  expected?: string;
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
  /**
   * With restored turns of an episode that went on: how its environment was brought back to them,
   * from the snapshot journaled with the last one (`state`: set_state, no turn re-run) or by
   * replaying their actions from reset (`replay`: an environment without state).
   */
  resumedBy?: 'state' | 'replay';
  /** Milliseconds of sampling and environment steps, over its turns. */
  ms: number;
  /** What the environment's program wrote to stderr over the episode (its last 4096 characters); absent when nothing. */
  stderr?: string;
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

/** Run health (worker/runs/health.ts): the thresholds of its flags, each default in HEALTH_DEFAULTS. */
export interface HealthOptions {
  /** Steps in each moving mean, and in the start they are compared with. */
  window: number;
  /** echo-trap: the within-group std has fallen below (1 − stdDrop) × its start ... */
  stdDrop: number;
  /** ... while the mean reward is at most its start + this (rewards in [0, 1]). */
  minRewardRise: number;
  /** low-signal: fewer than this fraction of groups carry a nonzero advantage. */
  minSignalFrac: number;
  /** entropy: below entropyLow × its start, or above entropyHigh × its start. */
  entropyLow: number;
  entropyHigh: number;
  /** length: the mean response length off its start by more than this fraction. */
  lengthDrift: number;
  /** truncation: the truncated fraction above its start + this. */
  truncatedRise: number;
  /** diversity: distinct completions per group below (1 − diversityDrop) × its start. */
  diversityDrop: number;
  /** grad-spike: the gradient norm above this × the median of the steps before it. */
  gradSpike: number;
  /** mismatch: the sampler/trainer KL (k1, per token) above this. */
  mismatchKl: number;
  /** infrastructure: at least this share of a step's episodes ended as environment or sandbox failures. */
  envErrorFrac: number;
}

export type HealthFlagId =
  | 'echo-trap'
  | 'low-signal'
  | 'entropy'
  | 'length'
  | 'truncation'
  | 'diversity'
  | 'grad-spike'
  | 'mismatch'
  | 'infrastructure';

export interface HealthFlag {
  id: HealthFlagId;
  /** The metric it reads. */
  metric: string;
  /** The step where it first held. */
  step: number;
  /** Whether it holds at the last step. */
  active: boolean;
  /** One sentence: what held, the metric and its figures at `step`. */
  reason: string;
  /** Where to look at that step. */
  view: 'Groups' | 'Episodes';
}

/** The reward-hacking audit's checks (worker/runs/audit.ts). */
export type AuditCheckId = 'length-reward' | 'component-dominance' | 'group-collapse' | 'kl-acceleration';

/**
 * One check of the reward-hacking audit, read over the whole stored run (not as it trains):
 * `found` when the run shows the pattern, `clear` when it was checked and does not, and
 * `not-applicable` when the run lacks what the check reads (the sentence says what).
 */
export interface AuditFinding {
  id: AuditCheckId;
  verdict: 'found' | 'clear' | 'not-applicable';
  /** One or two sentences: what was read, its figures and, when found, what it means. */
  reason: string;
  /** The figures the verdict rests on, by name (e.g. `r`, `length_start`, `share_overlong`). */
  figures: Record<string, number>;
  /** Where to look (the Groups view at this step), when found. */
  step?: number;
}

/** The reward-hacking audit of a stored run: how many steps it read, and one finding per check. */
export interface RewardAudit {
  steps: number;
  findings: AuditFinding[];
}

/** What the mismatch lab's table shows of one run (worker/presets/mismatch-lab.ts). */
export interface LabRow {
  correction: string;
  title: string;
  /** Mean `reward/mean` over the last `window` steps. */
  reward: number;
  /** Held-out greedy accuracy after the last step. */
  accuracy: number;
  /** Mean over the steps of `mismatch/kl` and `mismatch/ess`. */
  kl: number;
  ess: number;
  /** Mean over the steps of the share the correction masked or capped; null without one. */
  share: number | null;
  shareWhat: 'masked' | 'capped' | null;
}

/** The mismatch lab's runs for an injection (worker/presets/mismatch-lab.ts): the on-policy reference first, then one per correction. */
export interface MismatchLabPlan {
  /** What was injected, in words. */
  title: string;
  runs: { correction: string; title: string; name: string; options: RunOptions }[];
}
