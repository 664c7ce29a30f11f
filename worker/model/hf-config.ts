/**
 * Hugging Face `config.json` for `LlamaForCausalLM`, so exported weights load in `transformers`,
 * and the way back, refusing fields that do not describe a model we can run (naming the field and
 * the allowed values).
 */
import type { ModelConfig } from './config';
import { validateModelConfig } from './config';

interface SpecialIds {
  bos: number;
  eos: number;
  pad: number;
}

export function toHfConfig(c: ModelConfig, specials: SpecialIds): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: c.dModel,
    intermediate_size: c.ffn,
    num_hidden_layers: c.layers,
    num_attention_heads: c.heads,
    num_key_value_heads: c.kvHeads,
    head_dim: c.dModel / c.heads,
    vocab_size: c.vocab,
    max_position_embeddings: c.maxSeq,
    rms_norm_eps: c.normEps,
    rope_theta: c.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: c.tiedEmbeddings,
    hidden_act: 'silu',
    attention_bias: false,
    mlp_bias: false,
    attention_dropout: 0.0,
    initializer_range: 0.02,
    bos_token_id: specials.bos,
    eos_token_id: specials.eos,
    pad_token_id: specials.pad,
    torch_dtype: 'float32',
    use_cache: true,
  };
}

type FromHfResult = { ok: true; config: ModelConfig } | { ok: false; problems: string[] };

export function fromHfConfig(json: Record<string, unknown>): FromHfResult {
  const problems: string[] = [];
  const archs = json.architectures;
  if (!Array.isArray(archs) || !archs.includes('LlamaForCausalLM'))
    problems.push(`architectures must include 'LlamaForCausalLM', got ${JSON.stringify(archs)}`);
  if (json.hidden_act !== undefined && json.hidden_act !== 'silu')
    problems.push(`hidden_act must be 'silu', got ${JSON.stringify(json.hidden_act)}`);
  for (const f of ['attention_bias', 'mlp_bias'] as const) {
    if (json[f] === true) problems.push(`${f} must be false (the model has no biases)`);
  }
  if (json.rope_scaling != null)
    problems.push(
      `rope_scaling must be null (no RoPE scaling is implemented), got ${JSON.stringify(json.rope_scaling)}`,
    );
  const num = (f: string): number => {
    const v = json[f];
    if (typeof v !== 'number') problems.push(`${f} must be a number, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const heads = num('num_attention_heads');
  const config: ModelConfig = {
    layers: num('num_hidden_layers'),
    dModel: num('hidden_size'),
    heads,
    kvHeads: typeof json.num_key_value_heads === 'number' ? json.num_key_value_heads : heads,
    ffn: num('intermediate_size'),
    vocab: num('vocab_size'),
    maxSeq: num('max_position_embeddings'),
    tiedEmbeddings: json.tie_word_embeddings !== false,
    ropeTheta: typeof json.rope_theta === 'number' ? json.rope_theta : 10000,
    normEps: typeof json.rms_norm_eps === 'number' ? json.rms_norm_eps : 1e-6,
  };
  if (typeof json.head_dim === 'number' && json.head_dim * config.heads !== config.dModel) {
    problems.push(
      `head_dim (${json.head_dim}) × num_attention_heads (${config.heads}) must equal hidden_size (${config.dModel})`,
    );
  }
  if (problems.length === 0) problems.push(...validateModelConfig(config));
  return problems.length ? { ok: false, problems } : { ok: true, config };
}
