import { describe, expect, it } from 'vitest';
import { validateModelConfig } from '../model/config';
import { toHfConfig } from '../model/hf-config';
import { HfFolderError } from '../model/hf-errors';
import { numel, paramSpecs, parameterCount } from '../model/params';
import { decodeSafetensors, encodeSafetensors, readSafetensorsHeader } from '../model/safetensors';
import type { HfFileReader } from './files';
import { inspectHfFolder, loadHfFolder } from './folder';
import { FIXTURE_CONFIG, fixtureFolder, llamaTokenizerFiles } from './node-fixture';
import { shardName } from './write';

const text = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as Record<string, unknown>;
/** Index of the first value whose bits differ, −1 when `a` and `b` are bit-identical (toEqual on millions of values is slow). */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length),
    y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/** `files` with config.json changed by `patch` (undefined values delete the key). */
function withConfig(files: Map<string, Uint8Array>, patch: Record<string, unknown>): Map<string, Uint8Array> {
  const c = { ...json(files.get('config.json')!), ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete c[k];
  return new Map(files).set('config.json', text(c));
}

/** The HfFolderError `f` rejects with. */
async function refusal(f: Promise<unknown>): Promise<HfFolderError> {
  const e = await f.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HfFolderError);
  return e as HfFolderError;
}

/** A ranged reader over `files` that records every range read. */
function rangedReader(
  files: Map<string, Uint8Array>,
  log: { name: string; start: number; end: number }[] = [],
): HfFileReader {
  return async (name, range) => {
    const b = files.get(name);
    if (!b) return undefined;
    log.push({ name, start: range?.start ?? 0, end: range?.end ?? b.length });
    return range ? b.subarray(range.start, range.end) : b;
  };
}

