/**
 * Checkpoints in a standard layout: `model.safetensors` (F32 weights under Hugging Face
 * `LlamaForCausalLM` names), `config.json` (HF config), `tokenizer.json` (our character
 * tokenizer's description, or a Hugging Face tokenizer.json, then with its
 * `tokenizer_config.json` beside it) and `dewpoint.json` (provenance: how it was trained, its
 * held-out accuracy, or the folder it was loaded from). Files are plain bytes/strings, so Node writes them to a folder and the browser
 * fetches or stores them. Export then import is exact.
 */
import type { CharTokenizer, TextTokenizer, TokenizerDescription } from '../data/tokenizer';
import { hfTokenizer, type HfTokenizer } from './hf-tokenizer';
import { tokenizerFromDescription } from '../data/tokenizer';
import type { ModelConfig } from './config';
import { fromHfConfig, toHfConfig } from './hf-config';
import type { Model } from './model';
import { VALUE_HEAD } from './model';
import { paramSpecs } from './params';
import type { LoraConfig } from './lora';
import { loraSpecs, loraTargets, validateLoraConfig } from './lora';
import { decodeSafetensors, encodeSafetensors } from './safetensors';

export const CHECKPOINT_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'dewpoint.json'] as const;
type CheckpointFile = (typeof CHECKPOINT_FILES)[number];
/**
 * Files a checkpoint may have besides the four: a Hugging Face tokenizer's tokenizer_config.json
 * (a person's own model), and a LoRA run's adapters as PEFT writes them.
 */
export const OPTIONAL_CHECKPOINT_FILES = [
  'tokenizer_config.json',
  'adapter_config.json',
  'adapter_model.safetensors',
] as const;
export type CheckpointFiles = Record<CheckpointFile, Uint8Array> &
  Partial<Record<(typeof OPTIONAL_CHECKPOINT_FILES)[number], Uint8Array>>;

/** The tokenizer of a checkpoint: the character tokenizer of the shipped bases, or a Hugging Face one. */
export type CheckpointTokenizer = CharTokenizer | HfTokenizer;

export const isHfTokenizer = (tok: TextTokenizer): tok is HfTokenizer => (tok as Partial<HfTokenizer>).kind === 'hf';

/** The ids that end a sampled completion: EOS, and a Hugging Face tokenizer's every `eos_token_id` (generate's `eos` and `stop`). */
export function stopsOf(tok: TextTokenizer): { eos: number; stop?: readonly number[] } {
  return isHfTokenizer(tok) && tok.stopIds.some((id) => id !== tok.eos)
    ? { eos: tok.eos, stop: tok.stopIds }
    : { eos: tok.eos };
}

/** The checkpoint's tokenizer when it is the character tokenizer (the environments and SFT tasks are written in its vocabulary); `what` names who needs it. */
export function charTokenizer(tok: CheckpointTokenizer, what: string): CharTokenizer {
  if (isHfTokenizer(tok))
    throw new Error(`${what} needs the character tokenizer of a shipped base, not a Hugging Face tokenizer`);
  return tok;
}

export interface LoadedCheckpoint {
  config: ModelConfig;
  weights: Map<string, Float32Array>;
  tokenizer: CheckpointTokenizer;
  /** Contents of dewpoint.json. */
  info: Record<string, unknown>;
  /** A LoRA run's adapters (adapter_model.safetensors, names without PEFT's prefix) and their config; `weights` are then merged. */
  adapters?: { lora: LoraConfig; weights: Map<string, Float32Array> };
}

/**
 * A model's checkpoint. Under LoRA, model.safetensors holds the adapters merged into the base (a
 * plain model any Llama loader reads) and adapter_config.json + adapter_model.safetensors hold the
 * adapters as PEFT saves them (`PeftModel.from_pretrained(base, folder)`).
 */
export async function exportCheckpoint(
  model: Model,
  tok: CheckpointTokenizer,
  info: Record<string, unknown>,
): Promise<CheckpointFiles> {
  const files = checkpointFiles(model.config, await model.getMergedWeights(), tok, info);
  const lora = model.loraConfig;
  return lora ? { ...files, ...peftAdapterFiles(model.config, lora, await model.getAdapters()) } : files;
}

/**
 * The weights a run continues from (Model.setWeights on a model built from the run's base): a
 * checkpoint's every weight, or under LoRA its adapters and value head alone, since its
 * model.safetensors is the merged model, not the base the adapters sit on.
 */
