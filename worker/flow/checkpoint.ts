/**
 * A Flow-GRPO run's checkpoint files: `model.safetensors` (the velocity field's weights under
 * their spec names, `layers.{l}.weight` (out, in) and `layers.{l}.bias`, F32 as torch.nn.Linear
 * keeps them), `reference.safetensors` (the frozen starting weights the KL is measured to, only
 * when β > 0), `config.json` (the MLP's shape, `FlowModelConfig`) and `dewpoint.json`
 * (provenance, as a language model's checkpoint has). Plain bytes, so the store keeps them and a
 * person downloads them; export then import is exact. AdamW's state and the batch count travel
 * beside the files, in the store's resume record. Not a Hugging Face folder (model/checkpoint.ts):
 * there is no language model, config or tokenizer.
 */
import type { FlowModelConfig } from './config';
import { flowParamSpecs, validateFlowModelConfig } from './config';
import { decodeSafetensors, encodeSafetensors } from '../model/safetensors';

export const FLOW_CHECKPOINT_FILES = ['model.safetensors', 'config.json', 'dewpoint.json'] as const;
type FlowCheckpointFile = (typeof FLOW_CHECKPOINT_FILES)[number];
export type FlowCheckpointFiles = Record<FlowCheckpointFile, Uint8Array> & { 'reference.safetensors'?: Uint8Array };

/** What config.json names the model, so a flow checkpoint is told from a language model's. */
const MODEL_TYPE = 'dewpoint-velocity-field';
const CONFIG_FIELDS: readonly (keyof FlowModelConfig)[] = ['dim', 'width', 'hidden', 'timeFeatures', 'maxFrequency'];

export interface LoadedFlowCheckpoint {
  config: FlowModelConfig;
  weights: Map<string, Float32Array>;
  /** The frozen starting weights, when the checkpoint has them (β > 0). */
  reference: Map<string, Float32Array> | null;
  /** Contents of dewpoint.json. */
  info: Record<string, unknown>;
}

const text = (x: unknown) => new TextEncoder().encode(`${JSON.stringify(x, null, 2)}\n`);

function tensorsFile(config: FlowModelConfig, weights: ReadonlyMap<string, Float32Array>, what: string): Uint8Array {
  const tensors = flowParamSpecs(config).map((s) => {
    const data = weights.get(s.name);
    if (!data) throw new Error(`flowCheckpointFiles: the ${what} have no tensor '${s.name}' (shape [${s.shape}])`);
    return { name: s.name, shape: s.shape, data };
  });
  return encodeSafetensors(tensors, { format: 'pt' });
}

/** The files of a flow policy's weights, its frozen reference (null: none) and provenance `info`. */
export function flowCheckpointFiles(
  config: FlowModelConfig,
  weights: ReadonlyMap<string, Float32Array>,
  reference: ReadonlyMap<string, Float32Array> | null,
  info: Record<string, unknown>,
): FlowCheckpointFiles {
  return {
    'model.safetensors': tensorsFile(config, weights, 'weights'),
    ...(reference ? { 'reference.safetensors': tensorsFile(config, reference, 'reference weights') } : {}),
    'config.json': text({ model_type: MODEL_TYPE, ...Object.fromEntries(CONFIG_FIELDS.map((k) => [k, config[k]])) }),
    'dewpoint.json': text(info),
  };
}

function json(files: FlowCheckpointFiles, name: FlowCheckpointFile): Record<string, unknown> {
  const bytes = files[name] as Uint8Array | undefined;
  if (!bytes) throw new Error(`${name}: missing (a flow checkpoint has ${FLOW_CHECKPOINT_FILES.join(', ')})`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
  }
}

function readTensors(bytes: Uint8Array, file: string, config: FlowModelConfig): Map<string, Float32Array> {
  const { tensors } = decodeSafetensors(bytes, file);
  const out = new Map<string, Float32Array>();
  for (const s of flowParamSpecs(config)) {
    const t = tensors.get(s.name);
    if (!t) throw new Error(`${file}: missing tensor '${s.name}' (shape [${s.shape}])`);
    if (t.shape.join(',') !== s.shape.join(','))
      throw new Error(`${file}: '${s.name}' has shape [${t.shape}], config.json implies [${s.shape}]`);
    out.set(s.name, t.data);
  }
  return out;
}

/**
 * Parses flow checkpoint files; every problem names the file and the field. With `expected`, the
 * model config the files must have (a run continues only with the model it was trained with).
 */
export function importFlowCheckpoint(files: FlowCheckpointFiles, expected?: FlowModelConfig): LoadedFlowCheckpoint {
  const c = json(files, 'config.json');
  if (c.model_type !== MODEL_TYPE)
    throw new Error(
      `config.json: model_type = ${JSON.stringify(c.model_type)}; expected "${MODEL_TYPE}" (a flow checkpoint)`,
    );
  const config = Object.fromEntries(CONFIG_FIELDS.map((k) => [k, c[k]])) as unknown as FlowModelConfig;
  const problems = validateFlowModelConfig(config);
  if (problems.length) throw new Error(`config.json: ${problems.join('; ')}`);
  if (expected)
    for (const k of CONFIG_FIELDS)
      if (config[k] !== expected[k])
        throw new Error(`config.json: ${k} = ${config[k]}, but this run's model has ${k} = ${expected[k]}`);
  const model = files['model.safetensors'] as Uint8Array | undefined;
  if (!model) throw new Error('model.safetensors: missing (the policy weights)');
  const ref = files['reference.safetensors'];
  return {
    config,
    weights: readTensors(model, 'model.safetensors', config),
    reference: ref ? readTensors(ref, 'reference.safetensors', config) : null,
    info: json(files, 'dewpoint.json'),
  };
}
