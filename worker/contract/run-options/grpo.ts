/**
 * The GRPO family's run options (GRPO and PPO, single-turn and on episodes, on a built-in
 * environment or a person's program) as zod schemas: each field's range, label and help, the
 * checks across fields that need nothing but the options, and the types (`z.output`). The
 * trainers (worker/train) read these options as they are; the checks that need the worker
 * (a dataset's split, a program's hash) are worker/presets/schema.ts's.
 */
import { z } from 'zod';
import {
  base,
  COMPAT,
  dataset,
  int,
  idsPerPass,
  lora,
  lr,
  maxNew,
  maxNewRefine,
  num,
  optimizer,
  recomputeLayers,
  frozenWeights,
  run,
  temperature,
  presetName,
} from './fields';

// Policy-loss options shared by several losses: one definition, so the form shows one field.
const clipLow = num('[0, 1]', {
  title: 'Clip ε low',
  section: 'Objective',
  description: 'Ratio floor 1 − ε_low (verl clip_ratio_low, TRL epsilon). Empty: 0.2.',
}).optional();
const clipHigh = num('[0, 10]', {
  title: 'Clip ε high',
  section: 'Objective',
  description: 'Ratio ceiling 1 + ε_high (DAPO clip-higher). Empty: ε low.',
}).optional();
const lossCompat = z.enum(COMPAT).optional().meta({
  title: 'Loss compat',
  section: 'Objective',
  description: 'Whose conventions fill the loss options left empty (verl by default).',
});

const policyLoss = z
  .discriminatedUnion('name', [
    z.strictObject({
      name: z.literal('ppo'),
      clipLow,
      clipHigh,
      dualClip: num('(1, 1000]', {
        title: 'Dual clip c',
        section: 'Objective',
        description:
          'Bound on the loss of negative-advantage tokens (verl clip_ratio_c). Empty: 3 under verl, none under trl/rllm.',
      }).optional(),
      logRatioClamp: num('(0, 100]', {
        title: 'Log-ratio clamp',
        section: 'Objective',
        description: 'Bound on |logp − old| before exp. Empty: 20 (verl, rllm), none (trl).',
      }).optional(),
      delta: num('(1, 100]', {
        title: 'TRL δ',
        section: 'Objective',
        description: 'TRL two-sided GRPO: r ← min(r, δ) in the unclipped term. Empty: none.',
      }).optional(),
      compat: lossCompat,
    }),
    z.strictObject({
      name: z.literal('gspo'),
      clipLow,
      clipHigh,
      logRatioCap: num('(0, 100]', {
        title: 'Log-ratio cap',
        section: 'Objective',
        description: 'Cap on the log of the sequence ratio. Empty: 10 (verl, rllm), none (trl).',
      }).optional(),
      compat: lossCompat,
    }),
    z.strictObject({
      name: z.literal('cispo'),
      clipLow,
      clipHigh,
      cap: num('(0, 100]', {
        title: 'TRL ratio cap',
        section: 'Objective',
        description: "TRL's absolute cap on the detached ratio (compat trl only). Empty: 5.",
      }).optional(),
      compat: lossCompat,
    }),
    z.strictObject({ name: z.literal('reinforce') }),
    z.strictObject({
      name: z.literal(['dppo_tv', 'dppo_kl']),
      deltaLow: num('[0, 10]', {
        title: 'Trust region δ low',
        section: 'Objective',
        description: 'Drop a negative-advantage token moving away by more than this. Empty: 0.2.',
      }).optional(),
      deltaHigh: num('[0, 10]', {
        title: 'Trust region δ high',
        section: 'Objective',
        description: 'The same for positive advantages. Empty: δ low.',
      }).optional(),
      truncation: num('(0, 10000]', {
        title: 'Ratio truncation C',
        section: 'Objective',
        description: 'Truncation of the detached ratio. Empty: 3 (verl), none (rllm).',
      }).optional(),
      compat: z.enum(['verl', 'rllm']).optional().meta({
        title: 'Loss compat',
        section: 'Objective',
        description: 'verl, or rllm (no truncation, clamped binary KL).',
      }),
    }),
    z.strictObject({
      name: z.literal('icepop'),
      alpha: num('[0, 1000]', {
        title: 'Band low α',
        section: 'Objective',
        description: 'Keep tokens whose train/sampler ratio is at least α. Empty: 0.5.',
      }).optional(),
      beta: num('(0, 1000]', {
        title: 'Band high β',
        section: 'Objective',
        description: 'Keep tokens whose train/sampler ratio is at most β. Empty: 5.',
      }).optional(),
    }),
    z.strictObject({
      name: z.literal('geo_mean'),
      clipLow: num('[0, 10]', {
        title: 'Log-ratio clip ε low',
        section: 'Objective',
        description:
          'GMPO clips logp − old below at −ε_low before the geometric mean (verl clip_ratio_low; the paper uses 0.4). Empty: 0.2.',
      }).optional(),
      clipHigh: num('[0, 10]', {
        title: 'Log-ratio clip ε high',
        section: 'Objective',
        description: 'GMPO clips logp − old above at ε_high (verl clip_ratio_high). Empty: ε low.',
      }).optional(),
    }),
    z.strictObject({
      name: z.literal('clip_cov'),
      clipLow,
      clipHigh,
      ratio: num('(0, 1]', {
        title: 'Clip-Cov share',
        section: 'Objective',
        description:
          'Share of the tokens whose gradient is dropped, at least one, drawn among the high-covariance ones (verl clip_cov_ratio). Empty: 2e-4.',
      }).optional(),
      lb: num('[-1000, 1000]', {
        title: 'Clip-Cov lower bound',
        section: 'Objective',
        description:
          'A candidate’s covariance (A − mean A)(logp − mean logp) exceeds this (verl clip_cov_lb). Empty: 1.',
      }).optional(),
      ub: num('[-1000, 1000]', {
        title: 'Clip-Cov upper bound',
        section: 'Objective',
        description: 'A candidate’s covariance is below this (verl clip_cov_ub). Empty: 5.',
      }).optional(),
    }),
    z.strictObject({
      name: z.literal('kl_cov'),
      ratio: num('(0, 1]', {
        title: 'KL-Cov share',
        section: 'Objective',
        description:
          'Share of the tokens, at least one, of largest covariance (A − mean A)(logp − mean logp) that get the KL penalty (verl kl_cov_ratio). Empty: 2e-4.',
      }).optional(),
      coef: num('[0, 100]', {
        title: 'KL-Cov coefficient',
        section: 'Objective',
        description: 'Weight of |logp − old| on those tokens (verl ppo_kl_coef). Empty: 0.1.',
      }).optional(),
    }),
    z.strictObject({
      name: z.literal('sapo'),
      tauPos: num('(0, 100]', {
        title: 'SAPO τ positive',
        section: 'Objective',
        description: 'Temperature of the soft gate where A > 0 (verl tau_pos, TRL sapo_temperature_pos). Empty: 1.',
      }).optional(),
      tauNeg: num('(0, 100]', {
        title: 'SAPO τ negative',
        section: 'Objective',
        description: 'Temperature where A ≤ 0 (verl tau_neg, TRL sapo_temperature_neg). Empty: 1.05.',
      }).optional(),
      compat: z.enum(['verl', 'trl']).optional().meta({
        title: 'Loss compat',
        section: 'Objective',
        description: 'verl clamps logp − old to ±20 before exp, trl does not. Empty: verl.',
      }),
    }),
    z.strictObject({
      name: z.literal('dro'),
      beta: num('(0, 100]', {
        title: 'DRO β',
        section: 'Objective',
        description:
          'Weight of ½(logp − old)² in the DRO token loss (verl policy_loss.dro_beta, which has no default; 0.05 is the value of verl’s own DRO test).',
        initial: 0.05,
      }),
    }),
    z.strictObject({
      name: z.literal('vespo'),
      kPos: num('[0, 100]', {
        title: 'VESPO k (A ≥ 0)',
        section: 'Objective',
        description: 'Power of the sequence ratio w below 1 where A ≥ 0 (TRL vespo_k_pos). Empty: 2.',
      }).optional(),
      lambdaPos: num('[0, 100]', {
        title: 'VESPO λ (A ≥ 0)',
        section: 'Objective',
        description: 'Decay of the weight above w = 1 where A ≥ 0 (TRL vespo_lambda_pos). Empty: 3.',
      }).optional(),
      kNeg: num('[0, 100]', {
        title: 'VESPO k (A < 0)',
        section: 'Objective',
        description: 'Power below w = 1 where A < 0 (TRL vespo_k_neg). Empty: 3.',
      }).optional(),
      lambdaNeg: num('[0, 100]', {
        title: 'VESPO λ (A < 0)',
        section: 'Objective',
        description: 'Decay above w = 1 where A < 0 (TRL vespo_lambda_neg). Empty: 2.',
      }).optional(),
    }),
    z.strictObject({
      name: z.literal('reinforce_kl'),
      bwdKlCoef: num('[0, 10]', {
        title: 'Backward KL coef',
        section: 'Objective',
        description: 'Weight of the backward KL to the sampler. Empty: 0.',
      }).optional(),
      fwdKlCoef: num('[0, 10]', {
        title: 'Forward KL coef',
        section: 'Objective',
        description: 'Weight of the forward KL to the sampler. Empty: 0.',
      }).optional(),
      klApprox: z.boolean().meta({
        title: 'KL value estimators',
        section: 'Objective',
        description: "Schulman's estimators instead of the score-function forms.",
        initial: false,
      }),
      ratioClampMin: num('[0, 100]', {
        title: 'Ratio clamp min',
        section: 'Objective',
        description: 'Lower bound of the detached weight. Empty: none.',
      }).optional(),
      ratioClampMax: num('(0, 100]', {
        title: 'Ratio clamp max',
        section: 'Objective',
        description: 'Upper bound of the detached weight. Empty: none.',
      }).optional(),
    }),
  ])
  .meta({
    title: 'Policy loss',
    section: 'Objective',
    description:
      'The per-token policy loss by registry name (echo is not offered: it needs environment observation tokens, which arithmetic has none of).',
  });

