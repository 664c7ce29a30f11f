import { expose, wrap } from 'comlink';
import { describe, expect, it } from 'vitest';
import { GPU_ERROR_NAMES } from '../kernels/common/errors';
import { nodeGpu } from '../kernels/common/node-gpu';
import { createWorkbench } from './api';
import type { WorkbenchApi } from './protocol';
import { ERROR_NAMES } from './protocol';

/** The API as the app sees it: through comlink over a real MessageChannel. */
function connect(): WorkbenchApi {
  const { port1, port2 } = new MessageChannel();
  expose(createWorkbench(() => nodeGpu()), port1);
  return wrap<WorkbenchApi>(port2) as unknown as WorkbenchApi;
}

describe('worker API over comlink', () => {
  it('lists every GPU error name in the protocol', () => {
    for (const name of GPU_ERROR_NAMES) expect(ERROR_NAMES).toContain(name);
  });

  it('refuses selfTest before init with a named error', async () => {
    const api = connect();
    await expect(api.selfTest()).rejects.toMatchObject({ name: 'NotInitialized' });
  });

  it('runs on the CPU backend when asked, saying why', async () => {
    const api = connect();
    const info = await api.init('cpu');
    expect(info).toMatchObject({ backend: 'cpu', adapter: null });
    expect(info.fallbackReason).toMatch(/requested/);
    const result = await api.selfTest();
    expect(result.backend).toBe('cpu');
    expect(result.passed).toBe(true);
    expect(result.gflops).toBeGreaterThan(0);
  });

  it('selects WebGPU on auto when an adapter exists, and its self-test passes', async () => {
    const api = connect();
    const info = await api.init('auto');
    if (info.backend !== 'webgpu') {
      if (process.env.CI) throw new Error(`CI is set but the worker fell back to the CPU: ${info.fallbackReason}`);
      console.warn(`[gpu] skipping: ${info.fallbackReason}`);
      return;
    }
    expect(info.adapter?.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    expect(info.adapter?.limits.minStorageBufferOffsetAlignment).toBeGreaterThan(0);
    const result = await api.selfTest();
    expect(result.backend).toBe('webgpu');
    expect(result.cases.map((c) => c.name)).toContain('matmul_tiled nt 65x17x130');
    expect(result.cases.every((c) => c.passed)).toBe(true);
    expect(result.passed).toBe(true);
  });
});
