import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../kernels/common/random';
import { modelPreset, validateModelConfig } from './config';
import { fromHfConfig, toHfConfig } from './hf-config';
import { numel, paramSpecs, parameterCount } from './params';
import { decodeSafetensors, encodeSafetensors, f16BitsToF32Bits, readSafetensorsHeader } from './safetensors';

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
      expect(new Uint8Array(got.data.buffer, got.data.byteOffset, got.data.byteLength)).toEqual(
        new Uint8Array(t.data.buffer),
      );
    }
    expect(encodeSafetensors([...back.tensors.values()], back.metadata)).toEqual(bytes);
  });

  it('refuses other dtypes, bad offsets and mismatched shapes, naming the file, the tensor and the allowed dtypes', () => {
    for (const dtype of ['I8', 'F64']) {
      const bytes = rawFile(
        { w: { dtype, shape: [2], data_offsets: [0, dtype === 'I8' ? 2 : 16] } },
        dtype === 'I8' ? 2 : 16,
      );
      expect(() => decodeSafetensors(bytes, 'model.safetensors')).toThrow(
        new RegExp(`^model\\.safetensors: tensor 'w': dtype "${dtype}" is not supported; allowed: F32, F16, BF16$`),
      );
    }
    expect(() =>
      decodeSafetensors(rawFile({ w: { dtype: 'F16', shape: [2, 3], data_offsets: [0, 10] } }, 10), 'a.safetensors'),
    ).toThrow("a.safetensors: tensor 'w': shape [2,3] of F16 needs 12 bytes but data_offsets [0,10] span 10");
    expect(() => encodeSafetensors([{ name: 'x', shape: [2, 2], data: new Float32Array(3) }])).toThrow(
      /'x' has shape \[2,2\] \(4 values\) but 3/,
    );
    expect(() => decodeSafetensors(new Uint8Array(4))).toThrow(/shorter than the 8-byte/);
  });

  it('refuses a truncated file, naming the file and the tensor cut off', () => {
    const bytes = encodeSafetensors(tensors);
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(() => decodeSafetensors(bytes.subarray(0, 8 + n - 3), 'm.safetensors')).toThrow(
      /^m\.safetensors: header: header length \d+ \(bytes 8\.\.\d+\) runs past the end of the file \(\d+ bytes\); the file is truncated/,
    );
    // Cut inside the third tensor (tensors are written in order, so its name is known).
    const third = tensors[2];
    const header = readSafetensorsHeader(bytes, 'm.safetensors');
    const entry = header.tensors.find((t) => t.name === third.name)!;
    const cut = bytes.subarray(0, header.dataStart + entry.begin + 1);
    expect(() => decodeSafetensors(cut, 'm.safetensors')).toThrow(
      `m.safetensors: tensor '${third.name}': data_offsets [${entry.begin}, ${entry.end}] end at byte ${header.dataStart + entry.end} of the file, which has only ${cut.length} bytes; the file is truncated`,
    );
    const longer = new Uint8Array(bytes.length + 4);
    longer.set(bytes);
    expect(() => decodeSafetensors(longer, 'm.safetensors')).toThrow(
      "m.safetensors: header: 4 bytes follow the last tensor's data",
    );
  });

  it('refuses offsets that are not contiguous (a gap or an overlap), naming the tensor', () => {
    const gap = rawFile(
      { a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] } },
      12,
    );
    expect(() => decodeSafetensors(gap, 'g.safetensors')).toThrow(
      "g.safetensors: tensor 'b': data_offsets [8, 12] are not contiguous: expected begin 4 (after tensor 'a', which ends at 4)",
    );
    const overlap = rawFile(
      { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } },
      8,
    );
    expect(() => decodeSafetensors(overlap, 'o.safetensors')).toThrow(
      "o.safetensors: tensor 'b': data_offsets [4, 8] are not contiguous: expected begin 8",
    );
    const late = rawFile({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, 8);
    expect(() => decodeSafetensors(late, 'l.safetensors')).toThrow(
      "l.safetensors: tensor 'a': data_offsets [4, 8] are not contiguous: expected begin 0 (after the start of the data)",
    );
  });

  it('reads F16 and BF16 exactly, including subnormals, signed zero, Inf and NaN', () => {
    // Hand values: F16 0x3c00 = 1, 0xc000 = −2, 0x0001 = 2^-24 (smallest subnormal), 0x03ff = 1023·2^-24,
    // 0x7bff = 65504 (largest), 0x8000 = −0, 0x7c00 = Inf, 0x7e00 = NaN.
    const f16 = [0x3c00, 0xc000, 0x0001, 0x03ff, 0x7bff, 0x8000, 0x7c00, 0x7e00];
    const f16Values = [1, -2, 2 ** -24, 1023 * 2 ** -24, 65504, -0, Infinity, NaN];
    // BF16 0x3f80 = 1, 0xc0a0 = −5, 0x0001 = 2^-133, 0x7f7f = (2 − 2^-7)·2^127, 0x7f80 = Inf.
    const bf16 = [0x3f80, 0xc0a0, 0x0001, 0x7f7f, 0x7f80];
    const bf16Values = [1, -5, 2 ** -133, (2 - 2 ** -7) * 2 ** 127, Infinity];
    const half = (bits: number[]) => {
      const out = new Uint8Array(bits.length * 2);
      bits.forEach((b, i) => new DataView(out.buffer).setUint16(2 * i, b, true));
      return out;
    };
    const bytes = rawFile(
      {
        h: { dtype: 'F16', shape: [8], data_offsets: [0, 16] },
        b: { dtype: 'BF16', shape: [5], data_offsets: [16, 26] },
      },
      26,
      new Uint8Array([...half(f16), ...half(bf16)]),
    );
    const back = decodeSafetensors(bytes, 'h.safetensors');
    expect([...back.tensors.get('h')!.data]).toEqual(f16Values);
    expect(Object.is(back.tensors.get('h')!.data[5], -0)).toBe(true);
    expect([...back.tensors.get('b')!.data]).toEqual(bf16Values);
    expect(back.dtypes).toEqual(
      new Map([
        ['h', 'F16'],
        ['b', 'BF16'],
      ]),
    );
    // A header of odd length (unpadded, which some writers produce) puts the data at an odd offset.
    const plain = JSON.stringify({ h: { dtype: 'F16', shape: [8], data_offsets: [0, 16] } });
    const json = new TextEncoder().encode(plain.length % 2 ? plain : `${plain} `);
    expect(json.length % 2).toBe(1);
    const odd = new Uint8Array(8 + json.length + 16);
    new DataView(odd.buffer).setBigUint64(0, BigInt(json.length), true);
    odd.set(json, 8);
    odd.set(half(f16), 8 + json.length);
    expect([...decodeSafetensors(odd).tensors.get('h')!.data]).toEqual(f16Values);
    // Every one of the 2^16 F16 patterns converts to the value its fields define.
    for (let h = 0; h < 0x10000; h++) {
      const e = (h >> 10) & 31,
        m = h & 1023,
        sign = h & 0x8000 ? -1 : 1;
      const expected =
        e === 31 ? (m ? NaN : sign * Infinity) : sign * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
      const got = new Float32Array(new Uint32Array([f16BitsToF32Bits(h)]).buffer)[0];
      if (!Object.is(got, expected)) throw new Error(`F16 0x${h.toString(16)}: got ${got}, expected ${expected}`);
    }
  });

  it('writes F16 and BF16 rounded to nearest, ties to even, and reads back the rounded values', () => {
    // 1 + 2^-11 is halfway between F16 1 and 1 + 2^-10: ties to even gives 1; 1 + 3·2^-11 gives 1 + 2^-9.
    const x = Float32Array.from([
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      65519,
      65520,
      2 ** -25,
      2 ** -25 * 1.5,
      -0.1,
      1 + 2 ** -8,
      1 + 3 * 2 ** -8,
    ]);
    const f16 = decodeSafetensors(
      encodeSafetensors([{ name: 'x', shape: [x.length], data: x }], {}, { dtype: 'F16' }),
    ).tensors.get('x')!.data;
    expect([...f16.slice(0, 6)]).toEqual([1, 1 + 2 ** -9, 65504, Infinity, 0, 2 ** -24]);
    const bf16 = decodeSafetensors(
      encodeSafetensors([{ name: 'x', shape: [x.length], data: x }], {}, { dtype: 'BF16' }),
    ).tensors.get('x')!.data;
    expect([bf16[7], bf16[8]]).toEqual([1, 1 + 2 ** -6]);
    // Against a reference written from the definition: the nearest multiple of the ulp, ties to even.
    for (const t of tensors) {
      for (const dtype of ['F16', 'BF16'] as const) {
        const got = decodeSafetensors(encodeSafetensors([t], {}, { dtype })).tensors.get(t.name)!.data;
        t.data.forEach((v, i) => {
          if (got[i] !== roundTo(v, dtype))
            throw new Error(`${dtype} ${t.name}[${i}] = ${v}: got ${got[i]}, expected ${roundTo(v, dtype)}`);
        });
      }
    }
  });
});