const aggregation = z
  .discriminatedUnion('mode', [
    z.strictObject({
      mode: z.literal(['token-mean', 'token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum', 'session-mean', 'grpo']),
    }),
    z.strictObject({
      mode: z.literal('seq-mean-token-sum-norm'),
      lossScaleFactor: num('(0, 1000000]', {
        title: 'Loss scale factor',
        section: 'Objective',
        description: 'K of seq-mean-token-sum-norm (verl loss_scale_factor). Empty: the batch width.',
      }).optional(),
      compat: z.enum(['verl', 'verl-legacy']).optional().meta({
        title: 'Aggregation compat',
        section: 'Objective',
        description:
          "verl: Σ/(K·rows with tokens), today's verl; verl-legacy: Σ/K, verl before #5417 (v0.7.0 and earlier). Empty: verl.",
      }),
    }),
    z.strictObject({
      mode: z.literal('dr_grpo'),
      maxCompletionLength: int(1, 4096, {
        title: 'Max completion length',
        section: 'Objective',
        description: 'L_max of dr_grpo (TRL max_completion_length). Empty: the batch width.',
      }).optional(),
    }),
  ])
  .meta({ title: 'Aggregation', section: 'Objective', description: 'How per-token losses become one scalar.' });

const advCompat = z.enum(COMPAT).optional().meta({
  title: 'Advantage compat',
  section: 'Advantage',
  description: 'Whose conventions fill the options left empty (verl by default).',
});
const singleton = z.enum(['raw', 'zero']).optional().meta({
  title: 'Group of one',
  section: 'Advantage',
  description: 'A one-member group keeps its raw score or gets 0. Empty: per compat (verl/rllm raw, trl zero).',
});

/**
 * The reward components GDPO can weigh: the closed set Dewpoint's rewards write into
 * `Session.components` (worker/rewards/math-reward.ts, dataset-reward.ts; DAPO's overlong shaping in
 * worker/train/grpo-family.ts). One number field each, so the schema-driven form needs no list input;
 * `gdpoRefine` refuses a component the run's reward does not produce.
 */
