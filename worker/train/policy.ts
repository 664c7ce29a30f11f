/**
 * The model a run trains and the reference it is held to, from a base checkpoint: full fine-tuning
 * (every weight trained, the reference a frozen copy of the base) or LoRA (`lora`: adapters trained
 * on the frozen base, which is then itself the reference: the policy scored with its adapters off,
 * as TRL does with a PEFT model's `disable_adapter` and verl with `ref_in_actor`, so no second
 * copy of the weights is held).
 */
import type { GrpoRunOptions } from '../contract/options';
import type { Ops } from '../../kernels/ops';
import { defaultIdsPerPass, trainedPassLayout } from '../hf/memory';
import type { LoadedCheckpoint } from '../model/checkpoint';
import type { LoraConfig } from '../model/lora';
import { loraFromOptions } from '../model/lora';
import type { ModelOptions } from '../model/model';
import { Model } from '../model/model';

/** The trained model: the base's weights, and under LoRA fresh adapters (PEFT's init, from the run's seed). */
function policyModel(
  ops: Ops,
  base: LoadedCheckpoint,
  config: { seed: number; lora?: LoraConfig },
  options: Omit<ModelOptions, 'lora' | 'frozen'> = {},
): Model {
  const model = new Model(ops, base.config, { ...options, ...(config.lora ? { lora: config.lora } : {}) });
  if (config.lora) model.initAdapters(config.seed);
  model.setWeights(base.weights);
  return model;
}

/**
 * The frozen base a run is held to, always scored (and sampled) with `{ adapters: false }`: a
 * frozen copy of the base scoring in the policy's passes (`idsPerPass`), or under LoRA the policy itself.
 */
function referenceModel(
  ops: Ops,
  base: LoadedCheckpoint,
  policy: Model,
  options: Pick<ModelOptions, 'idsPerPass' | 'storage'> = {},
): Model {
  if (policy.loraConfig) return policy;
  const ref = new Model(ops, base.config, { ...options, frozen: true });
  ref.setWeights(base.weights);
  return ref;
}

/** What a run's options say of its models: seed, LoRA (the options' `lora*` fields), passes and recomputation. */
export type RunModelConfig = Pick<
  GrpoRunOptions,
  'seed' | 'loraRank' | 'loraAlpha' | 'loraTargets' | 'loraDropout' | 'idsPerPass' | 'recomputeLayers' | 'frozenWeights'
>;

/**
 * A run's trained model and, with `reference`, the base it is held to: passes of the config's
 * `idsPerPass` (absent: hf/memory.ts defaultIdsPerPass of the trained model's layout) and per-layer
 * recomputation as the config asks (absent: by the model's size, hf/memory.ts recomputesLayers), the
 * same rules the memory plan counts by.
 */
export function runModels(
  ops: Ops,
  base: LoadedCheckpoint,
  config: RunModelConfig,
  o: { valueHead?: boolean; reference: boolean },
): { model: Model; reference: Model | null } {
  const lora = loraFromOptions(config);
  const layout = trainedPassLayout(base.config, { ...config, ...(lora ? { lora } : {}) });
  const idsPerPass = config.idsPerPass ?? defaultIdsPerPass(base.config, layout);
  const storage = config.frozenWeights ?? 'f32';
  const model = policyModel(
    ops,
    base,
    { seed: config.seed, ...(lora ? { lora } : {}) },
    {
      idsPerPass,
      recomputeLayers: layout.recompute,
      ...(o.valueHead ? { valueHead: true } : {}),
      ...(lora ? { storage } : {}),
    },
  );
  return { model, reference: o.reference ? referenceModel(ops, base, model, { idsPerPass, storage }) : null };
}
