/**
 * Checkpoints in a standard layout: `model.safetensors` (F32 weights under Hugging Face
 * `LlamaForCausalLM` names), `config.json` (HF config), `tokenizer.json` (our character
 * tokenizer's description) and `dewpoint.json` (provenance: how it was trained, its held-out
 * accuracy). Files are plain bytes/strings, so Node writes them to a folder and the browser
 * fetches or stores them. Export then import is exact.
 */
import type { CharTokenizer, TokenizerDescription } from '../data/tokenizer';
import { tokenizerFromDescription } from '../data/tokenizer';
import type { ModelConfig } from './config';
import { fromHfConfig, toHfConfig } from './hf-config';
import type { Model } from './model';
import { VALUE_HEAD } from './model';
import { paramSpecs } from './params';
import { decodeSafetensors, encodeSafetensors } from './safetensors';

export const CHECKPOINT_FILES = ['model.safetensors', 'config.json', 'tokenizer.json', 'dewpoint.json'] as const;
export type CheckpointFile = (typeof CHECKPOINT_FILES)[number];
export type CheckpointFiles = Record<CheckpointFile, Uint8Array>;

export interface LoadedCheckpoint {
  config: ModelConfig;
  weights: Map<string, Float32Array>;
  tokenizer: CharTokenizer;
  /** Contents of dewpoint.json. */
  info: Record<string, unknown>;
}

export async function exportCheckpoint(model: Model, tok: CharTokenizer, info: Record<string, unknown>): Promise<CheckpointFiles> {
  const weights = await model.getWeights();
  const tensors = paramSpecs(model.config).map((s) => ({ name: s.name, shape: s.shape, data: weights.get(s.name)! }));
  // A PPO run's critic travels with it (Hugging Face loaders report it as an unused weight).
  const head = weights.get(VALUE_HEAD);
  if (head) tensors.push({ name: VALUE_HEAD, shape: [1, model.config.dModel], data: head });
  const text = (x: unknown) => new TextEncoder().encode(`${JSON.stringify(x, null, 2)}\n`);
  return {
    'model.safetensors': encodeSafetensors(tensors, { format: 'pt' }),
    'config.json': text(toHfConfig(model.config, { bos: tok.bos, eos: tok.eos, pad: tok.pad })),
    'tokenizer.json': text(tok.describe()),
    'dewpoint.json': text(info),
  };
}

/** Parses checkpoint files; every problem names the file and the field. */
export function importCheckpoint(files: CheckpointFiles): LoadedCheckpoint {
  const json = (name: CheckpointFile) => {
    try {
      return JSON.parse(new TextDecoder().decode(files[name])) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
    }
  };
  const hf = fromHfConfig(json('config.json'));
  if (!hf.ok) throw new Error(`config.json: ${hf.problems.join('; ')}`);
  const tokenizer = tokenizerFromDescription(json('tokenizer.json') as unknown as TokenizerDescription);
  if (tokenizer.size !== hf.config.vocab) throw new Error(`tokenizer.json has ${tokenizer.size} symbols but config.json vocab_size is ${hf.config.vocab}`);
  const { tensors } = decodeSafetensors(files['model.safetensors'], 'model.safetensors');
  const weights = new Map<string, Float32Array>();
  for (const s of paramSpecs(hf.config)) {
    const t = tensors.get(s.name);
    if (!t) throw new Error(`model.safetensors: missing tensor '${s.name}' (shape [${s.shape}])`);
    if (t.shape.join(',') !== s.shape.join(',')) throw new Error(`model.safetensors: '${s.name}' has shape [${t.shape}], config.json implies [${s.shape}]`);
    weights.set(s.name, t.data);
  }
  const head = tensors.get(VALUE_HEAD);
  if (head) {
    if (head.shape.join(',') !== `1,${hf.config.dModel}`) throw new Error(`model.safetensors: '${VALUE_HEAD}' has shape [${head.shape}], expected [1, ${hf.config.dModel}] (hidden_size)`);
    weights.set(VALUE_HEAD, head.data);
  }
  return { config: hf.config, weights, tokenizer, info: json('dewpoint.json') };
}