export const GDPO_COMPONENTS = [
  'correct',
  'boxed',
  'parsed',
  'matched',
  'program',
  'passed',
  'score',
  'overlong',
] as const;
/** The components each dataset reward kind produces (a run without a dataset is MathReward's). */
export const REWARD_COMPONENTS: Record<
  'math' | 'exact' | 'regex' | 'code',
  readonly (typeof GDPO_COMPONENTS)[number][]
> = {
  math: ['boxed', 'parsed', 'correct'],
  exact: ['correct'],
  regex: ['matched', 'correct'],
  code: ['program', 'passed', 'correct'],
};
/** What DAPO's overlong shaping adds (overlongBuffer set): the reward before it, and the penalty. */
export const SHAPING_COMPONENTS = ['score', 'overlong'] as const;

const GDPO_HELP: Record<(typeof GDPO_COMPONENTS)[number], string> = {
  correct: 'the answer is right, 0 or 1 (every dataset reward)',
  boxed: 'a \\boxed{} answer was found (math)',
  parsed: 'the boxed answer parsed as a number (math)',
  matched: "the reward's pattern matched (regex)",
  program: 'a code block was found (code)',
  passed: 'the share of test cases passed (code)',
  score: "the reward before DAPO's overlong penalty (with an overlong buffer)",
  overlong: "DAPO's overlong penalty, ≤ 0 (with an overlong buffer)",
};
const gdpoWeight = (c: (typeof GDPO_COMPONENTS)[number]) =>
  num('[0, 10]', {
    title: `GDPO weight: ${c}`,
    section: 'Advantage',
    description: `Weight of the component ${c}: ${GDPO_HELP[c]}. Empty: not read.`,
  }).optional();

const outcomeEstimators = [
  z.strictObject({
    estimator: z.literal('grpo'),
    scale: z.enum(['group', 'batch', 'none']).optional().meta({
      title: 'Std scaling',
      section: 'Advantage',
      description: "Divide by the group's std, the batch's std, or nothing (Dr. GRPO). Empty: group.",
    }),
    stdType: z.enum(['unbiased', 'population']).optional().meta({
      title: 'Std type',
      section: 'Advantage',
      description: 'ddof 1 or 0. Empty: per compat (verl/trl unbiased, rllm population).',
    }),
    epsilon: num('[0, 1]', {
      title: 'Std ε',
      section: 'Advantage',
      description: 'Added to the std. Empty: per compat (verl/rllm 1e-6, trl 1e-4).',
    }).optional(),
    singleton,
    compat: advCompat,
  }),
  z.strictObject({
    estimator: z.literal('rloo'),
    singleton,
    normalize: z.boolean().meta({
      title: 'Whiten over batch',
      section: 'Advantage',
      description: 'Whiten the advantages over the batch afterwards (TRL normalize_advantages).',
      initial: false,
    }),
    compat: advCompat,
  }),
  z.strictObject({
    estimator: z.literal('reinforce++-baseline'),
    shiftMean: z.boolean().optional().meta({
      title: 'Whiten: shift mean',
      section: 'Advantage',
      description:
        "verl masked_whiten's shift_mean: re-centre the whitened advantages (default), or scale only and add the batch mean back. Empty: shift.",
    }),
    compat: z.enum(['verl', 'rllm']).optional().meta({
      title: 'Advantage compat',
      section: 'Advantage',
      description: 'verl (token-weighted whitening, default) or rllm (sequence-level std); TRL has no such estimator.',
    }),
  }),
  // verl compute_gpg_outcome_advantage: α·(r − group mean), α = batch size / non-zero rewards; no options.
  z.strictObject({ estimator: z.literal('gpg') }),
  z.strictObject({
    estimator: z.literal('grpo-passk'),
    scale: z.enum(['group', 'none']).optional().meta({
      title: 'Std scaling',
      section: 'Advantage',
      description:
        "Divide the best sample's margin over the runner-up by the group's std + 1e-6 (verl norm_adv_by_std_in_grpo), or not. Empty: group.",
    }),
  }),
] as const;

// verl compute_gdpo_outcome_advantage / TRL normalize_then_sum: each component normalised in its group, weighed, whitened.
const gdpoEstimator = z.strictObject({
  estimator: z.literal('gdpo'),
  scale: z.enum(['group', 'none']).optional().meta({
    title: 'Std scaling',
    section: 'Advantage',
    description:
      "Divide each component's centred value by its group's std + ε (verl norm_adv_by_std_in_grpo), or not. Empty: group.",
  }),
  compat: z.enum(['verl', 'trl']).optional().meta({
    title: 'Advantage compat',
    section: 'Advantage',
    description:
      'verl (ε 1e-6, whitening weighted by tokens, default) or trl (normalize_then_sum: ε 1e-4, whitening over sequences).',
  }),
  weights: z.strictObject({
    // Every dataset reward writes correct, so it is the one always weighed (0 leaves it out of the sum).
    correct: num('[0, 10]', {
      title: 'GDPO weight: correct',
      section: 'Advantage',
      description: `Weight of the component correct: ${GDPO_HELP.correct}; 0 leaves it out of the sum.`,
      initial: 1,
    }),
    boxed: gdpoWeight('boxed'),
    parsed: gdpoWeight('parsed'),
    matched: gdpoWeight('matched'),
    program: gdpoWeight('program'),
    passed: gdpoWeight('passed'),
    score: gdpoWeight('score'),
    overlong: gdpoWeight('overlong'),
  }),
});

// verl compute_optimal_token_baseline_advantage (and its TIR twin): a baseline per token, the group's
// reward-to-go weighted by each member's path variance 1 − 2π + Σπ² (worker/rl/advantages/otb.ts).
const handleZeroTail = z.boolean().optional().meta({
  title: 'OTB: zero the lone tail',
  section: 'Advantage',
  description:
    'A completion longer than every other in its group gets no baseline past the second-longest length (verl handle_zero_tail). Empty: on.',
});
/** Single turn: members line up by response position (verl optimal_token_baseline). */
const otbEstimator = z.strictObject({ estimator: z.literal('otb'), handleZeroTail });
/** Episodes: by action-token index, the observations between actions skipped (verl tir_optimal_token_baseline). */
const otbTirEstimator = z.strictObject({ estimator: z.literal('otb-tir'), handleZeroTail });

