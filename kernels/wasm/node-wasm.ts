/**
 * The wasm backend in Node (CLI, tests): its binaries from kernels/wasm/build (built when missing
 * or stale), and helper threads from worker_threads.
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WasmSimd } from '../backends/info';
import type { WasmOps } from '../backends/wasm';
import { createThreadedWasmOps, createWasmOps } from '../backends/wasm';
import { defaultWasmSimd } from './simd';
import type { ThreadPort } from './threads';

export type WasmBinaryFile = 'ops.wasm' | 'ops-mt.wasm' | 'ops-relaxed.wasm' | 'ops-mt-relaxed.wasm';

export async function nodeWasmBinary(file: WasmBinaryFile = 'ops.wasm'): Promise<Uint8Array> {
  const { buildWasm } = await import('./node-build.mjs');
  await buildWasm({ quiet: true });
  return readFile(fileURLToPath(new URL(`./build/${file}`, import.meta.url)));
}

/** A helper thread (kernels/wasm/thread.mjs); once started it no longer keeps the process alive. */
export function nodeThread(): ThreadPort {
  const w = new Worker(new URL('./thread.mjs', import.meta.url));
  // unref after the listeners: adding a 'message' listener refs the worker again.
  return {
    postMessage: (m) => w.postMessage(m),
    onMessage: (fn) => w.on('message', fn),
    started: () => w.unref(),
    onExit: (fn) => w.on('exit', (code) => fn(`exit code ${code}`)),
    terminate: () => void w.terminate(),
  };
}

/**
 * The wasm backend on every core (`threads`, default the machine's parallelism), or single-threaded
 * on one; the `simd` build (default: relaxed where this engine has it, kernels/wasm/simd.ts).
 * `shared`: over a shared memory even on one thread (a sampler thread's, whose weights the trainer
 * writes in place: worker/rollout/shared-weights.ts); more threads always share theirs.
 * `partMinWork`: pins createThreadedWasmOps's split threshold (tests pass 1 to split every op that can be).
 */
export async function nodeWasmOps(
  threads = availableParallelism(),
  simd: WasmSimd = defaultWasmSimd(),
  { shared = false, partMinWork }: { shared?: boolean; partMinWork?: number } = {},
): Promise<WasmOps> {
  const relaxed = simd === 'relaxed' ? '-relaxed' : '';
  if (threads < 2 && !shared) return createWasmOps(await nodeWasmBinary(`ops${relaxed}.wasm`));
  return createThreadedWasmOps(await nodeWasmBinary(`ops-mt${relaxed}.wasm`), threads, nodeThread, {
    ...(partMinWork !== undefined ? { partMinWork } : {}),
  });
}
