import { describe, expect, it } from 'vitest';
import { chunkLimit, oversizedFiles } from './chunk-limit.mjs';

const chunk = (fileName, bytes) => ({ type: 'chunk', fileName, code: 'x'.repeat(bytes) });
const asset = (fileName, bytes) => ({ type: 'asset', fileName, source: 'x'.repeat(bytes) });

describe('oversizedFiles', () => {
  it('names each JavaScript chunk or asset (a worker) over the limit in kB of 1000 bytes, and nothing else', () => {
    const bundle = {
      a: chunk('assets/index.js', 500_000),
      b: chunk('assets/echarts.js', 500_001),
      c: asset('assets/main.js', 1_009_960),
      d: asset('assets/ops.wasm', 900_000),
      e: asset('assets/index.js.map', 5_000_000),
    };
    expect(oversizedFiles(bundle, 500)).toEqual(['assets/echarts.js 500.00 kB', 'assets/main.js 1009.96 kB']);
  });
});

describe('chunkLimit', () => {
  it('fails the build naming the files over the limit, and passes one under it', () => {
    const plugin = chunkLimit(1);
    const errors = [];
    const context = { error: (m) => errors.push(m) };
    plugin.generateBundle.call(context, {}, { a: chunk('assets/small.js', 1000) });
    expect(errors).toEqual([]);
    plugin.generateBundle.call(context, {}, { a: chunk('assets/big.js', 1001) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^JavaScript over 1 kB: assets\/big\.js 1\.00 kB\. Split it/);
  });
});
