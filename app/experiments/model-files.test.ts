import { describe, expect, it } from 'vitest';
import { filesOfInput, memoryText } from './model-files';

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
});