export function continuedWeights(ck: LoadedCheckpoint): Map<string, Float32Array> {
  if (!ck.adapters) return ck.weights;
  const head = ck.weights.get(VALUE_HEAD);
  return new Map([...ck.adapters.weights, ...(head ? [[VALUE_HEAD, head] as const] : [])]);
}

/** PEFT's prefix of every adapter tensor name in adapter_model.safetensors (the PeftModel's `base_model.model`). */
const PEFT_PREFIX = 'base_model.model.';

/** PEFT's adapter_config.json and adapter_model.safetensors (F32) of a model's adapters. */
function peftAdapterFiles(
  config: ModelConfig,
  lora: LoraConfig,
  adapters: ReadonlyMap<string, Float32Array>,
): Pick<Required<CheckpointFiles>, 'adapter_config.json' | 'adapter_model.safetensors'> {
  const tensors = loraSpecs(config, lora).map((s) => {
    const data = adapters.get(s.name);
    if (!data) throw new Error(`peftAdapterFiles: adapter '${s.name}' missing`);
    return { name: PEFT_PREFIX + s.name, shape: s.shape, data };
  });
  const adapterConfig = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: null,
    r: lora.rank,
    lora_alpha: lora.alpha,
    lora_dropout: lora.dropout,
    target_modules: lora.targetModules.includes('all-linear') ? 'all-linear' : loraTargets(lora),
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    use_rslora: false,
    use_dora: false,
    modules_to_save: null,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
  };
  return {
    'adapter_config.json': new TextEncoder().encode(`${JSON.stringify(adapterConfig, null, 2)}\n`),
    'adapter_model.safetensors': encodeSafetensors(tensors, { format: 'pt' }),
  };
}

/** A checkpoint's PEFT adapters and their config, or null without adapter files; problems name the file and the field. */
export function readPeftAdapters(
  files: CheckpointFiles,
  config: ModelConfig,
): { lora: LoraConfig; weights: Map<string, Float32Array> } | null {
  const bytes = files['adapter_model.safetensors'];
  if (!files['adapter_config.json'] && !bytes) return null;
  if (!files['adapter_config.json'] || !bytes)
    throw new Error('a LoRA checkpoint needs both adapter_config.json and adapter_model.safetensors');
  const j = checkpointJson(files, 'adapter_config.json');
  if (j.peft_type !== 'LORA')
    throw new Error(`adapter_config.json: peft_type = ${JSON.stringify(j.peft_type)}; expected "LORA"`);
  const targets = j.target_modules;
  const lora: LoraConfig = {
    rank: j.r as number,
    alpha: j.lora_alpha as number,
    dropout: (j.lora_dropout as number | undefined) ?? 0,
    targetModules: typeof targets === 'string' ? [targets] : (targets as string[]),
  };
  const problems = validateLoraConfig(lora);
  if (problems.length) throw new Error(`adapter_config.json: ${problems.join('; ')}`);
  const { tensors } = decodeSafetensors(bytes, 'adapter_model.safetensors');
  const weights = new Map<string, Float32Array>();
  for (const s of loraSpecs(config, lora)) {
    const t = tensors.get(PEFT_PREFIX + s.name);
    if (!t) throw new Error(`adapter_model.safetensors: missing tensor '${PEFT_PREFIX + s.name}' (shape [${s.shape}])`);
    if (t.shape.join(',') !== s.shape.join(','))
      throw new Error(
        `adapter_model.safetensors: '${PEFT_PREFIX + s.name}' has shape [${t.shape}], expected [${s.shape}]`,
      );
    weights.set(s.name, t.data);
  }
  return { lora, weights };
}

/** The checkpoint files of a config and its weights (a Model's, or a folder's as loaded), without a Model. */
export function checkpointFiles(
  config: ModelConfig,
  weights: ReadonlyMap<string, Float32Array>,
  tok: CheckpointTokenizer,
  info: Record<string, unknown>,
): CheckpointFiles {
  const tensors = paramSpecs(config).map((s) => ({ name: s.name, shape: s.shape, data: weights.get(s.name)! }));
  // A PPO run's critic travels with it (Hugging Face loaders report it as an unused weight).
  const head = weights.get(VALUE_HEAD);
  if (head) tensors.push({ name: VALUE_HEAD, shape: [1, config.dModel], data: head });
  const text = (x: unknown) => new TextEncoder().encode(`${JSON.stringify(x, null, 2)}\n`);
  return {
    'model.safetensors': encodeSafetensors(tensors, { format: 'pt' }),
    'config.json': text(toHfConfig(config, { bos: tok.bos, eos: tok.eos, pad: tok.pad })),
    'tokenizer.json': text(isHfTokenizer(tok) ? tok.sources.tokenizerJson : tok.describe()),
    'dewpoint.json': text(info),
    ...(isHfTokenizer(tok) ? { 'tokenizer_config.json': text(tok.sources.tokenizerConfig ?? {}) } : {}),
  };
}

