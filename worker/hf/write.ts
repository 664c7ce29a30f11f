/**
 * Writes a model as a Hugging Face folder that `loadHfFolder` (and transformers'
 * `LlamaForCausalLM.from_pretrained`) reads: config.json (hf-config.ts `toHfConfig`), the weights
 * in paramSpecs order as `model.safetensors` or as N shards `model-0000k-of-0000N.safetensors` with
 * `model.safetensors.index.json`, tokenizer.json and tokenizer_config.json as given, and optionally
 * generation_config.json. F32 by default (exact); F16/BF16 round to nearest even. The tests'
 * fixture writer and an export path; the char-tokenizer checkpoints of worker/model/checkpoint.ts
 * are written there, unchanged.
 */
import type { ModelConfig } from '../model/config';
import { toHfConfig } from '../model/hf-config';
import { numel, paramSpecs } from '../model/params';
import type { NamedTensor, SafetensorsDtype } from '../model/safetensors';
import { encodeSafetensors } from '../model/safetensors';
import { SINGLE_WEIGHTS, WEIGHTS_INDEX } from './weights';

export interface WriteHfOptions {
  /** Dtype of every tensor. Default F32. */
  dtype?: SafetensorsDtype;
  /** Number of shards; 1 (default) writes model.safetensors without an index. */
  shards?: number;
  /** bos/eos/pad ids for config.json; default: tokenizer_config's bos_token/eos_token/pad_token looked up in tokenizer.json (pad null when none). */
  specials?: { bos: number | null; eos: number | null; pad: number | null };
  /** generation_config.json, written when given. */
  generationConfig?: Record<string, unknown>;
}

const DTYPE_NAME: Record<SafetensorsDtype, string> = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };
const json = (x: unknown) => new TextEncoder().encode(`${JSON.stringify(x, null, 2)}\n`);

/** Shard k of n (1-based), as transformers names them. */
export function shardName(k: number, n: number): string {
  return `model-${String(k).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;
}

export function writeHfFolder(
  config: ModelConfig,
  weights: ReadonlyMap<string, Float32Array>,
  tokenizerJson: Record<string, unknown> | Uint8Array,
  tokenizerConfig: Record<string, unknown> | Uint8Array,
  options: WriteHfOptions = {},
): Map<string, Uint8Array> {
  const dtype = options.dtype ?? 'F32';
  const tensors: NamedTensor[] = paramSpecs(config).map((s) => {
    const data = weights.get(s.name);
    if (!data) throw new Error(`writeHfFolder: weights lack '${s.name}' (shape [${s.shape}])`);
    if (data.length !== numel(s.shape))
      throw new Error(
        `writeHfFolder: '${s.name}' has ${data.length} values; its shape [${s.shape}] needs ${numel(s.shape)}`,
      );
    return { name: s.name, shape: s.shape, data };
  });
  const n = options.shards ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > tensors.length)
    throw new Error(
      `writeHfFolder: shards must be an integer in 1..${tensors.length} (one tensor at least per shard), got ${n}`,
    );

  const tj =
    tokenizerJson instanceof Uint8Array
      ? (JSON.parse(new TextDecoder().decode(tokenizerJson)) as Record<string, unknown>)
      : tokenizerJson;
  const tc =
    tokenizerConfig instanceof Uint8Array
      ? (JSON.parse(new TextDecoder().decode(tokenizerConfig)) as Record<string, unknown>)
      : tokenizerConfig;
  const specials = options.specials ?? {
    bos: tokenId(tj, tc.bos_token),
    eos: tokenId(tj, tc.eos_token),
    pad: tokenId(tj, tc.pad_token),
  };
  const hf = toHfConfig(config, { bos: specials.bos ?? 0, eos: specials.eos ?? 0, pad: specials.pad ?? 0 });
  const files = new Map<string, Uint8Array>();
  files.set(
    'config.json',
    json({
      ...hf,
      bos_token_id: specials.bos,
      eos_token_id: specials.eos,
      pad_token_id: specials.pad,
      torch_dtype: DTYPE_NAME[dtype],
    }),
  );

  const metadata = { format: 'pt' };
  if (n === 1) files.set(SINGLE_WEIGHTS, encodeSafetensors(tensors, metadata, { dtype }));
  else {
    const weightMap: Record<string, string> = {};
    const groups = splitEvenly(tensors, n);
    groups.forEach((group, k) => {
      const name = shardName(k + 1, n);
      files.set(name, encodeSafetensors(group, metadata, { dtype }));
      for (const t of group) weightMap[t.name] = name;
    });
    const bytesPer = dtype === 'F32' ? 4 : 2;
    const totalSize = tensors.reduce((sum, t) => sum + t.data.length * bytesPer, 0);
    files.set(WEIGHTS_INDEX, json({ metadata: { total_size: totalSize }, weight_map: weightMap }));
  }
  files.set('tokenizer.json', tokenizerJson instanceof Uint8Array ? tokenizerJson : json(tokenizerJson));
  files.set('tokenizer_config.json', tokenizerConfig instanceof Uint8Array ? tokenizerConfig : json(tokenizerConfig));
  if (options.generationConfig) files.set('generation_config.json', json(options.generationConfig));
  return files;
}

/** Consecutive groups of about equal size (by values), each non-empty, in order. */
function splitEvenly(tensors: NamedTensor[], n: number): NamedTensor[][] {
  const total = tensors.reduce((s, t) => s + t.data.length, 0);
  const groups: NamedTensor[][] = [];
  let current: NamedTensor[] = [];
  let done = 0;
  tensors.forEach((t, i) => {
    current.push(t);
    done += t.data.length;
    const left = tensors.length - i - 1; // tensors still to place
    const shardsLeft = n - groups.length - 1; // shards after the current one
    if (shardsLeft > 0 && (done >= (total * (groups.length + 1)) / n || left === shardsLeft)) {
      groups.push(current);
      current = [];
    }
  });
  groups.push(current);
  return groups;
}

/** The id of a tokenizer_config special (string or {content}) in tokenizer.json; null when absent. */
function tokenId(tokenizerJson: Record<string, unknown>, token: unknown): number | null {
  const content =
    typeof token === 'string'
      ? token
      : token && typeof token === 'object'
        ? (token as { content?: string }).content
        : undefined;
  if (content === undefined) return null;
  const added = (tokenizerJson.added_tokens as { id: number; content: string }[] | undefined)?.find(
    (a) => a.content === content,
  );
  if (added) return added.id;
  const vocab = (tokenizerJson.model as { vocab?: unknown } | undefined)?.vocab;
  if (vocab && typeof vocab === 'object' && !Array.isArray(vocab)) {
    const id = (vocab as Record<string, number>)[content];
    if (typeof id === 'number') return id;
  }
  return null;
}
