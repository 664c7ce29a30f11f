import { afterAll, describe, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { dropout } from './dropout';
import { dropoutRef } from './dropout.ref';

const gpu = await testGpuOps();

// Integer hashing and one f32 multiply (and add) per element on both sides: bit-identical.
const EXACT = { atol: 0, rtol: 0 };

describe.runIf(gpu)('dropout on WebGPU vs the reference', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  it('draws the same mask on odd sizes, seeds past 2³¹ and offsets, written and accumulated', async () => {
    for (const [n, seed, offset, p] of [
      [1, 0, 0, 0.5],
      [1023, 0xfffffff0, 7, 0.1],
      [4099, 12345, 0xfffff000, 0.9],
      [100_003, 2 ** 31 + 5, 3, 0.25],
    ]) {
      const x = randomArray(n, n);
      for (const accumulate of [false, true]) {
        const start = randomArray(n + 3, n + 1);
        const out = tensor('out', start);
        dropout(gpu!.rt, out, tensor('x', x), n, { p, seed, offset, accumulate });
        const want = start.slice();
        dropoutRef(want, x, n, { p, seed, offset, accumulate });
        expectClose(await gpu!.rt.read(out), want, { ...EXACT, label: `dropout n=${n} acc=${accumulate}` });
      }
    }
  });
});
