/** Backend selection for CLI commands: `--backend auto|webgpu|cpu` (default auto). */
import { BACKEND_PREFERENCES, selectBackend } from '../kernels/backends/select';
import type { BackendPreference } from '../kernels/backends/select';
import type { BackendInfo } from '../kernels/backends/select';
import { nodeGpu } from '../kernels/common/node-gpu';
import { nodeWasmOps } from '../kernels/wasm/node-wasm';
import type { Ops } from '../kernels/ops';
import { UsageError } from './args';

export async function cliBackend(choice: unknown): Promise<{ ops: Ops; info: BackendInfo }> {
  const pref = (choice ?? 'auto') as BackendPreference;
  if (!BACKEND_PREFERENCES.includes(pref))
    throw new UsageError(`--backend must be ${BACKEND_PREFERENCES.join(', ')}, got '${String(pref)}'`);
  const selected = await selectBackend(
    { gpu: pref === 'cpu' || pref === 'wasm' ? undefined : await nodeGpu(), wasm: () => nodeWasmOps() },
    pref,
  );
  if (!selected.ok) throw new Error(`no WebGPU backend: ${selected.reason}`);
  return { ops: selected.ops, info: selected.info };
}

export function describeBackend(info: BackendInfo): string {
  if (info.backend === 'webgpu') return `webgpu (${info.adapter?.vendor}/${info.adapter?.architecture})`;
  const simd = info.simd ? `, ${info.simd} SIMD` : '';
  const split = info.split && info.threads > 1 ? `; ${info.split}` : '';
  return `${info.backend}${info.threads > 1 ? ` × ${info.threads} threads` : ''}${simd} (${info.reason}${split})`;
}
