/** The wasm backend's binary in Node (CLI, tests): read from kernels/wasm/build, built if missing or stale. */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WasmOps } from '../backends/wasm';
import { createWasmOps } from '../backends/wasm';

export async function nodeWasmBinary(file: 'ops.wasm' | 'ops-mt.wasm' = 'ops.wasm'): Promise<Uint8Array> {
  const { buildWasm } = await import('../../scripts/build-wasm.mjs');
  await buildWasm({ quiet: true });
  return readFile(fileURLToPath(new URL(`./build/${file}`, import.meta.url)));
}

/** A fresh single-threaded wasm backend, for tests. */
export async function testWasmOps(): Promise<WasmOps> {
  return createWasmOps(await nodeWasmBinary());
}
