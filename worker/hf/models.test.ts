import { describe, expect, it } from 'vitest';
import { HF_MAX_SEQ, importCheckpoint, isHfTokenizer } from '../model/checkpoint';
import { parameterCount } from '../model/params';
import type { ModelFolderFile } from '../contract/models';
import type { RunOptions } from '../contract/options';
import { findPreset } from '../presets/table';
import { defaultIdsPerPass, stepMemoryPlan, trainingMemoryEstimate } from './memory';
import { PickedModels } from './models';
import { FIXTURE_CONFIG, fixtureFolder } from './node-fixture';

const text = (x: unknown) => new TextEncoder().encode(JSON.stringify(x));
const json = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b)) as Record<string, unknown>;
/** Bit-identical (toEqual on millions of values is slow). */
const sameBits = (a: Float32Array, b: Float32Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const asFiles = (m: Map<string, Uint8Array>): ModelFolderFile[] => [...m].map(([name, bytes]) => ({ name, bytes }));

/** The files as Blobs that record every slice read (the browser hands the worker File objects). */
function blobs(m: Map<string, Uint8Array>, log: { name: string; bytes: number }[]): ModelFolderFile[] {
  return [...m].map(([name, bytes]) => {
    const blob = new Blob([bytes as Uint8Array<ArrayBuffer>]);
    return {
      name,
      bytes: {
        size: blob.size,
        slice: (start?: number, end?: number) => {
          const part = blob.slice(start, end);
          log.push({ name, bytes: part.size });
          return part;
        },
      },
    };
  });
}

const fx = fixtureFolder({ kvHeads: 2, maxSeq: 4096 });

describe('inspecting a picked folder', () => {
  it('gives the parameter count, dtypes, config and the memory at the trained width, reading only headers from Files', async () => {
    const log: { name: string; bytes: number }[] = [];
    const r = await new PickedModels().inspect(blobs(fx.files, log), { name: 'tiny-llama', rows: 8 });
    if (!r.ok) throw new Error(r.message);
    const config = { ...FIXTURE_CONFIG, kvHeads: 2, maxSeq: 4096 };
    expect(r.summary).toMatchObject({
      name: 'tiny-llama',
      architecture: 'LlamaForCausalLM',
      parameters: parameterCount(config),
      dtypes: ['F32'],
      trainedWidth: HF_MAX_SEQ,
      config: {
        layers: 2,
        dModel: 64,
        heads: 4,
        kvHeads: 2,
        ffn: 176,
        vocab: 32000,
        maxPositions: 4096,
        tiedEmbeddings: false,
      },
      weightFiles: [{ file: 'model.safetensors', tensors: 21 }],
    });
    expect(r.summary.training).toEqual(trainingMemoryEstimate(config, 8, HF_MAX_SEQ));
    const weights = fx.files.get('model.safetensors')!.length;
    const read = log.filter((l) => l.name === 'model.safetensors').reduce((n, l) => n + l.bytes, 0);
    expect(read).toBeLessThan(weights / 100); // the header, not the tensors
  });

  it('with a GRPO step: the plan of that step on wasm, prompts at their longest (the trained width less maxNew)', async () => {
    const models = new PickedModels();
    const step = { prompts: 4, group: 2, maxNew: 16, reference: true, samplerModels: 0 };
    // The run options of that step: a GRPO preset's, with a KL β (a reference policy).
    const options = {
      ...findPreset('grpo-arith')!.defaults,
      prompts: 4,
      group: 2,
      maxNew: 16,
      beta: 0.01,
    } as RunOptions;
    const config = { ...FIXTURE_CONFIG, kvHeads: 2, maxSeq: 4096 };
    const r = await models.inspect(asFiles(fx.files), { rows: 4, plan: options });
    if (!r.ok) throw new Error(r.message);
    const plan = stepMemoryPlan(config, {
      ...step,
      rows: 8,
      promptIds: HF_MAX_SEQ - 16,
      idsPerPass: defaultIdsPerPass(config),
    });
    expect(r.summary.plan).toEqual({ ...plan, limit: 2 ** 32, problem: null });
    expect(r.summary.plan!.parts.map((p) => p.part)).toContain('reference policy: weights and one pass');
    const over = await models.inspect(asFiles(fx.files), {
      plan: { ...options, prompts: 64, group: 64, idsPerPass: 1e6 } as RunOptions,
    });
    if (!over.ok) throw new Error(over.message);
    expect(over.summary.plan!.problem).toMatch(/^the run needs [\d.]+ GiB, more than the wasm memory's 4\.00 GiB: /);
    // Without options, no plan; DPO's options have one of their own (the reference a model of its own).
    const none = await models.inspect(asFiles(fx.files), { rows: 4 });
    expect(none.ok && none.summary.plan).toBe(undefined);
    const dpo = await models.inspect(asFiles(fx.files), {
      plan: { preset: 'dpo-arith', pairs: 4, samplesPerPrompt: 4, maxNew: 16 } as RunOptions,
    });
    if (!dpo.ok) throw new Error(dpo.message);
    expect(dpo.summary.plan!.parts.at(-1)!.part).toBe(
      `sampling: KV cache of 16 × ${HF_MAX_SEQ} ids, the prefill and a decoding step`,
    );
  });

  it('refuses a folder that is not a Llama, naming the file and field, and a file given twice', async () => {
    const gpt2 = new Map(fx.files).set(
      'config.json',
      text({ ...json(fx.files.get('config.json')!), architectures: ['GPT2LMHeadModel'] }),
    );
    const r = await new PickedModels().inspect(asFiles(gpt2));
    expect(r).toMatchObject({
      ok: false,
      problems: [expect.objectContaining({ file: 'config.json', field: 'architectures' })],
    });
    const twice = await new PickedModels().inspect([
      ...asFiles(fx.files),
      { name: 'config.json', bytes: fx.files.get('config.json')! },
    ]);
    expect(twice).toMatchObject({
      ok: false,
      problems: [{ file: 'config.json', field: '(file)', detail: expect.stringContaining('given twice') }],
    });
    const empty = await new PickedModels().inspect([]);
    expect(empty).toMatchObject({ ok: false, problems: [{ file: 'config.json', field: '(file)' }] });
  });
});

describe('using a picked folder', () => {
  it('keeps it as an F32 checkpoint with its tokenizer under an id that the same folder gets again', async () => {
    const models = new PickedModels();
    const r = await models.use(asFiles(fx.files), { name: 'tiny-llama' });
    if (!r.ok) throw new Error(r.message);
    expect(r.model).toMatchObject({
      name: 'tiny-llama',
      architecture: 'LlamaForCausalLM',
      parameters: parameterCount({ ...FIXTURE_CONFIG, kvHeads: 2 }),
      dtypes: ['F32'],
      trainedWidth: HF_MAX_SEQ,
      vocab: 32000,
      tokenizer: { bos: '<s>', eos: '</s>', chatTemplate: false },
    });
    expect(r.model.id).toMatch(/^hf-[0-9a-f]{16}$/);
    expect(models.model(r.model.id)).toEqual(r.model);
    const files = models.files(r.model.id)!;
    expect(Object.keys(files).sort()).toEqual([
      'config.json',
      'dewpoint.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const ck = importCheckpoint(files);
    expect(ck.config).toEqual({ ...FIXTURE_CONFIG, kvHeads: 2, maxSeq: HF_MAX_SEQ });
    expect(isHfTokenizer(ck.tokenizer)).toBe(true);
    expect(ck.info).toMatchObject({ source: 'huggingface', folder: 'tiny-llama', max_position_embeddings: 4096 });
    for (const [name, w] of fx.weights) expect(sameBits(ck.weights.get(name)!, w), name).toBe(true);
    // The same folder under another name (a Blob this time): the same id; another model: another id.
    const again = await new PickedModels().use(blobs(fx.files, []), { name: 'renamed' });
    expect(again).toMatchObject({ ok: true, model: { id: r.model.id, name: 'renamed' } });
    const other = await new PickedModels().use(
      asFiles(
        fixtureFolder({ kvHeads: 2, maxSeq: 4096 }, {}).files.set(
          'config.json',
          text({ ...json(fx.files.get('config.json')!), rope_theta: 500000 }),
        ),
      ),
    );
    expect(other.ok && other.model.id).not.toBe(r.model.id);
  });

  it('keeps nothing from a refused folder, with every problem named', async () => {
    const models = new PickedModels();
    const noTokenizer = new Map(fx.files);
    noTokenizer.delete('tokenizer.json');
    expect(await models.use(asFiles(noTokenizer))).toMatchObject({
      ok: false,
      problems: [{ file: 'tokenizer.json', field: '(file)' }],
    });
    const truncated = new Map(fx.files).set('model.safetensors', fx.files.get('model.safetensors')!.subarray(0, 1000));
    const r = await models.use(asFiles(truncated));
    expect(r).toMatchObject({ ok: false, problems: [expect.objectContaining({ file: 'model.safetensors' })] });
    expect(r.ok || r.message).toContain('model.safetensors');
    expect(models.model('hf-0000000000000000')).toBeNull();
    expect((models as unknown as { held: Map<string, unknown> }).held.size).toBe(0);
  });
});