/** A safetensors file from a hand-written header (8-byte aligned) and `dataBytes` of data. */
function rawFile(header: Record<string, unknown>, dataBytes: number, data = new Uint8Array(dataBytes)): Uint8Array {
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const bytes = new Uint8Array(8 + json.length + dataBytes);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(new TextEncoder().encode(json), 8);
  bytes.set(data, 8 + json.length);
  return bytes;
}

/** |v| rounded to F16 (10 mantissa bits, exponents −14..15) or BF16 (7 bits, F32's range), ties to even; normal-range inputs. */
function roundTo(v: number, dtype: 'F16' | 'BF16'): number {
  if (v === 0) return v;
  const [bits, minExp] = dtype === 'F16' ? [10, -14] : [7, -126];
  const e = Math.max(Math.floor(Math.log2(Math.abs(v))), minExp);
  const ulp = 2 ** (e - bits);
  const q = v / ulp;
  const f = Math.floor(q);
  const r = q - f > 0.5 || (q - f === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return r * ulp;
}

describe('HF config.json', () => {
  it('round-trips a config through LlamaForCausalLM fields', () => {
    const c = modelPreset('small', 40);
    const json = toHfConfig(c, { bos: 1, eos: 2, pad: 0 });
    expect(json).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      hidden_size: 64,
      head_dim: 16,
      tie_word_embeddings: true,
      eos_token_id: 2,
    });
    expect(fromHfConfig(JSON.parse(JSON.stringify(json)))).toEqual({ ok: true, config: c });
  });

  it('names each field it cannot accept', () => {
    const json = {
      ...toHfConfig(modelPreset('tiny', 9), { bos: 1, eos: 2, pad: 0 }),
      hidden_act: 'gelu',
      mlp_bias: true,
      num_key_value_heads: 1,
    };
    const r = fromHfConfig(json);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problems.join('\n')).toMatch(/hidden_act must be 'silu'/);
      expect(r.problems.join('\n')).toMatch(/mlp_bias must be false/);
    }
    expect(validateModelConfig({ ...modelPreset('tiny', 9), dModel: 9 })).toEqual([
      'dModel (9) must be a multiple of heads (2)',
    ]);
  });
});
