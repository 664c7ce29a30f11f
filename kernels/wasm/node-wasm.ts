/** The wasm backend in Node (CLI, tests): its binaries from kernels/wasm/build (built when missing or stale), and helper threads from worker_threads. */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WasmOps } from '../backends/wasm';
import { createThreadedWasmOps, createWasmOps } from '../backends/wasm';
import type { ThreadPort } from './threads';

export async function nodeWasmBinary(file: 'ops.wasm' | 'ops-mt.wasm' = 'ops.wasm'): Promise<Uint8Array> {
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

/** The wasm backend on every core (`threads`, default the machine's parallelism), or single-threaded on one. */
export async function nodeWasmOps(threads = availableParallelism()): Promise<WasmOps> {
  if (threads < 2) return createWasmOps(await nodeWasmBinary());
  return createThreadedWasmOps(await nodeWasmBinary('ops-mt.wasm'), threads, nodeThread);
}
