/**
 * Parameter specs as data: every weight tensor's name (Hugging Face `LlamaForCausalLM` naming, so
 * checkpoints load in `transformers`), shape, and whether weight decay applies. Linear weights are
 * stored as HF does, (out, in), and applied as x·Wᵀ (matmul layout `nt`); k_proj and v_proj are
 * (kvHeads · hs, C), narrower than q_proj under grouped-query attention.
 */
import { mulberry32 } from '../../kernels/common/random';
import type { ModelConfig } from './config';
import { kvDim } from './config';

interface ParamSpec {
  name: string;
  shape: number[];
  /** AdamW weight decay applies (matrices yes; norms no). */
  decay: boolean;
}

/** The token embedding's name (HF Llama's), the LM head too when tied. */
export const EMBED_TOKENS = 'model.embed_tokens.weight';

export function paramSpecs(c: ModelConfig): ParamSpec[] {
  const C = c.dModel,
    F = c.ffn,
    V = c.vocab,
    KV = kvDim(c);
  const specs: ParamSpec[] = [{ name: EMBED_TOKENS, shape: [V, C], decay: true }];
  for (let l = 0; l < c.layers; l++) {
    const p = `model.layers.${l}`;
    specs.push(
      { name: `${p}.input_layernorm.weight`, shape: [C], decay: false },
      { name: `${p}.self_attn.q_proj.weight`, shape: [C, C], decay: true },
      { name: `${p}.self_attn.k_proj.weight`, shape: [KV, C], decay: true },
      { name: `${p}.self_attn.v_proj.weight`, shape: [KV, C], decay: true },
      { name: `${p}.self_attn.o_proj.weight`, shape: [C, C], decay: true },
      { name: `${p}.post_attention_layernorm.weight`, shape: [C], decay: false },
      { name: `${p}.mlp.gate_proj.weight`, shape: [F, C], decay: true },
      { name: `${p}.mlp.up_proj.weight`, shape: [F, C], decay: true },
      { name: `${p}.mlp.down_proj.weight`, shape: [C, F], decay: true },
    );
  }
  specs.push({ name: 'model.norm.weight', shape: [C], decay: false });
  if (!c.tiedEmbeddings) specs.push({ name: 'lm_head.weight', shape: [V, C], decay: true });
  return specs;
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function parameterCount(c: ModelConfig): number {
  return paramSpecs(c).reduce((n, s) => n + numel(s.shape), 0);
}

/** Whether a parameter is one of a layer's projection matrices (what bf16 storage holds as bf16). */
export const isLayerMatrix = (name: string): boolean => /^model\.layers\.\d+\.(self_attn|mlp)\./.test(name);

/**
 * Seeded initial weights by Hugging Face name (GPT-2/Llama style): N(0, 0.02) for matrices,
 * 0.02/√(2L) for o_proj and down_proj (the residual branches), ones for norms.
 */
export function initialWeights(c: ModelConfig, seed: number): Map<string, Float32Array> {
  const rand = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const residualStd = 0.02 / Math.sqrt(2 * c.layers);
  const out = new Map<string, Float32Array>();
  for (const s of paramSpecs(c)) {
    const data = new Float32Array(numel(s.shape));
    if (s.shape.length === 1) data.fill(1);
    else {
      const std = /o_proj|down_proj/.test(s.name) ? residualStd : 0.02;
      for (let i = 0; i < data.length; i++) data[i] = std * gauss();
    }
    out.set(s.name, data);
  }
  return out;
}
