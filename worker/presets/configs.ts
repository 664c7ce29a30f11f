/**
 * Run options (what the form edits, protocol.ts) ↔ trainer configs (worker/train): `*ConfigOf`
 * maps validated options onto a preset's config, and `*OptionsOf` gives the options a config
 * stands for, so a preset's defaults are its trainer config and the two cannot drift (tested:
 * `grpoConfigOf(grpoOptionsOf(GRPO_ARITH))` is GRPO_ARITH). Not validation (schema.ts).
 */
import type {
  DpoRunOptions,
  EpisodeGrpoRunOptions,
  EnvProgramRunOptions,
  EnvRunOptions,
  PpoEnvRunOptions,
  FlowRunOptions,
  GrpoRunOptions,
  ImportanceRunOptions,
  PolicyLossRunOptions,
  PpoEpisodeRunOptions,
  PpoRunOptions,
  SftRunOptions,
} from '../contract/options';
import { LORA_TARGET_CHOICES } from '../contract/options';
import { FLOW_DISCS, FLOW_RING, PRETRAIN_DEFAULTS, type FlowGrpoConfig, type PretrainOptions } from '../flow/index';
import type { PolicyLossSpec } from '../rl/index';
import type { DpoConfig } from '../train/dpo';
import type { LoraConfig } from '../model/lora';
import { loraFromOptions } from '../model/lora';
import type { GrpoConfig } from '../train/grpo';
import type { GrpoEpisodeConfig } from '../train/grpo-episodes';
import type { PpoConfig } from '../train/ppo';
import type { SftConfig } from '../train/sft';

/** Run bookkeeping the trainers do not see. */
interface Bookkeeping {
  evalN: number;
  checkpointEvery: number;
}

export function sftConfigOf(o: SftRunOptions, base: SftConfig): SftConfig {
  return { ...base, steps: o.steps, lr: o.lr, seed: o.seed, evalEvery: o.evalEvery, evalN: o.evalN };
}

export function sftOptionsOf(c: SftConfig, run: Bookkeeping): SftRunOptions {
  return { preset: 'sft-arith', steps: c.steps, lr: c.lr, seed: c.seed, evalEvery: c.evalEvery, ...run };
}

export function grpoConfigOf(o: GrpoRunOptions, base: GrpoConfig): GrpoConfig {
  const { name, ...lossOptions } = o.policyLoss;
  const { estimator, ...advantage } = o.advantage;
  const config: GrpoConfig = {
    ...base,
    seed: o.seed,
    steps: o.steps,
    prompts: o.prompts,
    group: o.group,
    temperature: o.temperature,
    topK: o.topK,
    topP: o.topP,
    maxNew: o.maxNew,
    lr: o.lr,
    beta1: o.beta1,
    beta2: o.beta2,
    eps: o.eps,
    weightDecay: o.weightDecay,
    maxGradNorm: o.maxGradNorm,
    policyLoss: (Object.keys(lossOptions).length ? { name, options: lossOptions } : { name }) as PolicyLossSpec,
    aggregation: { ...o.aggregation },
    beta: o.beta,
    kl: { ...o.kl },
    maskZeroAdvantage: o.maskZeroAdvantage,
    estimator,
    advantage,
    truncation: o.truncation,
    epochs: o.epochs,
    miniBatches: o.miniBatches,
    evalEvery: o.evalEvery,
    evalN: o.evalN,
    task: { ...base.task, trainProblems: o.trainProblems },
  };
  if (o.renormalize) config.renormalize = true;
  else delete config.renormalize;
  if (o.trainProblems === undefined) delete config.task.trainProblems;
  if (o.dataset) config.dataset = o.dataset;
  else delete config.dataset;
  delete config.importance;
  delete config.rejection;
  const imp = o.importance;
  if (imp.kind !== 'off')
    config.importance = {
      level: imp.level,
      threshold: imp.kind === 'tis' ? imp.cap : [imp.low, imp.high],
      batchNormalize: imp.batchNormalize,
    };
  if (Object.keys(o.rejection).length) config.rejection = { ...o.rejection };
  delete config.lrSchedule;
  delete config.overlong;
  delete config.evalSamples;
  delete config.dynamicSampling;
  delete config.staleness;
  delete config.samplerWorker;
  delete config.idsPerPass;
  delete config.recomputeLayers;
  delete config.frozenWeights;
  delete config.lora;
  const lora = loraFromOptions(o);
  if (lora) config.lora = lora;
  if (o.staleness) config.staleness = o.staleness;
  if (o.samplerWorker) config.samplerWorker = true;
  if (o.idsPerPass !== undefined) config.idsPerPass = o.idsPerPass;
  if (o.recomputeLayers !== undefined) config.recomputeLayers = o.recomputeLayers;
  if (o.frozenWeights !== undefined) config.frozenWeights = o.frozenWeights;
  if (o.filterGroups) config.dynamicSampling = { metric: o.filterGroups, maxGenBatches: o.maxGenBatches ?? 10 };
  if (o.evalSamples) config.evalSamples = o.evalSamples;
  if (o.lrSchedule !== undefined || o.lrWarmup !== undefined)
    config.lrSchedule = { style: o.lrSchedule ?? 'constant', warmup: o.lrWarmup ?? 0, minLrRatio: o.minLrRatio ?? 0 };
  if (o.overlongBuffer !== undefined)
    config.overlong = { buffer: o.overlongBuffer, penaltyFactor: o.overlongPenalty ?? 1 };
  return config;
}