const estimatorMeta = {
  title: 'Advantage estimator',
  section: 'Advantage',
  description:
    'Advantage from the group of completions of each prompt: one per completion (outcome estimators), or one per ' +
    'token (OTB: otb on single turns by response position, otb-tir on episodes by action token).',
} as const;
/** Single-turn GRPO's estimators: the outcome ones, GDPO, which weighs the reward's components, and OTB. */
const advantage = z
  .discriminatedUnion('estimator', [...outcomeEstimators, gdpoEstimator, otbEstimator])
  .meta(estimatorMeta);
/**
 * The episode presets' estimators: no GDPO (an environment's reward writes no components GDPO could
 * weigh); OTB aligned by action token only (otb-tir): aligned by position, an episode's observation
 * ids between its actions would count as response positions, which its packed sessions do not keep.
 */
const episodeAdvantage = z.discriminatedUnion('estimator', [...outcomeEstimators, otbTirEstimator]).meta(estimatorMeta);

const kl = z.strictObject({
  estimator: z.enum(['k1', 'abs', 'k2', 'k3', 'k1+', 'abs+', 'k2+', 'k3+']).meta({
    title: 'KL estimator',
    section: 'KL',
    description:
      "Per-token KL to the reference (k3 = verl low_var_kl); '+' keeps the value with k2's gradient. Used when β > 0.",
  }),
  compat: z.enum(COMPAT).optional().meta({
    title: 'KL compat',
    section: 'KL',
    description: 'verl/rllm clamp k3; trl leaves it unclamped. Empty: verl.',
  }),
});

const level = z.enum(['token', 'sequence']).meta({
  title: 'IS level',
  section: 'Corrections',
  description: 'Per-token ratios, or the exp of each sequence’s summed log-ratio.',
  initial: 'token',
});
const batchNormalize = z.boolean().meta({
  title: 'Normalize IS weights',
  section: 'Corrections',
  description: 'Divide the weights by their batch mean.',
  initial: false,
});

const importance = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('off') }),
    z.strictObject({
      kind: z.literal('tis'),
      level,
      cap: num('(0, 1000]', {
        title: 'TIS cap',
        section: 'Corrections',
        description: 'Upper cap on the importance weight (verl rollout_is_threshold).',
        initial: 2,
      }),
      batchNormalize,
    }),
    z.strictObject({
      kind: z.literal('band'),
      level,
      low: num('[0, 1000]', {
        title: 'Band low',
        section: 'Corrections',
        description: 'Weights below are zeroed (IcePop).',
        initial: 0.5,
      }),
      high: num('(0, 1000]', {
        title: 'Band high',
        section: 'Corrections',
        description: 'Weights above are zeroed (IcePop).',
        initial: 5,
      }),
      batchNormalize,
    }),
  ])
  .meta({
    title: 'IS weights',
    section: 'Corrections',
    description: 'Importance weights between the trainer and the sampler: off, a TIS cap, or an IcePop band.',
  });

const k1 = (title: string, what: string) =>
  num('[1, 1000]', {
    title,
    section: 'Corrections',
    description: `Reject where the ${what} π_train/π_rollout leaves [1/u, u]. Empty: off.`,
  }).optional();
const kHi = (title: string, what: string) =>
  num('(0, 1000]', {
    title,
    section: 'Corrections',
    description: `Reject where the ${what} exceeds this bound. Empty: off.`,
  }).optional();

const rejection = z.strictObject({
  token_k1: k1('Reject token k1', 'token ratio'),
  token_k2: kHi('Reject token k2', 'token k2 divergence'),
  token_k3: kHi('Reject token k3', 'token k3 divergence'),
  seq_sum_k1: k1('Reject seq-sum k1', 'sequence ratio (product)'),
  seq_sum_k2: kHi('Reject seq-sum k2', 'summed k2 of a sequence'),
  seq_sum_k3: kHi('Reject seq-sum k3', 'summed k3 of a sequence'),
  seq_mean_k1: k1('Reject seq-mean k1', 'geometric-mean ratio of a sequence'),
  seq_mean_k2: kHi('Reject seq-mean k2', 'mean k2 of a sequence'),
  seq_mean_k3: kHi('Reject seq-mean k3', 'mean k3 of a sequence'),
  seq_max_k2: kHi('Reject seq-max k2', 'largest token k2 of a sequence'),
  seq_max_k3: kHi('Reject seq-max k3', 'largest token k3 of a sequence'),
});

/**
 * The entropy bonus (worker/rl/entropy-bonus.ts): off, a static coefficient aggregated as verl or as
 * TRL does, or TRL's adaptive coefficient (worker/rl/adaptive-entropy.ts). Runs stored before it have
 * none: off.
 */
const entropyCoef = (initial: number, description: string) =>
  num('[-1, 1]', { title: 'Entropy coefficient c', section: 'Objective', description, initial });
const adaptiveBound = (title: string, initial: number, description: string) =>
  num('[0, 1]', { title, section: 'Objective', description, initial });