describe('writeHfFolder → loadHfFolder', () => {
  const fx = fixtureFolder();

  it('round-trips F32 weights exactly, with the config and the Llama tokenizer', async () => {
    const loaded = await loadHfFolder(fx.files);
    expect(loaded.config).toEqual(FIXTURE_CONFIG);
    expect([...loaded.weights.keys()]).toEqual(paramSpecs(FIXTURE_CONFIG).map((s) => s.name));
    for (const [name, w] of fx.weights) expect(firstDifference(loaded.weights.get(name)!, w)).toBe(-1);
    expect(loaded.tokenizer.size).toBe(32000);
    expect(loaded.info).toMatchObject({
      architecture: 'LlamaForCausalLM',
      dtypes: ['F32'],
      index: null,
      weightFiles: [{ file: 'model.safetensors', tensors: 21 }],
    });
    expect(loaded.chatTemplate).toBeUndefined();
  });

  it('F16 and BF16 files load as the rounded values, exactly', async () => {
    for (const dtype of ['F16', 'BF16'] as const) {
      const files = fixtureFolder({}, { dtype }).files;
      const loaded = await loadHfFolder(files);
      expect(loaded.info.dtypes).toEqual([dtype]);
      expect(json(files.get('config.json')!).torch_dtype).toBe(dtype === 'F16' ? 'float16' : 'bfloat16');
      // The rounded values: what encodeSafetensors(dtype) stores, read back by the same decoder
      // (whose F16/BF16 paths checkpoint-format.test.ts checks against hand values and a reference).
      for (const [name, w] of fx.weights) {
        const rounded = decodeSafetensors(
          encodeSafetensors([{ name, shape: [w.length], data: w }], {}, { dtype }),
        ).tensors.get(name)!.data;
        expect(firstDifference(loaded.weights.get(name)!, rounded)).toBe(-1);
        expect(loaded.weights.get(name)!.some((v, i) => v !== w[i])).toBe(true);
      }
    }
  });

  it('sharded folders (index + 3 shards) load the same weights as the single file, also through a lazy reader', async () => {
    const sharded = fixtureFolder({}, { shards: 3 }).files;
    expect([...sharded.keys()].filter((f) => f.endsWith('.safetensors')).sort()).toEqual(
      [1, 2, 3].map((k) => shardName(k, 3)),
    );
    expect(sharded.has('model.safetensors')).toBe(false);
    const index = json(sharded.get('model.safetensors.index.json')!) as {
      metadata: { total_size: number };
      weight_map: Record<string, string>;
    };
    expect(Object.keys(index.weight_map)).toEqual(paramSpecs(FIXTURE_CONFIG).map((s) => s.name));
    expect(index.metadata.total_size).toBe(4 * parameterCount(FIXTURE_CONFIG));
    const single = await loadHfFolder(fx.files);
    for (const source of [sharded, rangedReader(sharded)]) {
      const loaded = await loadHfFolder(source);
      expect(loaded.info.weightFiles.map((w) => w.file)).toEqual([1, 2, 3].map((k) => shardName(k, 3)));
      for (const [name, w] of single.weights) expect(firstDifference(loaded.weights.get(name)!, w)).toBe(-1);
    }
  });

  it('a reader that ignores ranges (returns whole files) works too', async () => {
    const whole: HfFileReader = async (name) => fx.files.get(name);
    const loaded = await loadHfFolder(whole);
    expect(firstDifference(loaded.weights.get('lm_head.weight')!, fx.weights.get('lm_head.weight')!)).toBe(-1);
  });

  it('tied embeddings: no lm_head.weight is needed; an identical copy is ignored, a different one refused', async () => {
    const tied = fixtureFolder({ tiedEmbeddings: true });
    const loaded = await loadHfFolder(tied.files);
    expect(loaded.config.tiedEmbeddings).toBe(true);
    expect(loaded.weights.has('lm_head.weight')).toBe(false);
    const embed = tied.weights.get('model.embed_tokens.weight')!;
    const withHead = (head: Float32Array) => {
      const all = [
        ...decodeSafetensors(tied.files.get('model.safetensors')!).tensors.values(),
        { name: 'lm_head.weight', shape: [32000, 64], data: head },
      ];
      return new Map(tied.files).set('model.safetensors', encodeSafetensors(all));
    };
    const copy = await loadHfFolder(withHead(embed));
    expect(copy.info.ignoredTensors).toEqual(['lm_head.weight']);
    expect(copy.weights.has('lm_head.weight')).toBe(false);
    const other = embed.slice();
    other[5] += 1;
    const e = await refusal(loadHfFolder(withHead(other)));
    expect([e.file, e.field]).toEqual(['config.json', 'tie_word_embeddings']);
    expect(e.message).toMatch(
      /^config\.json: tie_word_embeddings: true, but model\.safetensors holds an lm_head\.weight that differs from model\.embed_tokens\.weight \(first at index 5/,
    );
  });

  it('tie_word_embeddings absent reads as false (the LlamaConfig default), so a missing lm_head.weight is refused', async () => {
    const tied = fixtureFolder({ tiedEmbeddings: true });
    const e = await refusal(inspectHfFolder(withConfig(tied.files, { tie_word_embeddings: undefined })));
    expect(e.message).toBe(
      "model.safetensors: tensor 'lm_head.weight': missing; config.json implies shape [32000,64] " +
        '(vocab_size 32000 × hidden_size 64) because tie_word_embeddings is false',
    );
    const untied = await inspectHfFolder(withConfig(fx.files, { tie_word_embeddings: undefined }));
    expect(untied.notes).toContain(
      'tie_word_embeddings is absent: read as false, the LlamaConfig default (lm_head.weight is then required)',
    );
  });

  it('a tokenizer smaller than vocab_size is accepted: the extra embedding rows are padding ids with no token', async () => {
    const padded = fixtureFolder({ vocab: 32064 });
    const loaded = await loadHfFolder(padded.files);
    expect(loaded.tokenizer).toMatchObject({ size: 32064, tokenCount: 32000 });
    expect(loaded.tokenizer.vocab.length).toBe(32064);
    expect(loaded.tokenizer.vocab[32010]).toBe('');
    expect(loaded.tokenizer.decode([loaded.tokenizer.encode('Hello')[0], 32010])).toBe('Hello');
  });

  it('GQA follows paramSpecs: k_proj/v_proj are (kvHeads·hs, C) once validateModelConfig accepts kvHeads < heads', async () => {
    const gqa = { ...FIXTURE_CONFIG, kvHeads: 2 };
    if (validateModelConfig(gqa).length === 0) {
      const loaded = await loadHfFolder(fixtureFolder({ kvHeads: 2 }).files);
      expect(loaded.config.kvHeads).toBe(2);
      expect(paramSpecs(gqa).find((s) => s.name === 'model.layers.0.self_attn.k_proj.weight')!.shape).toEqual([
        2 * 16,
        64,
      ]);
      expect(loaded.weights.get('model.layers.0.self_attn.k_proj.weight')!.length).toBe(2 * 16 * 64);
      // Full-width k/v tensors under a GQA config disagree with it.
      const e = await refusal(inspectHfFolder(withConfig(fx.files, { num_key_value_heads: 2 })));
      expect(e.message.split('\n')[0]).toBe(
        "model.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight': shape [64,64], but config.json " +
          'implies [32,64] (num_key_value_heads 2 · head_dim 16 × hidden_size 64)',
      );
    } else {
      const e = await refusal(inspectHfFolder(withConfig(fx.files, { num_key_value_heads: 2 })));
      expect(e.field).toBe('num_key_value_heads');
    }
  });
});

describe('inspectHfFolder', () => {
  const fx = fixtureFolder();

  it('counts parameters as the sum of the tensor sizes in the headers, reading only the headers', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    const info = await inspectHfFolder(rangedReader(fx.files, log), { rows: 4, seq: 32 });
    const header = readSafetensorsHeader(fx.files.get('model.safetensors')!);
    expect(info.parameterCount).toBe(header.tensors.reduce((n, t) => n + numel(t.shape), 0));
    // 2 × 32000 × 64 (embed, lm_head) + 2 layers × (4·64² + 3·176·64 + 2·64) + 64 (final norm)
    expect(info.parameterCount).toBe(2 * 32000 * 64 + 2 * (4 * 64 * 64 + 3 * 176 * 64 + 2 * 64) + 64);
    expect(info.parameterCount).toBe(4_196_672);
    expect(info.dtypes).toEqual(['F32']);
    // Headers only: config.json whole; of model.safetensors, [0, 8) (twice: once to find the file),
    // the header, and two 1-byte probes of where the data ends.
    const weightReads = log.filter((r) => r.name === 'model.safetensors');
    expect(weightReads.reduce((n, r) => n + r.end - r.start, 0)).toBe(header.dataStart + 8 + 2);
    expect(log.some((r) => r.name === 'tokenizer.json')).toBe(false);
  });

  it('estimates f32 training memory: 16 bytes per parameter plus the activations of rows × seq', async () => {
    const [rows, seq] = [4, 32];
    const { training } = await inspectHfFolder(fx.files, { rows, seq });
    const P = 4_196_672;
    expect(training).toMatchObject({ rows, seq, parameters: P, weights: 4 * P, grads: 4 * P, adamMoments: 8 * P });
    // worker/model/tensors.ts allocActs, by hand: per layer 8 (N, C) + 2 (N) + (N, NH) + 3 (N, F); then
    // 4 i32 (N), 2 (N, C) + (N) + (N, V) + 4 (N), 2 (N, C) forward scratch, 3 (N) + (N, V) + 8 (N, C) + 3 (N, F) backward,
    // and (C) where a frozen base's norm gradients go.
    const N = rows * seq,
      C = 64,
      F = 176,
      V = 32000,
      NH = 4,
      L = 2;
    const values =
      L * N * (8 * C + 2 + NH + 3 * F) +
      4 * N +
      2 * N * C +
      N +
      N * V +
      4 * N +
      2 * N * C +
      3 * N +
      N * V +
      8 * N * C +
      3 * N * F +
      C;
    expect(training.activations).toBe(4 * values);
    expect(training.total).toBe(16 * P + 4 * values);
    expect(training.counts).toMatch(
      /weights \+ gradients \+ AdamW m and v .* activations .* not the sampling KV cache/,
    );
    expect((await inspectHfFolder(fx.files)).training).toMatchObject({ rows: 1, seq: 64 });
  });
});

