/**
 * The RL core's public surface (issue 4): the session data model, validation, `sessionOf`, `pack`,
 * the advantage estimators, aggregation, KL estimators, the policy-loss registry, the behavior
 * corrections and off-policy metrics, and the objectives (`grpoObjective`, `ppoObjective`,
 * `dpoLoss`, `valueLoss`). Inputs are plain `ArrayLike<number>` tables, row-major `[rows, width]`;
 * outputs are `Float64Array`s and plain objects, so tests, the CLI and an external reference-value
 * suite can drive everything without the worker. Pure TypeScript, float64, no GPU.
 */
export type { Compat, LegacyCompat } from './compat';
export { checkFinite, checkTable, sequenceSpans, type SegmentSpan, type TableLayout } from './table';

// Data model, validation, sessionOf, pack.
export {
  AGENT_OUTCOMES,
  INFRASTRUCTURE_FAILURES,
  STATUSES,
  isInfrastructureFailure,
  statusOf,
  trainable,
  trains,
  type Action,
  type AgentOutcome,
  type Call,
  type Episode,
  type EpisodeId,
  type EpisodeStatus,
  type FinishReason,
  type InfrastructureFailure,
  type Observation,
  type SamplingSettings,
  type Session,
  type Status,
  type Task,
  type TerminationReason,
  type Transition,
  type Truncation,
} from './types';
export { describeSession, validateCall, validateSession, validateSessions } from './validate';
export { sessionOf } from './session-of';
export { pack } from './pack';
export { chainsOf, placeChains, type Chain, type Placed, type Placement } from './pack-chains';
export type { ChainPlacement, PackedBatch, PackOptions, PackRefusal, PackResult, SessionCounts } from './pack-types';

// Advantage estimators.
export {
  OUTCOME_ESTIMATORS,
  TOKEN_ESTIMATORS,
  VERL_EPS,
  broadcastAdvantages,
  gae,
  gdpoAdvantages,
  gdpoSettings,
  gpgAdvantages,
  grpoAdvantages,
  grpoPasskAdvantages,
  grpoPasskSettings,
  grpoSettings,
  outcomeAdvantages,
  otbAdvantages,
  otbPacked,
  otbSettings,
  reinforcePlusPlusBaseline,
  reinforcePlusPlusSettings,
  rlooAdvantages,
  rlooSettings,
  verlMaskedMean,
  verlWhitenStats,
  whitenWith,
  type AdvantageOptions,
  type GaeInput,
  type GaeOptions,
  type GaeResult,
  type GdpoOptions,
  type GrpoOptions,
  type GrpoPasskOptions,
  type OutcomeAdvantages,
  type OutcomeEstimator,
  type OtbOptions,
  type ReinforcePlusPlusOptions,
  type RlooOptions,
  type TokenEstimator,
  type WhitenStats,
} from './advantages/index';

// Aggregation and KL.
export {
  aggregate,
  aggregationWeights,
  sessionMeanWeights,
  weightedSum,
  AGGREGATION_MODES,
  SEQ_TOKEN_MEAN_EPS,
  type AggregationMode,
  type AggregationInput,
  type AggregationOptions,
  type Aggregated,
} from './aggregate';
export {
  klAt,
  klEstimatorOf,
  klPenalty,
  KL_ESTIMATORS,
  type KlEstimator,
  type KlInput,
  type KlOptions,
  type KlResult,
} from './kl';

// Policy losses.
export {
  coupledResult,
  localResult,
  type AuxiliaryTerm,
  type PolicyLossContext,
  type PolicyLossFn,
  type PolicyLossResult,
} from './losses/types';
export {
  isPolicyLossName,
  policyLoss,
  runPolicyLoss,
  POLICY_LOSSES,
  POLICY_LOSS_NAMES,
  type PolicyLossName,
  type PolicyLossOptions,
  type PolicyLossSpec,
} from './losses/registry';
export { aggregatePolicyLoss, type AggregatedPolicyLoss } from './losses/aggregate-policy-loss';
export { ppoLoss, ppoSettings, type PpoOptions } from './losses/ppo';
export { gspoLoss, gspoSettings, type GspoOptions, type GspoResult } from './losses/gspo';
export { cispoLoss, cispoSettings, type CispoOptions } from './losses/cispo';
export { reinforceLoss, type ReinforceOptions } from './losses/reinforce';
export { dppoTvLoss, dppoKlLoss, dppoSettings, type DppoOptions, type DppoResult } from './losses/dppo';
export { icepopLoss, icepopSettings, type IcepopOptions } from './losses/icepop';
export { reinforceKlLoss, type ReinforceKlOptions } from './losses/reinforce-kl';
export { echoLoss, type EchoOptions } from './losses/echo';
export { geoMeanLoss, geoMeanSettings, type GeoMeanOptions } from './losses/geo-mean';
export { clipCovLoss, clipCovSettings, tokenCovariance, type ClipCovOptions } from './losses/clip-cov';
export { klCovLoss, klCovSettings, type KlCovOptions } from './losses/kl-cov';
export { sapoLoss, sapoSettings, type SapoOptions } from './losses/sapo';
export { droLoss, droSettings, type DroOptions } from './losses/dro';
export { gammaWeight, vespoLoss, vespoSettings, type VespoOptions } from './losses/vespo';

// Behavior corrections and off-policy metrics.
export {
  isWeights,
  effectiveSampleSize,
  parseIsThreshold,
  type IsThreshold,
  type IsWeightsOptions,
  type IsWeightsInput,
  type IsWeightsResult,
} from './corrections/is-weights';
export {
  rejectionMask,
  REJECTION_OPTIONS,
  type RejectionOption,
  type RejectionThresholds,
  type RejectionInput,
  type RejectionResult,
} from './corrections/rejection';
export { offPolicyMetrics, type OffPolicyMetricsInput } from './corrections/off-policy-metrics';
export {
  offPolicySequenceMask,
  type OffPolicySequenceMask,
  type OffPolicySequenceMaskInput,
} from './corrections/off-policy-sequence-mask';
export {
  rolloutCorrection,
  type BypassLossType,
  type RolloutCorrectionInput,
  type RolloutCorrectionResult,
} from './corrections/rollout-correction';
export type { SequenceLayout } from './corrections/sequences';

// The entropy bonus and its adaptive coefficient.
export {
  entropyBonus,
  ENTROPY_AGGREGATIONS,
  type EntropyAggregation,
  type EntropyBonus,
  type EntropyBonusOptions,
} from './entropy-bonus';
export {
  appliedEntropyCoef,
  initialEntropyState,
  nextEntropyState,
  type AdaptiveEntropyOptions,
  type EntropyControllerState,
} from './adaptive-entropy';

// Objectives.
export type { ObjectiveInput, ObjectiveOutput } from './objectives/types';
export { grpoObjective, type GrpoObjectiveOptions, type GrpoObjectiveOutput } from './objectives/grpo';
export {
  ppoObjective,
  type PpoObjectiveInput,
  type PpoObjectiveOptions,
  type PpoObjectiveOutput,
} from './objectives/ppo';
export { dpoLoss, type DpoLossType, type DpoOptions, type DpoInput, type DpoResult } from './dpo';
export { valueLoss, type ValueLossInput, type ValueLossResult } from './value-loss';
