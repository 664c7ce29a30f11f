/**
 * The `cpu` backend: each op is its hand-written reference, run at once over Float32Array.
 * It is the fallback when WebGPU is unavailable and the oracle the GPU backend is tested against.
 */
import { matmulRef } from '../matmul/matmul.ref';
import type { Ops, Tensor } from '../ops';

export interface CpuTensor extends Tensor {
  readonly backend: 'cpu';
  readonly data: Float32Array;
}

export function cpuData(t: Tensor): Float32Array {
  if (t.backend !== 'cpu') throw new Error(`cpu backend got a '${t.backend}' tensor '${t.label}'`);
  return (t as CpuTensor).data;
}

export function createCpuOps(): Ops {
  return {
    backend: 'cpu',
    alloc(label, length) {
      const t: CpuTensor = { backend: 'cpu', label, length, data: new Float32Array(length) };
      return t;
    },
    upload(t, data) {
      const d = cpuData(t);
      if (data.length !== d.length) throw new Error(`upload to '${t.label}': expected ${d.length} values, got ${data.length}`);
      d.set(data);
    },
    async read(t) {
      return cpuData(t).slice();
    },
    async flush() {},
    async sync() {},
    free() {},
    matmul(out, a, b, M, K, N, layout, opts) {
      matmulRef(cpuData(out), cpuData(a), cpuData(b), M, K, N, layout, opts?.accumulate ?? false);
    },
  };
}