const entropyBonus = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('off') }),
    z.strictObject({
      kind: z.literal('static'),
      coef: entropyCoef(0.001, 'loss −= c · E, E the policy entropy (verl actor.entropy_coeff; TRL entropy_coef).'),
      aggregation: z.enum(['loss', 'token-mean']).meta({
        title: 'Entropy aggregation',
        section: 'Objective',
        description:
          "E aggregated as the policy loss is (verl's agg_loss with loss_agg_mode), or the mean over the update's " +
          'tokens whatever the loss (TRL, SkyRL).',
        initial: 'loss',
      }),
    }),
    z.strictObject({
      kind: z.literal('adaptive'),
      coef: entropyCoef(
        0,
        "The coefficient the controller starts from (TRL entropy_coef); it applies only once the last update's " +
          'entropy is at or below the target.',
      ),
      min: adaptiveBound('Entropy coefficient min', 0, 'The lowest the coefficient goes (TRL entropy_coef_min).'),
      max: adaptiveBound('Entropy coefficient max', 1, 'The highest the coefficient goes (TRL entropy_coef_max).'),
      delta: adaptiveBound(
        'Entropy coefficient step δ',
        0.005,
        'Per update, the coefficient rises by δ while the entropy is at or below the target and falls by δ above it ' +
          '(TRL entropy_coef_delta).',
      ),
      target: num('[0, 20]', {
        title: 'Entropy target',
        section: 'Objective',
        description: "The update's mean token entropy (nats) the controller holds (TRL entropy_target).",
        initial: 0.2,
      }),
    }),
  ])
  .default({ kind: 'off' })
  .meta({
    title: 'Entropy bonus',
    section: 'Objective',
    description:
      "Reward the policy's entropy: off, a static coefficient, or TRL's adaptive one (Skywork-OR1), the mean over " +
      "the update's tokens. Empty: off.",
  });

/** GRPO's options after the common ones, shared by the single-turn and the episode presets. */
const grpoRest = {
  temperature,
  topK: int(0, 100, {
    title: 'Top-k',
    section: 'Sampling',
    description: 'Sample among the k most likely ids; 0 = off.',
  }),
  topP: num('(0, 1]', { title: 'Top-p', section: 'Sampling', description: 'Nucleus sampling; 1 = off.' }),
  policyLoss,
  aggregation,
  advantage,
  entropyBonus,
  topEntropyQuantile: num('[0, 1]', {
    title: 'Top-entropy share ρ',
    section: 'Objective',
    description:
      "Train only on the top ρ of each update's tokens by policy entropy (TRL top_entropy_quantile, Wang et al. 2025 " +
      "'high-entropy minority tokens', who use 0.2); the others keep no policy loss but stay in the denominators. " +
      'Empty: every token.',
  }).optional(),
  maskZeroAdvantage: z.boolean().meta({
    title: 'Mask zero-advantage groups',
    section: 'Advantage',
    description: 'Give no loss mass to groups whose rewards are all equal.',
  }),
  truncation: z.enum(['mask', 'score']).meta({
    title: 'Truncated completions',
    section: 'Advantage',
    description: 'mask: no loss mass; score: train on their reward.',
  }),
  beta: num('[0, 10]', {
    title: 'KL β',
    section: 'KL',
    description: 'KL strength to the frozen starting weights; 0 = no reference model.',
  }),
  kl,
  importance,
  rejection,
  offPolicyMask: num('[0, 100]', {
    title: 'Off-policy sequence mask δ',
    section: 'Corrections',
    description:
      "TRL's OPSM (off_policy_mask_threshold, DeepSeek-V3.2): a sequence with a negative advantage whose mean " +
      'log π_sampler − log π_current exceeds δ gives no policy loss (it stays in the denominators). TRL suggests 0.5. ' +
      'Empty: off.',
  }).optional(),
  ...optimizer,
  epochs: int(1, 16, { title: 'Epochs', section: 'Optimizer', description: 'Passes over each sampled batch.' }),
  miniBatches: int(1, 64, {
    title: 'Mini-batches',
    section: 'Optimizer',
    description: 'Optimizer steps per pass (the batch split evenly).',
  }),
  lrSchedule: z
    .enum(['constant', 'cosine'])
    .optional()
    .meta({
      title: 'LR schedule',
      section: 'Optimizer',
      description:
        'Per sampled batch, as verl steps it (optim.lr_scheduler_type): constant after the warmup, or a cosine ' +
        'down to the floor by the last step. Empty: constant.',
    }),
  lrWarmup: int(0, 5000, {
    title: 'LR warmup',
    section: 'Optimizer',
    description:
      'Batches of linear warmup from 0 (verl optim.lr_warmup_steps); as in verl the first batch then trains at lr 0. Empty: none.',
  }).optional(),
  minLrRatio: num('[0, 1]', {
    title: 'Cosine floor',
    section: 'Optimizer',
    description:
      "The cosine's last learning rate as a fraction of the peak (verl optim.min_lr_ratio); read only with a cosine. Empty: 0.",
  }).optional(),
  filterGroups: z
    .enum(['success', 'score'])
    .optional()
    .meta({
      title: 'Dynamic sampling',
      section: 'Advantage',
      description:
        'DAPO (verl algorithm.filter_groups): sample more batches until P groups vary on this metric. success: ' +
        'solved or not before shaping; score: the reward trained on (an overlong penalty lets all-fail groups ' +
        'through). Empty: off.',
    }),
  maxGenBatches: int(1, 64, {
    title: 'Max batches per step',
    section: 'Advantage',
    description:
      'Batches dynamic sampling draws at most per step (verl filter_groups.max_num_gen_batches); short of P ' +
      'groups, the step trains on those kept. Read only with dynamic sampling. Empty: 10.',
  }).optional(),
  overlongBuffer: int(1, 1024, {
    title: 'Overlong buffer',
    section: 'Advantage',
    description:
      "DAPO's soft overlong punishment (verl reward_model.overlong_buffer.len): a response within this many ids of " +
      'its budget loses reward linearly, down to −penalty at the budget. Empty: off.',
  }).optional(),
  overlongPenalty: num('(0, 10]', {
    title: 'Overlong penalty',
    section: 'Advantage',
    description:
      'The penalty at the full budget (verl overlong_buffer.penalty_factor); read only with a buffer. Empty: 1 (DAPO).',
  }).optional(),
  staleness: int(0, 8, {
    title: 'Staleness bound (s)',
    section: 'Sampling',
    description:
      'Asynchronous rollouts: the next s batches sample (and their environment or grader answers) while the ' +
      'trainer updates, each under the weights of its launch; batch k trains on version k − 1 with calls from ' +
      'version k − 1 − s at the oldest (prime-rl orchestrator.max_off_policy_steps; verl ' +
      'async_training.staleness_threshold with one sync per step). Empty or 0: synchronous.',
  }).optional(),
  ...lora,
  idsPerPass,
  recomputeLayers,
  frozenWeights,
  samplerWorker: z
    .boolean()
    .optional()
    .meta({
      title: 'Sample ahead in workers',
      section: 'Sampling',
      description:
        'With a staleness bound: each batch sampled ahead draws in a worker of its own on wasm (a Web Worker in ' +
        'the browser, a worker thread in the CLI), reading the weights the trainer writes into its shared memory (no copy ' +
        'per batch; the browser needs the page cross-origin isolated, as the threaded wasm backend does), so sampling runs on other ' +
        'cores (or the CPU while WebGPU trains). The same numbers on the same backend. Empty: in the trainer.',
    }),
  samplerBf16: z
    .boolean()
    .optional()
    .meta({
      title: 'Sampler weights in bf16',
      section: 'Mismatch lab',
      description:
        'Injects a known mismatch: the sampler holds the layer matrices rounded to bf16 (nearest, ties to even, as a ' +
        'bf16 inference engine loads them) while the trainer scores in f32, so behaviour and training policies differ ' +
        "by the rounding alone. In the trainer's thread. Empty: the sampler has the trainer's weights.",
    }),
  samplerTemperature: num('(0, 10]', {
    title: 'Sampler temperature (uncorrected)',
    section: 'Mismatch lab',
    description:
      "Injects a known mismatch: the sampler draws at this temperature while the trainer scores at the run's " +
      "temperature and is not told (the behaviour log-probs are the sampler's). Empty: the run's temperature.",
  }).optional(),
  evalEvery: run.evalEvery,
  evalN: run.evalN,
  evalSamples: int(0, 64, {
    title: 'Samples per held-out task',
    section: 'Run',
    description:
      'Besides the greedy pass, k samples per held-out task at the training temperature: pass@1 (the mean ' +
      'success of the samples, verl mean@k) and pass@k (a task solved by any of them). Empty or 0: greedy only.',
  }).optional(),
  checkpointEvery: run.checkpointEvery,
};

