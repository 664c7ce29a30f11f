/**
 * Flow-GRPO on 2-D points (issue 15): a rectified-flow policy (an MLP velocity field on `Ops`),
 * Flow-GRPO's SDE sampler with per-step Gaussian log-probs, the Flow-GRPO objective, shape
 * rewards, flow-matching pretraining, the `FlowGrpoRun` trainer and its checkpoint files. Each
 * module cites its source.
 */
export { FLOW_2D, flowParamSpecs, validateFlowModelConfig, type FlowModelConfig, type FlowParamSpec } from './config';
export { VelocityField } from './model';
export {
  FLOW_SDE_DEFAULTS,
  flowSchedule,
  flowTimesteps,
  type FlowSdeOptions,
  type TransitionCoefficients,
} from './sde';
export { finalPoints, gaussianStarts, sampleOde, sampleSde, type FlowTrajectories, type Velocity } from './rollout';
export { flowGrpoObjective, type FlowGrpoInput, type FlowGrpoOptions, type FlowGrpoOutput } from './objective';
export {
  FLOW_DISCS,
  FLOW_RING,
  FLOW_VIEW_BOX,
  distanceToTarget,
  flowReward,
  rewardGrid,
  validateFlowReward,
  type FlowRewardOptions,
  type FlowRewards,
  type FlowTarget,
} from './reward';
export {
  FLOW_BASES,
  PRETRAIN_DEFAULTS,
  pretrainBase,
  pretrainFlow,
  sampleBase,
  type FlowBase,
  type PretrainOptions,
} from './pretrain';
export {
  FLOW_CHECKPOINT_FILES,
  flowCheckpointFiles,
  importFlowCheckpoint,
  type FlowCheckpointFiles,
  type LoadedFlowCheckpoint,
} from './checkpoint';
export {
  FLOW_GRPO_2D,
  FlowGrpoRun,
  validateFlowGrpoConfig,
  type FlowGrpoConfig,
  type FlowGrpoStep,
  type FlowGrpoUpdate,
  type FlowSamples,
} from './run';
export { flowConfigOf, flowOptionsOf } from './options';