/** The schedule and overlong options of a config, as the options write them (absent when off). */
function stabiliserOptionsOf(c: GrpoConfig): Partial<GrpoRunOptions> {
  const s = c.lrSchedule;
  const o = c.overlong;
  return {
    ...(s
      ? { lrSchedule: s.style, lrWarmup: s.warmup, ...(s.style === 'cosine' ? { minLrRatio: s.minLrRatio } : {}) }
      : {}),
    ...(o ? { overlongBuffer: o.buffer, overlongPenalty: o.penaltyFactor } : {}),
    ...(c.evalSamples ? { evalSamples: c.evalSamples } : {}),
    ...(c.staleness ? { staleness: c.staleness } : {}),
    ...(c.samplerWorker ? { samplerWorker: true } : {}),
    ...(c.idsPerPass !== undefined ? { idsPerPass: c.idsPerPass } : {}),
    ...(c.recomputeLayers !== undefined ? { recomputeLayers: c.recomputeLayers } : {}),
    ...(c.frozenWeights !== undefined ? { frozenWeights: c.frozenWeights } : {}),
    ...loraOptionsOf(c.lora),
    ...(c.dynamicSampling
      ? { filterGroups: c.dynamicSampling.metric, maxGenBatches: c.dynamicSampling.maxGenBatches }
      : {}),
  };
}

export function grpoOptionsOf(c: GrpoConfig, run: Bookkeeping): GrpoRunOptions {
  const imp = c.importance;
  const threshold = imp?.threshold ?? 2;
  const importance: ImportanceRunOptions = !imp
    ? { kind: 'off' }
    : typeof threshold === 'number'
      ? { kind: 'tis', level: imp.level ?? 'token', cap: threshold, batchNormalize: imp.batchNormalize ?? false }
      : {
          kind: 'band',
          level: imp.level ?? 'token',
          low: threshold[0],
          high: threshold[1],
          batchNormalize: imp.batchNormalize ?? false,
        };
  return {
    preset: 'grpo-arith',
    steps: c.steps,
    lr: c.lr,
    seed: c.seed,
    prompts: c.prompts,
    group: c.group,
    ...(c.task.trainProblems === undefined ? {} : { trainProblems: c.task.trainProblems }),
    temperature: c.temperature,
    topK: c.topK,
    topP: c.topP,
    maxNew: c.maxNew,
    policyLoss: { name: c.policyLoss.name, ...c.policyLoss.options } as PolicyLossRunOptions,
    aggregation: { mode: c.aggregation.mode ?? 'token-mean', ...c.aggregation } as GrpoRunOptions['aggregation'],
    advantage: { estimator: c.estimator, ...c.advantage } as GrpoRunOptions['advantage'],
    maskZeroAdvantage: c.maskZeroAdvantage,
    truncation: c.truncation,
    beta: c.beta,
    kl: { ...c.kl, estimator: c.kl.estimator ?? 'k3' } as GrpoRunOptions['kl'],
    importance,
    rejection: { ...c.rejection } as GrpoRunOptions['rejection'],
    beta1: c.beta1,
    beta2: c.beta2,
    eps: c.eps,
    weightDecay: c.weightDecay,
    maxGradNorm: c.maxGradNorm,
    epochs: c.epochs,
    miniBatches: c.miniBatches,
    ...stabiliserOptionsOf(c),
    ...(c.renormalize ? { renormalize: true } : {}),
    ...(c.dataset ? { dataset: c.dataset } : {}),
    evalEvery: c.evalEvery,
    ...run,
  };
}

