/**
 * For GPU tests in Node: the WebGPU backend on the machine's adapter (SwiftShader on CI), or
 * null when none is found. With `CI` set, a missing adapter is an error, not a skip.
 */
import type { WebGpuOps } from '../backends/webgpu';
import { createWebGpuOps } from '../backends/webgpu';
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
