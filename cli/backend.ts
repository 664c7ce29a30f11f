/** Backend selection for CLI commands: `--backend auto|webgpu|cpu` (default auto). */
import { selectBackend } from '../kernels/backends/select';
import type { BackendInfo } from '../kernels/backends/select';
import { nodeGpu } from '../kernels/common/node-gpu';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import type { Ops } from '../kernels/ops';
import { UsageError } from './args';

export async function cliBackend(choice: unknown): Promise<{ ops: Ops; info: BackendInfo }> {
  const pref = choice ?? 'auto';
  if (pref !== 'auto' && pref !== 'webgpu' && pref !== 'wasm' && pref !== 'cpu') throw new UsageError(`--backend must be auto, webgpu, wasm or cpu, got '${String(pref)}'`);
  const selected = await selectBackend({ gpu: pref === 'cpu' || pref === 'wasm' ? undefined : await nodeGpu(), wasm: () => nodeWasmOps() }, pref);
  if (!selected.ok) throw new Error(`no WebGPU backend: ${selected.reason}`);
  return { ops: selected.ops, info: selected.info };
}

export function describeBackend(info: BackendInfo): string {
  if (info.backend === 'webgpu') return `webgpu (${info.adapter?.vendor}/${info.adapter?.architecture})`;
  return `${info.backend}${info.threads > 1 ? ` × ${info.threads} threads` : ''} (${info.reason})`;
}