/** Episode GRPO: GRPO's mapping for the shared options, the environment from the base config, the turn limit from the options. */
export function episodeGrpoConfigOf(
  o: Omit<EpisodeGrpoRunOptions, 'preset'>,
  base: GrpoEpisodeConfig,
): GrpoEpisodeConfig {
  const { maxTurns, envErrorLimit, ...shared } = o;
  const { task: _task, ...grpo } = grpoConfigOf({ ...shared, preset: 'grpo-arith' }, { ...base, task: {} });
  return {
    ...grpo,
    environment: base.environment,
    maxTurns,
    ...(envErrorLimit !== undefined ? { envErrorLimit } : {}),
  };
}

/** An episode config's options but the preset's name (the built-in environments' and a program's presets share them). */
function episodeOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): Omit<EpisodeGrpoRunOptions, 'preset'> {
  const { environment: _environment, program: _program, maxTurns, envErrorLimit, ...grpo } = c;
  const {
    preset: _preset,
    trainProblems: _none,
    dataset: _dataset,
    ...shared
  } = grpoOptionsOf({ ...grpo, task: {} }, run);
  return { ...shared, maxTurns, ...(envErrorLimit !== undefined ? { envErrorLimit } : {}) };
}

export function episodeGrpoOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): EpisodeGrpoRunOptions {
  if (c.environment === 'program')
    throw new Error('episodeGrpoOptionsOf: a program config has its own options (envOptionsOf)');
  return { ...episodeOptionsOf(c, run), preset: `grpo-${c.environment}` };
}

/** A program preset's config: `config` with the options' program and wall (absent: the options name no program yet). */
function withProgram(
  config: GrpoEpisodeConfig,
  o: { stepSeconds: number; environment?: EnvProgramRunOptions },
): GrpoEpisodeConfig {
  const { stepSeconds, environment } = o;
  return { ...config, environment: 'program', ...(environment ? { program: { ...environment, stepSeconds } } : {}) };
}

/** A program preset's options of its config's program: the wall and the program with its tasks. */
function programOptionsOf(c: GrpoEpisodeConfig): { stepSeconds: number; environment: EnvProgramRunOptions } {
  if (!c.program) throw new Error("a program preset's config has no program");
  const { stepSeconds, ...environment } = c.program;
  return { stepSeconds, environment };
}

/** grpo-env: the episode mapping, with the program and its tasks (when given) and the wall per request. */
export function envConfigOf(o: EnvRunOptions, base: GrpoEpisodeConfig): GrpoEpisodeConfig {
  const { preset: _preset, stepSeconds: _wall, environment: _env, ...episode } = o;
  return withProgram(episodeGrpoConfigOf(episode, base), o);
}

export function envOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): EnvRunOptions {
  return { ...episodeOptionsOf(c, run), preset: 'grpo-env', ...programOptionsOf(c) };
}

/** PPO: GRPO's mapping for the shared options (no estimator, no masking), the critic's fields as they are. */
export function ppoConfigOf(o: PpoRunOptions, base: PpoConfig): PpoConfig {
  const { preset: _preset, gamma, lam, shiftMean, valueCoefficient, valueClip, ...shared } = o;
  const grpo = grpoConfigOf(
    {
      ...shared,
      preset: 'grpo-arith',
      advantage: { estimator: base.estimator, ...base.advantage } as GrpoRunOptions['advantage'],
      maskZeroAdvantage: base.maskZeroAdvantage,
    },
    base,
  );
  return { ...grpo, gamma, lam, shiftMean, valueCoefficient, valueClip };
}

