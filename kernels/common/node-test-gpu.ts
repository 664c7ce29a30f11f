/**
 * For GPU tests in Node: the WebGPU backend on the machine's adapter (SwiftShader on CI), or
 * null when none is found. With `CI` set, a missing adapter is an error, not a skip. And the list
 * of backends a model-level test runs on (`testBackends`).
 */
import { createCpuOps } from '../backends/cpu';
import type { WasmOps } from '../backends/wasm';
import type { WebGpuOps } from '../backends/webgpu';
import { createWebGpuOps } from '../backends/webgpu';
import type { Ops } from '../ops';
import { nodeWasmOps } from '../wasm/node-wasm';
import { acquireGpu } from './context';
import { nodeGpu } from './node-gpu';

export async function testGpuOps(): Promise<WebGpuOps | null> {
  const acquired = await acquireGpu(await nodeGpu());
  if (acquired.ok) {
    const { adapter } = acquired.ctx;
    console.log(`[gpu] adapter: ${adapter.vendor}/${adapter.architecture} ${adapter.description}`);
    return createWebGpuOps(acquired.ctx);
  }
  if (process.env.CI) throw new Error(`CI is set but no WebGPU adapter was found: ${acquired.reason}`);
  console.warn(`[gpu] skipping GPU tests: ${acquired.reason}`);
  return null;
}

/**
 * The backends a model-level test runs on, by name: the CPU references, wasm on one thread, and
 * WebGPU when there is an adapter (testGpuOps); with the wasm and WebGPU backends themselves.
 */
export async function testBackends(): Promise<{
  backends: [string, () => Ops][];
  wasm: WasmOps;
  gpu: WebGpuOps | null;
}> {
  const wasm = await nodeWasmOps(1);
  const gpu = await testGpuOps();
  const backends: [string, () => Ops][] = [
    ['cpu', createCpuOps],
    ['wasm', () => wasm],
  ];
  if (gpu) backends.push(['webgpu', () => gpu]);
  return { backends, wasm, gpu };
}
