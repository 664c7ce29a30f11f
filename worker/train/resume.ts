/**
 * What a trainer needs, beyond its config, to continue a run exactly where it stopped: its
 * position (steps taken, tasks drawn from the seeded stream, whatever else it carries
 * from one step to the next) plus the model's weights and AdamW state. GRPO's sampling seeds and
 * SFT's learning-rate schedule derive from the step, so nothing else is needed: on one backend a
 * continued run computes the same steps as one that never stopped. Not storage (worker/store) and
 * not the loop (worker/runs).
 */
import type { RunTask } from './task-source';
import type { Model, OptimizerState } from '../model/model';
import type { Generated } from '../rollout/generate';
import type { EntropyControllerState } from '../rl/adaptive-entropy';

/** A DPO preference pair found by sampling but not yet trained on. */
export interface PendingPair {
  task: RunTask;
  prompt: Int32Array;
  chosen: Int32Array;
  rejected: Int32Array;
  /**
   * The frozen base's sampler calls that drew `chosen` and `rejected` (their behavior and raw
   * log-probs), stored with the step's sessions. Absent in pairs a checkpoint kept before they were.
   */
  calls?: { chosen: Generated; rejected: Generated };
  /**
   * The reward each completion was chosen by (MathReward or the dataset's), as scored when the
   * pair was found: the Groups view shows it. Absent in pairs a checkpoint kept before they were.
   */
  rewards?: { chosen: PairReward; rejected: PairReward };
}

/** A DPO completion's reward: its score (1 correct, 0 not), components and detail line. */
export interface PairReward {
  score: number;
  components: Record<string, number>;
  detail: string;
}

export interface TrainerPosition {
  /** Steps taken (`next()` calls; a GRPO step is one sampled batch, epochs × miniBatches optimizer steps): the next `next()` computes step + 1. */
  step: number;
  /** Tasks drawn so far from the seeded train stream (worker/data/arith.ts `trainStream`, or a dataset's `datasetStream`). */
  tasksDrawn: number;
  /**
   * The adaptive entropy coefficient's controller (worker/rl/adaptive-entropy.ts) after the last
   * step; absent without an adaptive bonus, and before its first step.
   */
  entropy?: EntropyControllerState;
  /** DPO only: sampling rounds so far (each round's seed counts up) and pairs waiting for a step. */
  dpo?: { sampled: number; pending: PendingPair[] };
}

/** Beside a checkpoint's files (the weights), what continuing from it needs: the store keeps it with them. */
export interface ResumeRecord {
  optimizer: OptimizerState;
  position: TrainerPosition;
}

/** Everything a freshly constructed trainer loads to continue: position, weights, AdamW state. */
export interface ResumePoint extends ResumeRecord {
  weights: ReadonlyMap<string, Float32Array>;
}

/** A trainer that can say where it stands and continue from there. */
export interface Resumable {
  position(): TrainerPosition;
  /** Call on a freshly constructed run, before its first `next()`. */
  resumeAt(from: ResumePoint): void;
}

/** A run's seeded task stream as resuming reads it: every run's (arithmetic, a dataset's, an environment's) has these. */
export interface TrainStreamPosition {
  /** Tasks drawn so far. */
  readonly position: number;
  take(n: number): unknown;
}

/**
 * Loads weights and AdamW state into `model` and draws `tasksDrawn` tasks from a fresh `stream`
 * (drawing is cheap and gives exactly the stream's state then); the trainer sets its own counters.
 */
export function restore(model: Model, stream: TrainStreamPosition, from: ResumePoint): void {
  const { step, tasksDrawn } = from.position;
  if (!Number.isInteger(step) || step < 0)
    throw new Error(`resumeAt: position.step = ${step}; expected a non-negative integer`);
  if (stream.position !== 0)
    throw new Error(`resumeAt: this run has already drawn ${stream.position} tasks; resume a freshly constructed run`);
  if (!Number.isInteger(tasksDrawn) || tasksDrawn < 0)
    throw new Error(`resumeAt: position.tasksDrawn = ${tasksDrawn}; expected a non-negative integer`);
  model.setWeights(from.weights);
  model.setOptimizerState(from.optimizer);
  while (stream.position < tasksDrawn) stream.take(1);
}