export function ppoOptionsOf(c: PpoConfig, run: Bookkeeping): PpoRunOptions {
  const { gamma, lam, shiftMean, valueCoefficient, valueClip } = c;
  const {
    preset: _preset,
    advantage: _advantage,
    maskZeroAdvantage: _mask,
    trainProblems: _none,
    ...shared
  } = grpoOptionsOf(c, run);
  return { ...shared, preset: 'ppo-arith', gamma, lam, shiftMean, valueCoefficient, valueClip };
}

/** PPO on episodes: PPO's mapping for the shared options, the environment from the base config, the critic into `critic`. */
export function ppoEpisodeConfigOf(
  o: Omit<PpoEpisodeRunOptions, 'preset'>,
  base: GrpoEpisodeConfig,
): GrpoEpisodeConfig {
  const { maxTurns, envErrorLimit, gamma, lam, shiftMean, valueCoefficient, valueClip, ...shared } = o;
  const { task: _task, ...grpo } = grpoConfigOf(
    {
      ...shared,
      preset: 'grpo-arith',
      advantage: { estimator: base.estimator, ...base.advantage } as GrpoRunOptions['advantage'],
      maskZeroAdvantage: base.maskZeroAdvantage,
    },
    { ...base, task: {} },
  );
  return {
    ...grpo,
    environment: base.environment,
    maxTurns,
    ...(envErrorLimit !== undefined ? { envErrorLimit } : {}),
    critic: { gamma, lam, shiftMean, valueCoefficient, valueClip },
  };
}

/** A PPO episode config's options but the preset's name (ppo-calc's and ppo-env's). */
function ppoEpisodeSharedOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): Omit<PpoEpisodeRunOptions, 'preset'> {
  const { environment, program: _program, maxTurns, envErrorLimit, critic, ...grpo } = c;
  if (!critic) throw new Error(`ppoEpisodeOptionsOf: the ${environment} config has no critic`);
  const {
    preset: _preset,
    advantage: _advantage,
    maskZeroAdvantage: _mask,
    trainProblems: _none,
    renormalize: _renormalize,
    dataset: _dataset,
    ...shared
  } = grpoOptionsOf({ ...grpo, task: {} }, run);
  return { ...shared, maxTurns, ...(envErrorLimit !== undefined ? { envErrorLimit } : {}), ...critic };
}

export function ppoEpisodeOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): PpoEpisodeRunOptions {
  return { ...ppoEpisodeSharedOptionsOf(c, run), preset: 'ppo-calc' };
}

/** Flow-GRPO: the options onto FLOW_GRPO_2D (and the pretraining's step count onto PRETRAIN_DEFAULTS). */
export function flowConfigOf(
  o: FlowRunOptions,
  base: FlowGrpoConfig,
): { config: FlowGrpoConfig; pretrain: PretrainOptions } {
  const config: FlowGrpoConfig = {
    ...base,
    seed: o.seed,
    steps: o.steps,
    groups: o.groups,
    group: o.group,
    lr: o.lr,
    sde: { ...base.sde, steps: o.sdeSteps, noiseLevel: o.noiseLevel },
    clipRange: o.clipRange,
    advClipMax: o.advClipMax,
    beta: o.beta,
    epochs: o.epochs,
    miniBatches: o.miniBatches,
    reward: { ...(o.target === 'ring' ? FLOW_RING : FLOW_DISCS), smooth: o.smooth },
    evalEvery: o.evalEvery,
    evalN: o.evalN,
  };
  return { config, pretrain: { ...PRETRAIN_DEFAULTS, iterations: o.pretrainSteps } };
}

export function flowOptionsOf(
  c: FlowGrpoConfig,
  pretrain: PretrainOptions,
  run: { checkpointEvery: number },
): FlowRunOptions {
  return {
    preset: 'flowgrpo-2d',
    steps: c.steps,
    lr: c.lr,
    seed: c.seed,
    groups: c.groups,
    group: c.group,
    sdeSteps: c.sde.steps,
    noiseLevel: c.sde.noiseLevel,
    clipRange: c.clipRange,
    advClipMax: c.advClipMax,
    beta: c.beta,
    epochs: c.epochs,
    miniBatches: c.miniBatches,
    target: c.reward.target.kind,
    smooth: c.reward.smooth,
    pretrainSteps: pretrain.iterations,
    evalEvery: c.evalEvery,
    evalN: c.evalN,
    ...run,
  };
}

