/**
 * The RL core's data model: what one model call, one harness session and one multi-turn episode
 * are, and how a session's end decides whether it trains.
 *
 * Plain data only: checks live in `validate.ts`, the episode → session reading in `session-of.ts`,
 * the batch layout in `pack.ts`. Reference: `dew.objectives.rl` (`Call`, `Session`, `Status`,
 * `Task`, `EpisodeId`, `Action`, `Observation`, `Transition`, `Episode`) as summarised in
 * docs/rl-core.md "Data model"; termination reasons from the later framework named there.
 */
import type { CaseResult, SessionCritic } from '../contract/records';

/** `stop`: the sampler hit EOS (included in `sampledIds`); `length`: it ran out of budget. */
export type FinishReason = 'stop' | 'length';

/** One model call as the sampler served it (dew `Call`). */
export interface Call {
  /** The exact context ids the model saw. Non-negative integers. */
  promptIds: ArrayLike<number>;
  /** The ids drawn, EOS included when `finishReason` is `stop`. Non-negative integers. */
  sampledIds: ArrayLike<number>;
  /** Per sampled id, its log-probability under the sampling distribution (after temperature/top-k/top-p). Finite. */
  behaviorLogProbs: ArrayLike<number>;
  /**
   * Per sampled id, its log-probability under the unfiltered model at the sampling temperature
   * (log_softmax(l / T), as the trainer scores it); becomes `oldLogProbs`. Absent when the sampler
   * did not record it.
   */
  rawLogProbs?: ArrayLike<number>;
  finishReason: FinishReason;
  /** The oldest policy version that may have produced any of the ids. Non-negative integer. */
  version: number;
  /** Per sampled id, the ids the top-k/top-p filter kept (must contain the sampled id). Absent: no filter. */
  support?: ReadonlyArray<ArrayLike<number>>;
}

/**
 * How a session ended (dew `Status`). `completed` and `truncated` are trainable (truncated ones
 * subject to pack's `truncation`); `cancelled` and `failed` (an infrastructure failure) never
 * train and are never scored as a real zero.
 */
export type Status = 'completed' | 'truncated' | 'cancelled' | 'failed';

export const STATUSES: readonly Status[] = ['completed', 'truncated', 'cancelled', 'failed'];

/** Whether a session with this status is scored and may carry loss mass (dew `Status.trainable`). */
export function trainable(status: Status): boolean {
  return status === 'completed' || status === 'truncated';
}

/** pack's rule for truncated sessions: `mask` drops their loss mass, `score` trains them on their reward. */
export type Truncation = 'mask' | 'score';

/** Whether a session with this status carries loss mass under the given truncation rule. */
export function trains(status: Status, truncation: Truncation): boolean {
  return status === 'completed' || (status === 'truncated' && truncation === 'score');
}

/** Agent outcomes: how well the agent did is the verifier's business; these sessions are scored. */
export const AGENT_OUTCOMES = ['env_done', 'max_turns', 'max_prompt_length', 'max_response_length', 'timeout'] as const;
/** Infrastructure failures: not the agent's doing, so masked from training (never a zero reward), counted and shown. */
export const INFRASTRUCTURE_FAILURES = [
  'sandbox_error',
  'verifier_timeout',
  'grading_error',
  'model_error',
  'env_start_timeout',
  // An environment that threw, hung past its step deadline or answered with invalid ids.
  'env_error',
] as const;

export type AgentOutcome = (typeof AGENT_OUTCOMES)[number];
export type InfrastructureFailure = (typeof INFRASTRUCTURE_FAILURES)[number];
export type TerminationReason = AgentOutcome | InfrastructureFailure;

export function isInfrastructureFailure(reason: TerminationReason): reason is InfrastructureFailure {
  return (INFRASTRUCTURE_FAILURES as readonly string[]).includes(reason);
}

/**
 * The status a termination reason implies: `env_done` → completed; the budget reasons
 * (`max_turns`, `max_prompt_length`, `max_response_length`, `timeout`) → truncated; every
 * infrastructure failure → failed.
 */
export function statusOf(reason: TerminationReason): Status {
  if (reason === 'env_done') return 'completed';
  return isInfrastructureFailure(reason) ? 'failed' : 'truncated';
}

/** One harness session: its calls in submission order and how it ended (dew `Session`). */
export interface Session {
  /** Task id; `(task, group)` names the advantage group. */
  task: string;
  group: string;
  /** Member index within the group, and retry count: tell members and retries apart. Non-negative integers. */
  sample: number;
  attempt: number;
  calls: readonly Call[];
  status: Status;
  /** Why it ended, when known; must agree with `status` (see `statusOf`). */
  termination?: TerminationReason;
  /** The verifier's score; required (finite) when the status is trainable, ignored otherwise. */
  reward: number | null;
  /** Named verifier sub-scores, for logging. */
  components?: Readonly<Record<string, number>>;
  /** A code reward's test cases, one per case (the `code` environment's episodes). */
  cases?: readonly CaseResult[];
  /** PPO's per-sampled-id critic figures, calls in order (worker/train/ppo.ts): for the views, not read by pack. */
  critic?: SessionCritic;
  /** Verifier or failure provenance. */
  detail?: string;
}

/** One unit of work a session source runs: an identity and its source-specific payload (dew `Task`). */
export interface Task {
  id: string;
  data: Readonly<Record<string, unknown>>;
}

/** One sample within an attempt, reproducible from checkpointed work (dew `EpisodeId`). */
export interface EpisodeId {
  /** The submission's serial number. */
  task: number;
  attempt: number;
  sample: number;
  seed: readonly number[];
}

/** The sampling controls an action was drawn under. */
export interface SamplingSettings {
  temperature: number;
  /** Absent: no top-k filter. */
  topK?: number;
  /** Absent: no top-p filter. */
  topP?: number;
}

/** One actual model call of an episode, EOS included, with both likelihoods (dew `Action`). */
export interface Action {
  /** The exact context ids. */
  context: ArrayLike<number>;
  /** The sampled ids; stop at the first EOS. */
  tokens: ArrayLike<number>;
  rawLogProbs: ArrayLike<number>;
  behaviorLogProbs: ArrayLike<number>;
  /** Whether the action ended on EOS (ends the model turn, not the episode). */
  terminated: boolean;
  /** The policy version the action was drawn from. */
  policyStep: number;
  sampling: SamplingSettings;
  support?: ReadonlyArray<ArrayLike<number>>;
}

/** dew `EpisodeStatus`; `error` is an environment-reported (infrastructure) failure. */
export type EpisodeStatus = 'running' | 'completed' | 'truncated' | 'cancelled' | 'error';

/** The exact next model context, or a terminal result (dew `Observation`). */
export interface Observation {
  context: ArrayLike<number>;
  status: EpisodeStatus;
  detail?: string;
  /** Why a terminal observation ended the episode, when the environment says. */
  termination?: TerminationReason;
  /** A code reward's test cases, when the environment graded a program (the `code` environment). */
  cases?: readonly CaseResult[];
}

export type { CaseResult };

export interface Transition {
  action: Action;
  observation: Observation;
}

/** A multi-turn episode (dew `Episode`). */
export interface Episode {
  identity: EpisodeId;
  policyStep: number;
  initial: Observation | null;
  transitions: readonly Transition[];
  status: EpisodeStatus;
  detail?: string;
  reward: number | null;
  termination?: TerminationReason;
}