/** Single-turn presets only: the episode rollout does not record the support. */
const renormalize = z
  .boolean()
  .optional()
  .meta({
    title: 'Renormalise over the support',
    section: 'Sampling',
    description:
      "Train on log-probs renormalised over each sampled id's top-k/top-p support, as the sampler drew " +
      'them (dew). Off: the full softmax. Only changes anything with top-k or top-p on.',
  });

const prompts = int(1, 256, {
  title: 'Prompts per step',
  section: 'Sampling',
  description: 'Prompts (tasks) sampled per step (P).',
  common: true,
});
const group = int(2, 64, {
  title: 'Group size',
  section: 'Sampling',
  description: 'Completions (episodes) per prompt (G), the advantage group.',
  common: true,
});

/**
 * GDPO's check: it weighs only components the run's reward writes (`produced`: the dataset
 * reward's, plus DAPO shaping's with an overlong buffer); a pack of sessions without one would throw.
 */
function gdpoRefine(
  o: { advantage: z.infer<typeof advantage>; overlongBuffer?: number },
  produced: readonly string[],
  ctx: z.RefinementCtx,
): void {
  if (o.advantage.estimator !== 'gdpo') return;
  const all = [...produced, ...(o.overlongBuffer !== undefined ? SHAPING_COMPONENTS : [])];
  for (const [k, w] of Object.entries(o.advantage.weights))
    if (w !== undefined && !all.includes(k))
      ctx.addIssue({
        code: 'custom',
        path: ['advantage', 'weights', k],
        message: `weighs a component this run's reward does not write (it writes ${all.join(', ')}), got ${w}`,
      });
}

/** The checks across fields of any GRPO preset. */
function grpoRefine(
  o: {
    prompts: number;
    group: number;
    miniBatches: number;
    policyLoss: z.infer<typeof policyLoss>;
    importance: z.infer<typeof importance>;
    entropyBonus: z.infer<typeof entropyBonus>;
    maxNew: number;
    maxTurns?: number;
    overlongBuffer?: number;
    staleness?: number;
    samplerWorker?: boolean;
    samplerBf16?: boolean;
  },
  ctx: z.RefinementCtx,
): void {
  // A message is the predicate only: checkRunOptions (fields.ts) puts the field's name before it
  // and writes each `{path}` as that field's name, as every other problem names its fields.
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  // The trainer packs two completions per row and splits the rows (worker/train/grpo.ts).
  const rows = Math.ceil((o.prompts * o.group) / 2);
  if (o.miniBatches > rows) {
    problem(
      ['miniBatches'],
      `must be at most ⌈{prompts} × {group} / 2⌉ = ${rows} (the packed rows; one row per mini-batch at least), got ${o.miniBatches}`,
    );
  }
  const p = o.policyLoss;
  if (p.name === 'clip_cov' && (p.lb ?? 1) >= (p.ub ?? 5)) {
    problem(['policyLoss', 'lb'], `must be below {policyLoss.ub} = ${p.ub ?? 5}, got ${p.lb ?? 1}`);
  }
  if (p.name === 'icepop' && (p.alpha ?? 0.5) > (p.beta ?? 5)) {
    problem(['policyLoss', 'alpha'], `must be at most {policyLoss.beta} = ${p.beta ?? 5}, got ${p.alpha ?? 0.5}`);
  }
  if (
    p.name === 'reinforce_kl' &&
    p.ratioClampMin !== undefined &&
    p.ratioClampMax !== undefined &&
    p.ratioClampMin > p.ratioClampMax
  ) {
    problem(
      ['policyLoss', 'ratioClampMin'],
      `must be at most {policyLoss.ratioClampMax} = ${p.ratioClampMax}, got ${p.ratioClampMin}`,
    );
  }
  // The budget the buffer sits in (worker/train/grpo-family.ts punishOverlong): one action's ids, or an episode's.
  const budget = o.maxNew * (o.maxTurns ?? 1);
  if (o.overlongBuffer !== undefined && o.overlongBuffer > budget)
    problem(
      ['overlongBuffer'],
      `must be at most the response budget ${o.maxTurns === undefined ? '{maxNew}' : '{maxNew} × {maxTurns}'} = ${budget}, got ${o.overlongBuffer}`,
    );
  if (o.importance.kind === 'band' && o.importance.low > o.importance.high) {
    problem(['importance', 'low'], `must be at most {importance.high} = ${o.importance.high}, got ${o.importance.low}`);
  }
  if (o.entropyBonus.kind === 'adaptive' && o.entropyBonus.min > o.entropyBonus.max)
    problem(
      ['entropyBonus', 'min'],
      `must be at most {entropyBonus.max} = ${o.entropyBonus.max}, got ${o.entropyBonus.min}`,
    );
  if (o.samplerWorker && !o.staleness)
    problem(['samplerWorker'], 'samples the batches ahead of the trainer: give {staleness} ≥ 1, or leave it off');
  if (o.samplerWorker && o.samplerBf16)
    problem(['samplerBf16'], "holds the sampler's weights in the trainer's thread: leave {samplerWorker} off with it");
}