/** A config's LoRA as the run options write it (absent without LoRA). */
function loraOptionsOf(
  lora: LoraConfig | undefined,
): Pick<GrpoRunOptions, 'loraRank' | 'loraAlpha' | 'loraTargets' | 'loraDropout'> {
  if (!lora) return {};
  const targets = lora.targetModules.join(',');
  const choice = LORA_TARGET_CHOICES.find((c) => c === targets);
  if (!choice)
    throw new Error(`a LoRA config's targets '${targets}' are none of the form's (${LORA_TARGET_CHOICES.join('; ')})`);
  return {
    loraRank: lora.rank,
    loraAlpha: lora.alpha,
    loraTargets: choice,
    ...(lora.dropout > 0 ? { loraDropout: lora.dropout } : {}),
  };
}

export function dpoConfigOf(o: DpoRunOptions, base: DpoConfig): DpoConfig {
  const {
    dataset: _dataset,
    lora: _lora,
    idsPerPass: _ids,
    recomputeLayers: _recompute,
    frozenWeights: _frozen,
    ...rest
  } = base;
  const lora = loraFromOptions(o);
  return {
    ...rest,
    ...(o.dataset ? { dataset: o.dataset } : {}),
    ...(lora ? { lora } : {}),
    ...(o.idsPerPass !== undefined ? { idsPerPass: o.idsPerPass } : {}),
    ...(o.recomputeLayers !== undefined ? { recomputeLayers: o.recomputeLayers } : {}),
    ...(o.frozenWeights !== undefined ? { frozenWeights: o.frozenWeights } : {}),
    seed: o.seed,
    steps: o.steps,
    pairs: o.pairs,
    samplesPerPrompt: o.samplesPerPrompt,
    temperature: o.temperature,
    maxNew: o.maxNew,
    beta: o.beta,
    lossType: o.loss.type,
    labelSmoothing: 'labelSmoothing' in o.loss ? (o.loss.labelSmoothing ?? 0) : 0,
    nllWeight: o.nllWeight,
    lr: o.lr,
    beta1: o.beta1,
    beta2: o.beta2,
    eps: o.eps,
    weightDecay: o.weightDecay,
    maxGradNorm: o.maxGradNorm,
    evalEvery: o.evalEvery,
    evalN: o.evalN,
  };
}

export function dpoOptionsOf(c: DpoConfig, run: Bookkeeping): DpoRunOptions {
  const loss: DpoRunOptions['loss'] =
    c.lossType === 'sigmoid' || c.lossType === 'robust'
      ? { type: c.lossType, labelSmoothing: c.labelSmoothing }
      : { type: c.lossType };
  return {
    preset: 'dpo-arith',
    steps: c.steps,
    lr: c.lr,
    seed: c.seed,
    pairs: c.pairs,
    beta: c.beta,
    loss,
    nllWeight: c.nllWeight,
    samplesPerPrompt: c.samplesPerPrompt,
    temperature: c.temperature,
    maxNew: c.maxNew,
    beta1: c.beta1,
    beta2: c.beta2,
    eps: c.eps,
    weightDecay: c.weightDecay,
    maxGradNorm: c.maxGradNorm,
    ...loraOptionsOf(c.lora),
    ...(c.idsPerPass !== undefined ? { idsPerPass: c.idsPerPass } : {}),
    ...(c.recomputeLayers !== undefined ? { recomputeLayers: c.recomputeLayers } : {}),
    ...(c.frozenWeights !== undefined ? { frozenWeights: c.frozenWeights } : {}),
    ...(c.dataset ? { dataset: c.dataset } : {}),
    evalEvery: c.evalEvery,
    ...run,
  };
}

/** ppo-env: ppo-calc's mapping, with the program and its tasks (when given) and the wall per request. */
export function ppoEnvConfigOf(o: PpoEnvRunOptions, base: GrpoEpisodeConfig): GrpoEpisodeConfig {
  const { preset: _preset, stepSeconds: _wall, environment: _env, ...episode } = o;
  return withProgram(ppoEpisodeConfigOf(episode, base), o);
}

export function ppoEnvOptionsOf(c: GrpoEpisodeConfig, run: Bookkeeping): PpoEnvRunOptions {
  return { ...ppoEpisodeSharedOptionsOf(c, run), preset: 'ppo-env', ...programOptionsOf(c) };
}
