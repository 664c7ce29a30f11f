/** Backend selection for CLI commands: `--backend auto|webgpu|cpu` (default auto). */
import { selectBackend } from '../kernels/backends/select';
import type { BackendInfo } from '../kernels/backends/select';
import { nodeGpu } from '../kernels/common/node-gpu';
import type { Ops } from '../kernels/ops';
import { UsageError } from './args';

export async function cliBackend(choice: unknown): Promise<{ ops: Ops; info: BackendInfo }> {
  const pref = choice ?? 'auto';
  if (pref !== 'auto' && pref !== 'webgpu' && pref !== 'cpu') throw new UsageError(`--backend must be auto, webgpu or cpu, got '${String(pref)}'`);
  const selected = await selectBackend(pref === 'cpu' ? undefined : await nodeGpu(), pref);
  if (!selected.ok) throw new Error(`no WebGPU backend: ${selected.reason}`);
  return { ops: selected.ops, info: selected.info };
}

export function describeBackend(info: BackendInfo): string {
  return info.adapter ? `webgpu (${info.adapter.vendor}/${info.adapter.architecture})` : `cpu (${info.fallbackReason})`;
}
