/**
 * Run-time backend selection. `auto` takes WebGPU when an adapter and device can be had and
 * otherwise falls back to the CPU, recording why; `webgpu` refuses instead of falling back.
 */
import type { AdapterSummary } from '../common/context';
import { acquireGpu } from '../common/context';
import type { BackendName, Ops } from '../ops';
import { createCpuOps } from './cpu';
import { createWebGpuOps } from './webgpu';

export type BackendPreference = 'auto' | 'webgpu' | 'cpu';

export interface BackendInfo {
  backend: BackendName;
  /** The WebGPU adapter in use (webgpu backend only). */
  adapter: AdapterSummary | null;
  /** Why the CPU backend is in use (cpu backend only). */
  fallbackReason: string | null;
}

export type SelectResult = { ok: true; ops: Ops; info: BackendInfo } | { ok: false; reason: string };

export async function selectBackend(gpu: GPU | undefined, preference: BackendPreference = 'auto'): Promise<SelectResult> {
  if (preference === 'cpu') {
    return { ok: true, ops: createCpuOps(), info: { backend: 'cpu', adapter: null, fallbackReason: 'the CPU backend was requested' } };
  }
  const acquired = await acquireGpu(gpu);
  if (acquired.ok) {
    return { ok: true, ops: createWebGpuOps(acquired.ctx), info: { backend: 'webgpu', adapter: acquired.ctx.adapter, fallbackReason: null } };
  }
  if (preference === 'webgpu') return { ok: false, reason: acquired.reason };
  return { ok: true, ops: createCpuOps(), info: { backend: 'cpu', adapter: null, fallbackReason: acquired.reason } };
}