export const grpoSchema = z
  .strictObject({
    preset: presetName,
    // The common fields first, in the order the form shows them.
    steps: run.steps,
    lr,
    prompts,
    group,
    seed: run.seed,
    renormalize,
    trainProblems: int(1, 5000, {
      title: 'Training problems',
      section: 'Sampling',
      description:
        'A training set of this many problems, visited in passes (each in a fresh order). Empty: every ' +
        'training problem (about 9,000), drawn at random. A small set (16) is the overfitting check: its ' +
        'reward rises within ~20 steps; held-out accuracy does not.',
    }).optional(),
    maxNew,
    dataset,
    base,
    ...grpoRest,
  })
  .superRefine((o, ctx) => {
    grpoRefine(o, ctx);
    gdpoRefine(o, REWARD_COMPONENTS[o.dataset?.reward.kind ?? 'math'], ctx);
    maxNewRefine(o, ctx);
    if (o.dataset && o.trainProblems !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['trainProblems'],
        message: `applies to the arithmetic generator only; with {dataset} every training record is visited in passes: leave it empty, got ${o.trainProblems}`,
      });
  });

/**
 * The share of a batch's episodes (or of a wave of a held-out evaluation) that may end as
 * infrastructure failures before the run stops as failed, naming the first failure
 * (worker/episodes/infrastructure.ts). Optional: runs stored before it have none and take the default.
 */
const envErrorLimit = num('(0, 1]', {
  title: 'Environment failure limit',
  section: 'Sampling',
  description:
    "The share of a batch's episodes that may end as environment or sandbox failures (the program exited, missed " +
    'its deadline, wrote a line that is not a JSON reply, answered with an error) before the run stops as failed, ' +
    'with the first failure and its stderr in the message. 1: only when every episode failed. Empty: 0.5.',
}).optional();

/** GRPO on multi-turn episodes (worker/train/grpo-episodes.ts): no training-set option; the turn limit and the action length. */
export const episodeGrpoSchema = z
  .strictObject({
    preset: presetName,
    steps: run.steps,
    lr,
    prompts,
    group,
    seed: run.seed,
    maxTurns: int(1, 16, {
      title: 'Max turns',
      section: 'Sampling',
      description: 'Model actions an episode may take; one still running after them is truncated (max_turns).',
      common: true,
    }),
    maxNew: int(1, 64, {
      title: 'Max action tokens',
      section: 'Sampling',
      description:
        'Ids per model action, EOS included; an action that reaches it without EOS truncates its episode (max_response_length).',
    }),
    envErrorLimit,
    ...grpoRest,
    advantage: episodeAdvantage,
  })
  .superRefine(grpoRefine);

/**
 * A person's environment program and its tasks (protocol.ts `EnvProgramRunOptions`): set from two
 * files (`loadEnvironment`, worker/episodes/program.ts checks them), never a form input (`file`).
 * A run without one is refused: it has nothing to run.
 */
const taskRecord = z.strictObject({
  id: z.string({ error: 'must be the task id' }).min(1, { error: 'must be the task id' }),
  prompt: z.string({ error: 'must be the prompt text' }),
  answer: z.string({ error: 'must be the expected answer as text' }),
  data: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }),
});
export const environment = z
  .strictObject(
    {
      program: z.strictObject({
        name: z
          .string({ error: 'must be the file name' })
          .regex(/^[A-Za-z0-9._-]{1,100}$/, { error: 'must be a plain file name (letters, digits, . _ -)' }),
        text: z
          .string({ error: "must be the program's text" })
          .min(1, { error: "must be the program's text" })
          .max(1 << 20, { error: 'must be at most 1 MiB' }),
        sha256: z.string({ error: 'must be a SHA-256 in hex' }).regex(/^[0-9a-f]{64}$/, {
          error: 'must be a SHA-256 in hex (64 digits)',
        }),
        argv: z
          .array(z.string().min(1, { error: 'must not hold an empty word' }), { error: 'must be a list of words' })
          .min(1, { error: 'must name the command to start' })
          .max(32, { error: 'must be at most 32 words' }),
      }),
      tasks: z.strictObject({
        name: z.string({ error: 'must be the file name' }).min(1, { error: 'must be the file name' }),
        records: z
          .array(taskRecord, { error: 'must be a list of {id, prompt, answer, data} tasks' })
          .min(1, { error: 'must hold at least one task' })
          .max(100_000, { error: 'must hold at most 100000 tasks' }),
        heldOut: z
          .int({ error: 'must be an integer count of held-out tasks' })
          .min(0, { error: 'must be an integer count of held-out tasks' }),
      }),
    },
    { error: 'must be {program, tasks} (loadEnvironment reads them from two files)' },
  )
  .optional()
  .meta({
    title: 'Environment program',
    description: 'The environment program (any language, JSON lines on stdin/stdout) and its task file.',
    file: true,
  });

