import { describe, expect, it, vi } from 'vitest';
import { main } from '../main';
import { publishedPeak } from './gpu';

describe('bench gpu', () => {
  it('knows the published vector peaks of the lent GPUs by their description, and says unknown otherwise', () => {
    expect(publishedPeak('NVIDIA H100 80GB HBM3')).toMatchObject({ f32: 66.9, f16: 133.8 });
    expect(publishedPeak('NVIDIA H200')).toMatchObject({ f32: 66.9 });
    expect(publishedPeak('NVIDIA H100 PCIe')).toMatchObject({ f32: 51.2, f16: 102.4 });
    expect(publishedPeak('NVIDIA A100-SXM4-40GB')).toMatchObject({ f32: 19.5 });
    expect(publishedPeak('SwiftShader driver 5.0.0')).toBeNull();
    expect(publishedPeak('')).toBeNull();
  });

  it('refuses --quick for the other benches (a usage error: status 2 and the reason on stderr)', async () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['bench', 'pack', '--quick'])).toBe(2);
      expect(err.mock.calls.map((c) => String(c[0])).join('')).toMatch(/--quick is for the gpu bench, not pack/);
    } finally {
      err.mockRestore();
    }
  });
});
