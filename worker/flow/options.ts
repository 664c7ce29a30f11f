/** The run options of flowgrpo-2d (worker/contract/run-options/flow.ts) onto the Flow-GRPO run's config, and its defaults as options. */
import type { FlowRunOptions } from '../contract/options';
import { PRETRAIN_DEFAULTS, type PretrainOptions } from './pretrain';
import { FLOW_DISCS, FLOW_RING } from './reward';
import type { FlowGrpoConfig } from './run';

/**
 * Flow-GRPO: the options onto `base` (FLOW_GRPO_2D) and the pretraining's step count onto
 * PRETRAIN_DEFAULTS. The run's config has more than a person sets (the model, the SDE's shift,
 * shared starts), so the options map onto it, and `flowOptionsOf` gives the form's defaults.
 */
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
