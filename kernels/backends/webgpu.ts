/**
 * The `webgpu` backend: each op records its WGSL kernel into the Dispatcher's command encoder.
 * Work is submitted on `flush`, `sync` or `read`.
 */
import type { GpuContext } from '../common/context';
import { Dispatcher } from '../common/dispatcher';
import type { GpuTensor } from '../common/tensor';
import { createTensor, uploadTensor } from '../common/tensor';
import { matmul } from '../matmul/matmul';
import type { Ops, Tensor } from '../ops';

export interface WebGpuTensor extends Tensor, GpuTensor {
  readonly backend: 'webgpu';
}

export function gpuTensor(t: Tensor): WebGpuTensor {
  if (t.backend !== 'webgpu') throw new Error(`webgpu backend got a '${t.backend}' tensor '${t.label}'`);
  return t as WebGpuTensor;
}

export interface WebGpuOps extends Ops {
  readonly backend: 'webgpu';
  readonly ctx: GpuContext;
  readonly rt: Dispatcher;
}

export function createWebGpuOps(ctx: GpuContext): WebGpuOps {
  const rt = new Dispatcher(ctx);
  // Tensors with a buffer of their own; arena views share a buffer and are freed with the arena.
  const owned = new WeakSet<Tensor>();
  return {
    backend: 'webgpu',
    ctx,
    rt,
    alloc(label, length) {
      const t: WebGpuTensor = { ...createTensor(ctx, label, length), backend: 'webgpu' };
      owned.add(t);
      return t;
    },
    upload(t, data) {
      uploadTensor(ctx, gpuTensor(t), data);
    },
    read(t) {
      return rt.read(gpuTensor(t));
    },
    flush() {
      return rt.flush();
    },
    sync() {
      return rt.sync();
    },
    free(t) {
      if (!owned.has(t)) throw new Error(`free('${t.label}'): not allocated by this backend's alloc (arena views are freed with their arena)`);
      owned.delete(t);
      gpuTensor(t).buffer.destroy();
    },
    matmul(out, a, b, M, K, N, layout, opts) {
      matmul(rt, gpuTensor(out), gpuTensor(a), gpuTensor(b), M, K, N, layout, opts?.accumulate ?? false, opts?.variant ?? 'auto');
    },
  };
}