describe('loadHfFolder refuses, naming the file and the field', () => {
  const fx = fixtureFolder();

  it('a truncated safetensors file: the header, or a tensor cut off (Map and lazy ranged reader)', async () => {
    const full = fx.files.get('model.safetensors')!;
    const header = readSafetensorsHeader(full);
    const headCut = new Map(fx.files).set('model.safetensors', full.subarray(0, 100));
    for (const source of [headCut, rangedReader(headCut)]) {
      const e = await refusal(loadHfFolder(source));
      expect([e.file, e.field]).toEqual(['model.safetensors', 'header']);
      expect(e.message).toMatch(
        /^model\.safetensors: header: header length \d+ \(bytes 8\.\.\d+\) runs past the end of the file \(100 bytes\); the file is truncated/,
      );
    }
    const up = header.tensors.find((t) => t.name === 'model.layers.1.mlp.up_proj.weight')!;
    const dataCut = new Map(fx.files).set('model.safetensors', full.subarray(0, header.dataStart + up.begin + 10));
    for (const source of [dataCut, rangedReader(dataCut)]) {
      const e = await refusal(loadHfFolder(source));
      expect([e.file, e.field]).toEqual(['model.safetensors', "tensor 'model.layers.1.mlp.up_proj.weight'"]);
      expect(e.message).toMatch(
        new RegExp(
          `^model\\.safetensors: tensor 'model\\.layers\\.1\\.mlp\\.up_proj\\.weight': data_offsets ` +
            `\\[${up.begin}, ${up.end}\\] end at byte ${header.dataStart + up.end} of the file, which .*; the ` +
            `file is truncated`,
        ),
      );
    }
  });

  it('a config that disagrees with the tensors: each shape mismatch names the tensor, both shapes and the fields', async () => {
    const e = await refusal(loadHfFolder(withConfig(fx.files, { intermediate_size: 128 })));
    expect(e.problems.map((p) => p.field)).toEqual(
      [0, 1].flatMap((l) =>
        ['gate_proj', 'up_proj', 'down_proj'].map((m) => `tensor 'model.layers.${l}.mlp.${m}.weight'`),
      ),
    );
    expect(e.message.split('\n')[0]).toBe(
      "model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight': shape [176,64], but config.json " +
        'implies [128,64] (intermediate_size 128 × hidden_size 64)',
    );
    expect(e.message.split('\n')[2]).toBe(
      "model.safetensors: tensor 'model.layers.0.mlp.down_proj.weight': shape [64,176], but config.json " +
        'implies [64,128] (hidden_size 64 × intermediate_size 128)',
    );
    const layers = await refusal(loadHfFolder(withConfig(fx.files, { num_hidden_layers: 3 })));
    expect(layers.message).toMatch(
      /^model\.safetensors: tensor 'model\.layers\.2\.input_layernorm\.weight': missing; config\.json implies shape \[64\] \(hidden_size 64\)/,
    );
    const vocab = await refusal(loadHfFolder(withConfig(fx.files, { vocab_size: 32100 })));
    expect(vocab.message).toMatch(
      /tensor 'model\.embed_tokens\.weight': shape \[32000,64\], but config\.json implies \[32100,64\] \(vocab_size 32100 × hidden_size 64\)/,
    );
  });

  it('a missing tensor, and unexpected extra tensors listed by name (rotary inv_freq buffers are ignored, as transformers does)', async () => {
    const decoded = [...decodeSafetensors(fx.files.get('model.safetensors')!).tensors.values()];
    const without = new Map(fx.files).set(
      'model.safetensors',
      encodeSafetensors(decoded.filter((t) => t.name !== 'model.layers.1.self_attn.v_proj.weight')),
    );
    const e = await refusal(loadHfFolder(without));
    expect(e.message).toBe(
      "model.safetensors: tensor 'model.layers.1.self_attn.v_proj.weight': missing; config.json implies " +
        'shape [64,64] (num_key_value_heads 4 · head_dim 16 × hidden_size 64)',
    );
    const extra = [
      ...decoded,
      { name: 'model.layers.0.self_attn.q_proj.bias', shape: [64], data: new Float32Array(64) },
      { name: 'score.weight', shape: [2, 64], data: new Float32Array(128) },
      { name: 'model.layers.0.self_attn.rotary_emb.inv_freq', shape: [8], data: new Float32Array(8) },
    ];
    const e2 = await refusal(loadHfFolder(new Map(fx.files).set('model.safetensors', encodeSafetensors(extra))));
    expect([e2.file, e2.field]).toEqual(['model.safetensors', 'tensors']);
    expect(e2.message).toBe(
      "model.safetensors: tensors: 2 unexpected tensors: 'model.layers.0.self_attn.q_proj.bias', " +
        "'score.weight'; expected only the LlamaForCausalLM tensors config.json implies",
    );
    const ignored = await inspectHfFolder(
      new Map(fx.files).set('model.safetensors', encodeSafetensors([...decoded, extra.at(-1)!])),
    );
    expect(ignored.ignoredTensors).toEqual(['model.layers.0.self_attn.rotary_emb.inv_freq']);
  });

  it('a tokenizer larger than vocab_size', async () => {
    const small = fixtureFolder({ vocab: 31990 });
    const e = await refusal(loadHfFolder(small.files));
    expect([e.file, e.field]).toEqual(['tokenizer.json', 'model.vocab + added_tokens']);
    expect(e.message).toBe(
      'tokenizer.json: model.vocab + added_tokens: the tokenizer has ids up to 31999 (32000 entries in ' +
        'model.vocab, 3 added_tokens): 32000 ids, but config.json vocab_size is 31990; expected at most ' +
        'vocab_size ids (the embedding may have padding rows, never fewer rows than tokens)',
    );
  });

  it('an unsupported dtype (I8, F64), naming the file, the tensor, the dtype and the allowed ones', async () => {
    const full = fx.files.get('model.safetensors')!;
    const header = readSafetensorsHeader(full);
    for (const dtype of ['I8', 'F64']) {
      const n = header.headerLength;
      const raw = JSON.parse(new TextDecoder().decode(full.subarray(8, 8 + n))) as Record<string, { dtype: string }>;
      raw['model.norm.weight'].dtype = dtype;
      const jsonBytes = new TextEncoder().encode(JSON.stringify(raw).padEnd(n, ' '));
      expect(jsonBytes.length).toBe(n);
      const bytes = full.slice();
      bytes.set(jsonBytes, 8);
      const e = await refusal(inspectHfFolder(new Map(fx.files).set('model.safetensors', bytes)));
      expect(e.message).toBe(
        `model.safetensors: tensor 'model.norm.weight': dtype "${dtype}" is not supported; allowed: F32, F16, BF16`,
      );
    }
  });

  it('an unsupported architecture or model_type, RoPE scaling, quantization, and Mistral with a sliding window', async () => {
    const arch = await refusal(inspectHfFolder(withConfig(fx.files, { architectures: ['GPT2LMHeadModel'] })));
    expect([arch.file, arch.field]).toEqual(['config.json', 'architectures']);
    expect(arch.message).toBe(
      'config.json: architectures: got ["GPT2LMHeadModel"]; expected exactly one of LlamaForCausalLM or ' +
        'MistralForCausalLM (other architectures are not this network)',
    );
    const type = await refusal(inspectHfFolder(withConfig(fx.files, { model_type: 'qwen2' })));
    expect(type.message).toBe(`config.json: model_type: got "qwen2"; expected 'llama' for LlamaForCausalLM`);
    const rope = await refusal(
      inspectHfFolder(withConfig(fx.files, { rope_scaling: { rope_type: 'llama3', factor: 8 } })),
    );
    expect(rope.message).toMatch(
      /^config\.json: rope_scaling: rope_scaling must be null \(no RoPE scaling is implemented\), got \{"rope_type":"llama3","factor":8\}$/,
    );
    const quant = await refusal(
      inspectHfFolder(withConfig(fx.files, { quantization_config: { quant_method: 'gptq' } })),
    );
    expect(quant.field).toBe('quantization_config');
    const act = await refusal(inspectHfFolder(withConfig(fx.files, { hidden_act: 'gelu', attention_bias: true })));
    expect(act.problems.map((p) => p.field)).toEqual(['hidden_act', 'attention_bias']);
    const mistral = { architectures: ['MistralForCausalLM'], model_type: 'mistral' };
    const window = await refusal(inspectHfFolder(withConfig(fx.files, { ...mistral, sliding_window: 32 })));
    expect(window.message).toBe(
      'config.json: sliding_window: got 32; expected null or at least max_position_embeddings (64): sliding-window attention is not implemented',
    );
    for (const sliding_window of [null, 64, 4096]) {
      expect((await inspectHfFolder(withConfig(fx.files, { ...mistral, sliding_window }))).architecture).toBe(
        'MistralForCausalLM',
      );
    }
  });

  it('missing files, a broken index, bad JSON, and a bos_token that is not a token', async () => {
    const noConfig = new Map(fx.files);
    noConfig.delete('config.json');
    expect((await refusal(loadHfFolder(noConfig))).message).toBe(
      'config.json: (file): absent; expected the model configuration (LlamaForCausalLM)',
    );
    const noWeights = new Map(fx.files);
    noWeights.delete('model.safetensors');
    expect((await refusal(loadHfFolder(noWeights))).message).toMatch(
      /^model\.safetensors: \(file\): absent, and so is model\.safetensors\.index\.json/,
    );
    const sharded = fixtureFolder({}, { shards: 2 }).files;
    sharded.delete(shardName(2, 2));
    expect((await refusal(loadHfFolder(sharded))).message).toBe(
      `model.safetensors.index.json: weight_map: names '${shardName(2, 2)}', which the folder does not have; expected every shard it names to be present`,
    );
    const badJson = new Map(fx.files).set('generation_config.json', new TextEncoder().encode('{ nope'));
    expect((await refusal(loadHfFolder(badJson))).message).toMatch(
      /^generation_config\.json: \(file\): not valid JSON/,
    );
    const tc = { ...llamaTokenizerFiles().tokenizerConfig, bos_token: '<start>' };
    const badBos = new Map(fx.files).set('tokenizer_config.json', text(tc));
    expect((await refusal(loadHfFolder(badBos))).message).toBe(
      'tokenizer_config.json: bos_token: "<start>" is not a token of tokenizer.json; expected one of its tokens',
    );
  });

  it('nothing is returned half-loaded: a tokenizer problem is found before any tensor data is read', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    const e = await refusal(loadHfFolder(rangedReader(fixtureFolder({ vocab: 31990 }).files, log)));
    expect(e.file).toBe('tokenizer.json');
    const header = readSafetensorsHeader(fixtureFolder({ vocab: 31990 }).files.get('model.safetensors')!);
    expect(
      log.filter((r) => r.name === 'model.safetensors').every((r) => r.end <= header.dataStart || r.end - r.start <= 1),
    ).toBe(true);
  });
});

describe('config.json as written', () => {
  it('is toHfConfig with the tokenizer specials (pad null: Llama 2 names none) and the dtype', () => {
    const c = json(fixtureFolder().files.get('config.json')!);
    expect(c).toEqual({ ...toHfConfig(FIXTURE_CONFIG, { bos: 1, eos: 2, pad: 0 }), pad_token_id: null });
  });
});