/** GRPO on episodes of a person's environment program (grpo-env): the episode options, the wall per request, the program. */
export const envSchema = z
  .strictObject({
    ...episodeGrpoSchema.shape,
    preset: presetName,
    stepSeconds: int(1, 600, {
      title: 'Step deadline (s)',
      section: 'Sampling',
      description:
        "Seconds the companion gives the program for one reset or step (the session's wall); a slower answer " +
        'ends its episode as an infrastructure error (deadline), masked from training.',
    }),
    environment,
  })
  .superRefine(grpoRefine);

/** PPO (worker/train/ppo.ts): GRPO's options but the outcome estimator and its masking, plus GAE's and the critic's. */
const { advantage: _advantage, maskZeroAdvantage: _mask, ...ppoRest } = grpoRest;
export const ppoSchema = z
  .strictObject({
    preset: presetName,
    renormalize,
    steps: run.steps,
    lr,
    prompts,
    group: int(1, 64, {
      title: 'Completions per prompt',
      section: 'Sampling',
      description: 'Completions sampled per prompt; PPO needs no groups (the critic is the baseline).',
      common: true,
    }),
    seed: run.seed,
    maxNew,
    ...ppoRest,
    gamma: num('[0, 1]', { title: 'GAE γ', section: 'Advantage', description: 'Discount (verl algorithm.gamma).' }),
    lam: num('[0, 1]', {
      title: 'GAE λ',
      section: 'Advantage',
      description: 'Bias-variance trade-off of GAE (verl algorithm.lam; dew PPORollout 0.95).',
    }),
    shiftMean: z.boolean().meta({
      title: 'Whiten: shift mean',
      section: 'Advantage',
      description:
        'Re-centre the whitened advantages (verl masked_whiten shift_mean); off: scale only, the batch mean added back.',
    }),
    valueCoefficient: num('[0, 100]', {
      title: 'Value coefficient',
      section: 'Objective',
      description: 'Weight c_v of the value loss in the one loss (dew value_coefficient).',
    }),
    valueClip: num('(0, 1000]', {
      title: 'Value clip',
      section: 'Objective',
      description:
        'Clip range of the value predictions around the rollout values (dew value_clip 0.2, verl cliprange_value 0.5).',
    }),
    dataset,
    base,
  })
  .superRefine((o, ctx) => {
    grpoRefine(o, ctx);
    maxNewRefine(o, ctx);
  });

/**
 * PPO on multi-turn episodes (ppo-calc): PPO's options without renormalisation (the episode rollout
 * records no support), a dataset or a base of one's own, the turn limit and the action length.
 */
const { renormalize: _renormalize, dataset: _dataset, base: _base, ...ppoEpisodeRest } = ppoSchema.shape;
export const ppoEpisodeSchema = z
  .strictObject({
    ...ppoEpisodeRest,
    preset: presetName,
    maxTurns: episodeGrpoSchema.shape.maxTurns,
    maxNew: episodeGrpoSchema.shape.maxNew,
    envErrorLimit,
  })
  .superRefine(grpoRefine);

/** PPO on a person's environment program (ppo-env): ppo-calc's options, the wall per request, the program. */
export const ppoEnvSchema = z
  .strictObject({
    ...ppoEpisodeSchema.shape,
    preset: presetName,
    stepSeconds: envSchema.shape.stepSeconds,
    environment,
  })
  .superRefine(grpoRefine);

/** Which framework's behaviour an option left unset reproduces (worker/rl/compat.ts). */
export type CompatName = (typeof COMPAT)[number];
/** The policy loss by registry name with that loss's options (worker/rl/losses); an option left out takes the loss's default. */
export type PolicyLossRunOptions = z.output<typeof policyLoss>;
/** Loss aggregation (worker/rl/aggregate.ts). */
export type AggregationRunOptions = z.output<typeof aggregation>;
/** The advantage estimator and its options (worker/rl/advantages), single-turn or episodes'; unset options follow `compat`. */
export type AdvantageRunOptions = z.output<typeof advantage> | z.output<typeof episodeAdvantage>;
export type KlEstimatorName = z.output<typeof kl>['estimator'];
/** Behavior-policy IS weights (worker/rl/corrections/is-weights.ts): none, a TIS cap, or an IcePop band. */
export type ImportanceRunOptions = z.output<typeof importance>;
/** The rejection masks (worker/rl/corrections): k1 options take u, k2/k3 an upper bound; absent: off. */
export type RejectionName = keyof z.output<typeof rejection>;
/** One task of an environment program's task file (a JSONL line): what `reset` sends the program. */
export type EnvTaskRecord = z.output<typeof taskRecord>;
/** A person's environment program and its tasks, carried in the run options (`loadEnvironment` makes it from two files). */
export type EnvProgramRunOptions = NonNullable<z.output<typeof environment>>;

/** GRPO from a base checkpoint on arithmetic or a person's dataset (grpo-arith). */
export type GrpoRunOptions = z.output<typeof grpoSchema>;
/** GRPO on episodes of a built-in environment (grpo-calc, grpo-guess, grpo-code). */
export type EpisodeGrpoRunOptions = z.output<typeof episodeGrpoSchema>;
/** GRPO on a person's environment program (grpo-env). */
export type EnvRunOptions = z.output<typeof envSchema>;
/** PPO with a critic on arithmetic or a person's dataset (ppo-arith). */
export type PpoRunOptions = z.output<typeof ppoSchema>;
/** PPO on episodes of a built-in environment (ppo-calc). */
export type PpoEpisodeRunOptions = z.output<typeof ppoEpisodeSchema>;
/** PPO on a person's environment program (ppo-env). */
export type PpoEnvRunOptions = z.output<typeof ppoEnvSchema>;
/** Any GRPO-family preset's options: the fields all six shapes share are the trainers' common ground. */
export type GrpoFamilyOptions =
  GrpoRunOptions | EpisodeGrpoRunOptions | EnvRunOptions | PpoRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions;
/** The options of a preset that runs episodes (a built-in environment or a person's program, GRPO or PPO). */
export type EpisodeRunOptions = EpisodeGrpoRunOptions | EnvRunOptions | PpoEpisodeRunOptions | PpoEnvRunOptions;