const checkpointJson = (
  files: CheckpointFiles,
  name: CheckpointFile | 'tokenizer_config.json' | 'adapter_config.json',
) => {
  try {
    return JSON.parse(new TextDecoder().decode(files[name])) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
  }
};

/** A checkpoint's config and tokenizer only (its weights are not decoded): what reading a run's tokens needs. */
export function checkpointTokenizer(files: CheckpointFiles): { config: ModelConfig; tokenizer: CheckpointTokenizer } {
  const json = (name: CheckpointFile | 'tokenizer_config.json') => checkpointJson(files, name);
  const hf = fromHfConfig(json('config.json'));
  if (!hf.ok) throw new Error(`config.json: ${hf.problems.join('; ')}`);
  const described = json('tokenizer.json');
  let tokenizer: CheckpointTokenizer;
  if (described.type === 'char') {
    tokenizer = tokenizerFromDescription(described as unknown as TokenizerDescription);
    if (tokenizer.size !== hf.config.vocab)
      throw new Error(`tokenizer.json has ${tokenizer.size} symbols but config.json vocab_size is ${hf.config.vocab}`);
  } else {
    // A Hugging Face tokenizer.json (a person's own model): its ids checked against vocab_size.
    tokenizer = hfTokenizer({
      tokenizerJson: described,
      tokenizerConfig: files['tokenizer_config.json'] ? json('tokenizer_config.json') : undefined,
      config: json('config.json'),
      vocabSize: hf.config.vocab,
    });
  }
  return { config: hf.config, tokenizer };
}

/** Parses checkpoint files; every problem names the file and the field. */
export function importCheckpoint(files: CheckpointFiles): LoadedCheckpoint {
  const { config, tokenizer } = checkpointTokenizer(files);
  const { tensors } = decodeSafetensors(files['model.safetensors'], 'model.safetensors');
  const weights = new Map<string, Float32Array>();
  for (const s of paramSpecs(config)) {
    const t = tensors.get(s.name);
    if (!t) throw new Error(`model.safetensors: missing tensor '${s.name}' (shape [${s.shape}])`);
    if (t.shape.join(',') !== s.shape.join(','))
      throw new Error(`model.safetensors: '${s.name}' has shape [${t.shape}], config.json implies [${s.shape}]`);
    weights.set(s.name, t.data);
  }
  const head = tensors.get(VALUE_HEAD);
  if (head) {
    if (head.shape.join(',') !== `1,${config.dModel}`)
      throw new Error(
        `model.safetensors: '${VALUE_HEAD}' has shape [${head.shape}], expected [1, ${config.dModel}] (hidden_size)`,
      );
    weights.set(VALUE_HEAD, head.data);
  }
  const adapters = readPeftAdapters(files, config);
  return {
    config,
    weights,
    tokenizer,
    info: checkpointJson(files, 'dewpoint.json'),
    ...(adapters ? { adapters } : {}),
  };
}

/** Longest sequence a person's model is trained on here, whatever its max_position_embeddings (prompt and completion together). */
export const HF_MAX_SEQ = 1024;

/**
 * A Hugging Face folder (worker/hf/folder.ts `loadHfFolder`) as a base checkpoint: its config with
 * maxSeq capped at HF_MAX_SEQ (the training width here, not the model's own limit), its weights
 * and tokenizer, and where it came from.
 */
export function checkpointFromHf(
  loaded: {
    config: ModelConfig;
    weights: Map<string, Float32Array>;
    tokenizer: HfTokenizer;
    info: { parameterCount: number; architecture: string; dtypes: readonly string[] };
  },
  name: string,
): LoadedCheckpoint {
  const maxSeq = Math.min(loaded.config.maxSeq, HF_MAX_SEQ);
  return {
    config: { ...loaded.config, maxSeq },
    weights: loaded.weights,
    tokenizer: loaded.tokenizer,
    info: {
      source: 'huggingface',
      folder: name,
      architecture: loaded.info.architecture,
      dtypes: loaded.info.dtypes,
      parameters: loaded.info.parameterCount,
      max_position_embeddings: loaded.config.maxSeq,
      trained_width: maxSeq,
    },
  };
}
