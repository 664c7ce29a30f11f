import { describe, expect, it } from 'vitest';
import type { MemoryPlanSummary } from '../../worker/protocol';
import { filesOfInput, memoryText, planText, webgpuPlanText } from './model-files';

/** A File as a folder input gives it, `folder/name`. */
const withPath = (path: string) => {
  const f = new File(['x'], path.split('/').at(-1)!);
  Object.defineProperty(f, 'webkitRelativePath', { value: path });
  return f;
};

describe('the files of a picked model folder', () => {
  it("keeps the folder's own files and its name, not a subfolder's", () => {
    const list = [
      'tiny-llama/config.json',
      'tiny-llama/model.safetensors',
      'tiny-llama/original/consolidated.pth',
      'tiny-llama/.git/HEAD',
    ].map(withPath);
    const got = filesOfInput(list);
    expect(got.name).toBe('tiny-llama');
    expect(got.files.map((f) => f.name)).toEqual(['config.json', 'model.safetensors']);
  });

  it('takes files without a folder path as they are (no name)', () => {
    const got = filesOfInput([withPath('config.json')]);
    expect(got).toEqual({ files: [expect.objectContaining({ name: 'config.json' })] });
  });

  it('writes the memory estimate in MiB with its parts', () => {
    const MiB = 2 ** 20;
    expect(
      memoryText({
        rows: 2,
        seq: 64,
        parameters: 1,
        weights: 4 * MiB,
        grads: 4 * MiB,
        adamMoments: 8 * MiB,
        activations: 1.5 * MiB,
        total: 17.5 * MiB,
        counts: '',
      }),
    ).toBe(
      'about 17.5 MiB in f32 for a 2 × 64 batch (rows × ids): weights 4.0 MiB + gradients 4.0 MiB + AdamW m and v 8.0 MiB + activations 1.5 MiB',
    );
  });

  describe("a step's plan on WebGPU: GPU buffers, the largest within the adapter's bound on one buffer", () => {
    const GiB = 2 ** 30;
    const plan: MemoryPlanSummary = {
      parts: [
        { part: 'base model (frozen, also the reference, bf16)', bytes: 0.8 * GiB },
        { part: 'activations of one training pass (2304 ids, layers recomputed)', bytes: 0.65 * GiB },
      ],
      total: 1.45 * GiB,
      idsPerPass: 3862,
      passIds: 2304,
      limit: 4 * GiB,
      problem: null,
      largestBuffer: { label: 'base:model.embed_tokens.weight', bytes: 180 * 2 ** 20 },
    };

    it('within the bound: the parts as GPU memory, not the wasm heap', () => {
      expect(webgpuPlanText(plan, GiB)).toEqual({
        fits: true,
        text:
          "1.45 GiB of GPU buffers on WebGPU, not the wasm heap (its 4.00 GiB does not bound them, the GPU's memory does): " +
          'base model (frozen, also the reference, bf16) 0.80 GiB + activations of one training pass (2304 ids, layers ' +
          'recomputed) 0.65 GiB; the largest buffer, base:model.embed_tokens.weight, is 180.0 MiB, within this ' +
          "adapter's 1024.0 MiB a buffer (maxStorageBufferBindingSize).",
      });
      expect(planText(plan)).toMatch(/^1\.45 GiB on wasm, of its 4\.00 GiB: .*; fits\.$/);
    });

    it("past it (WebGPU's default 128 MiB where the adapter says nothing): does not fit, whatever the wasm plan says", () => {
      const w = webgpuPlanText(plan, undefined);
      expect(w.fits).toBe(false);
      expect(w.text).toMatch(
        /is 180\.0 MiB, more than this adapter's 128\.0 MiB a buffer .*: the run cannot allocate it here\.$/,
      );
      expect(webgpuPlanText(plan, 180 * 2 ** 20).fits).toBe(true);
    });
  });
});
