import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../kernels/backends/cpu';
import { HF_MAX_SEQ, checkpointFromHf, exportCheckpoint, importCheckpoint, isHfTokenizer } from '../model/checkpoint';
import { Model } from '../model/model';
import { loadHfFolder } from './folder';
import { fixtureFolder } from './node-fixture';

describe('a Hugging Face base as a Dewpoint checkpoint', () => {
  it('writes its tokenizer files back and reads the same model and tokenizer (a run continues from it)', async () => {
    const { files } = fixtureFolder({ kvHeads: 2, maxSeq: 4096 });
    const base = checkpointFromHf(await loadHfFolder(files), 'tiny-llama');
    expect(base.config.maxSeq).toBe(HF_MAX_SEQ);
    expect(base.info).toMatchObject({
      source: 'huggingface',
      folder: 'tiny-llama',
      max_position_embeddings: 4096,
      trained_width: HF_MAX_SEQ,
    });
    const model = new Model(createCpuOps(), base.config);
    model.setWeights(base.weights);
    const out = await exportCheckpoint(model, base.tokenizer, base.info);
    expect(new TextDecoder().decode(out['tokenizer.json'])).toBe(
      `${JSON.stringify(JSON.parse(new TextDecoder().decode(files.get('tokenizer.json')!)), null, 2)}\n`,
    );
    expect(out['tokenizer_config.json']).toBeDefined();
    const back = importCheckpoint(out);
    expect(back.config).toEqual(base.config);
    expect(isHfTokenizer(back.tokenizer)).toBe(true);
    expect(back.tokenizer.vocab).toEqual(base.tokenizer.vocab);
    expect([back.tokenizer.bos, back.tokenizer.eos, back.tokenizer.pad]).toEqual([
      base.tokenizer.bos,
      base.tokenizer.eos,
      base.tokenizer.pad,
    ]);
    expect(Array.from(back.tokenizer.encode('Hello world 12+7='))).toEqual(
      Array.from(base.tokenizer.encode('Hello world 12+7=')),
    );
    // Bit for bit. (toEqual walks a typed array value by value: ~20 s for the 32000 × 64 embedding and head.)
    const bits = (a: Float32Array | undefined) => (a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : undefined);
    for (const [name, w] of base.weights) expect(bits(back.weights.get(name))?.equals(bits(w)!), name).toBe(true);
  });
});
