/**
 * Tensors for the GPU tests: `tensor(label, data)` creates one holding `data` (stored as f32, or
 * bit-for-bit for an Int32Array / Uint32Array, as uploadTensor does), `empty(label, length)` one
 * left as allocated (zeros), and `destroyAll()` destroys every tensor made so far. One set per
 * suite, destroyed in afterAll before the device; or one per check, destroyed at its end.
 *
 *   const gpu = await testGpuOps();
 *   describe.runIf(gpu)('…', () => {
 *     const { tensor, destroyAll } = testTensors(gpu);
 *     afterAll(() => { destroyAll(); gpu?.ctx.device.destroy(); });
 *
 * `gpu` may be null (no adapter: the suite is skipped, and nothing may be created).
 */
import type { GpuContext } from '../common/context';
import type { GpuTensor } from '../common/tensor';
import { createTensor, uploadTensor } from '../common/tensor';

export interface TestTensors {
  tensor(label: string, data: ArrayLike<number>): GpuTensor;
  empty(label: string, length: number): GpuTensor;
  destroyAll(): void;
}

export function testTensors(gpu: { readonly ctx: GpuContext } | null): TestTensors {
  const made: GpuTensor[] = [];
  const ctx = (): GpuContext => {
    if (!gpu) throw new Error('testTensors: no GPU (run the suite with describe.runIf(gpu))');
    return gpu.ctx;
  };
  const empty = (label: string, length: number): GpuTensor => {
    const t = createTensor(ctx(), label, length);
    made.push(t);
    return t;
  };
  return {
    empty,
    tensor(label, data) {
      const t = empty(label, data.length);
      uploadTensor(ctx(), t, data);
      return t;
    },
    destroyAll() {
      made.forEach((t) => t.buffer.destroy());
      made.length = 0;
    },
  };
}
