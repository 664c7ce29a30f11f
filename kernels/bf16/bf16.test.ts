import { afterAll, describe, it } from 'vitest';
import { randomArray } from '../common/random';
import { testGpuOps } from '../common/node-test-gpu';
import { expectClose } from '../testing/expect-close';
import { testTensors } from '../testing/gpu-tensors';
import { widenBf16 } from './bf16';
import { packBf16, widenBf16Ref } from './bf16.ref';

const gpu = await testGpuOps();

describe.runIf(gpu)('widenBf16 on WebGPU vs the reference', () => {
  const { tensor, destroyAll } = testTensors(gpu);
  afterAll(() => {
    destroyAll();
    gpu?.ctx.device.destroy();
  });

  it('widens odd and even sizes exactly and writes nothing past n', async () => {
    for (const n of [1, 2, 255, 513, 100_001]) {
      const packed = packBf16(randomArray(n, n, -3, 3));
      // The words travel as f32 bit patterns: the kernel reads them as u32.
      const words = tensor('packed', new Float32Array(packed.buffer));
      const out = tensor('out', new Float32Array(n + 3).fill(9));
      widenBf16(gpu!.rt, out, words, n);
      const want = new Float32Array(n + 3).fill(9);
      widenBf16Ref(want, packed, n);
      expectClose(await gpu!.rt.read(out), want, { atol: 0, rtol: 0, label: `widenBf16 n=${n}` });
    }
  });
});
