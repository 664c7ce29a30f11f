import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { modelPreset, validateModelConfig } from './config';
import { fromHfConfig, toHfConfig } from './hf-config';
import { numel, paramSpecs, parameterCount } from './params';
import { decodeSafetensors, encodeSafetensors } from './safetensors';

describe('paramSpecs', () => {
  it('counts the calibration model exactly (d64, 2 layers, ffn 176, vocab 25, tied): 102,272', () => {
    expect(parameterCount(modelPreset('small', 25))).toBe(102_272);
  });

  it('adds lm_head only when embeddings are untied, with HF (out, in) shapes', () => {
    const c = { ...modelPreset('tiny', 10), tiedEmbeddings: false };
    const specs = paramSpecs(c);
    expect(specs.at(-1)).toEqual({ name: 'lm_head.weight', shape: [10, 8], decay: true });
    expect(specs.find((s) => s.name === 'model.layers.0.mlp.down_proj.weight')?.shape).toEqual([8, 12]);
    expect(specs.filter((s) => !s.decay).map((s) => s.name)).toEqual([
      'model.layers.0.input_layernorm.weight',
      'model.layers.0.post_attention_layernorm.weight',
      'model.norm.weight',
    ]);
  });
});

describe('safetensors', () => {
  const rand = mulberry32(7);
  const tensors = paramSpecs(modelPreset('tiny', 11)).map((s) => ({
    name: s.name,
    shape: s.shape,
    data: Float32Array.from({ length: numel(s.shape) }, () => rand() * 2 - 1),
  }));

  it('round-trips tensors and metadata exactly, with an 8-byte aligned header', () => {
    const bytes = encodeSafetensors(tensors, { format: 'pt', dewpoint: 'test' });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect((8 + n) % 8).toBe(0);
    const back = decodeSafetensors(bytes);
    expect(back.metadata).toEqual({ format: 'pt', dewpoint: 'test' });
    for (const t of tensors) {
      const got = back.tensors.get(t.name)!;
      expect(got.shape).toEqual(t.shape);
      expect(new Uint8Array(got.data.buffer, got.data.byteOffset, got.data.byteLength)).toEqual(new Uint8Array(t.data.buffer));
    }
    expect(encodeSafetensors([...back.tensors.values()], back.metadata)).toEqual(bytes);
  });

  it('refuses other dtypes, bad offsets and mismatched shapes, naming the tensor', () => {
    const header = JSON.stringify({ w: { dtype: 'F16', shape: [2], data_offsets: [0, 4] } });
    const bytes = new Uint8Array(8 + header.length + 4);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(new TextEncoder().encode(header), 8);
    expect(() => decodeSafetensors(bytes)).toThrow(/'w' has dtype F16/);
    expect(() => encodeSafetensors([{ name: 'x', shape: [2, 2], data: new Float32Array(3) }])).toThrow(/'x' has shape \[2,2\] \(4 values\) but 3/);
    expect(() => decodeSafetensors(new Uint8Array(4))).toThrow(/shorter than the 8-byte/);
  });
});

describe('HF config.json', () => {
  it('round-trips a config through LlamaForCausalLM fields', () => {
    const c = modelPreset('small', 40);
    const json = toHfConfig(c, { bos: 1, eos: 2, pad: 0 });
    expect(json).toMatchObject({ architectures: ['LlamaForCausalLM'], hidden_size: 64, head_dim: 16, tie_word_embeddings: true, eos_token_id: 2 });
    expect(fromHfConfig(JSON.parse(JSON.stringify(json)))).toEqual({ ok: true, config: c });
  });

  it('names each field it cannot accept', () => {
    const json = { ...toHfConfig(modelPreset('tiny', 9), { bos: 1, eos: 2, pad: 0 }), hidden_act: 'gelu', mlp_bias: true, num_key_value_heads: 1 };
    const r = fromHfConfig(json);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.join('\n')).toMatch(/hidden_act must be 'silu'/);
      expect(r.problems.join('\n')).toMatch(/mlp_bias must be false/);
    }
    expect(validateModelConfig({ ...modelPreset('tiny', 9), dModel: 9 })).toEqual(['dModel (9) must be a multiple of heads (2)']);
  });
});
