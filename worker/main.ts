/** The dedicated Worker's entry point: exposes the workbench API over comlink, nothing else. */
import { expose } from 'comlink';
import { createWorkbench } from './api';
import type { WasmOps } from '../kernels/backends/wasm';
import { createThreadedWasmOps, createWasmOps } from '../kernels/backends/wasm';
import type { ThreadPort } from '../kernels/wasm/threads';
import { memoryRunLocks, webRunLocks } from './runs/run-locks';
import { CHECKPOINT_FILES } from './model/checkpoint';
import type { CheckpointFiles } from './model/checkpoint';
import { openIdbStore } from './store/idb-store';
import type { BaseName } from './presets/table';
import type { RunStore } from './store/run-store';
import { DeferredRunStore, MemoryRunStore } from './store/run-store';

/** A shipped base checkpoint, served by the app from public/checkpoints/NAME/. */
async function fetchBase(base: BaseName): Promise<CheckpointFiles> {
  const files = await Promise.all(
    CHECKPOINT_FILES.map(async (name) => {
      const url = new URL(`/checkpoints/${base}/${name}`, self.location.origin);
      const res = await fetch(url);
      if (!res.ok) throw new Error(`GET ${url.pathname}: HTTP ${res.status}`);
      return [name, new Uint8Array(await res.arrayBuffer())] as const;
    }),
  );
  return Object.fromEntries(files) as CheckpointFiles;
}

async function fetchBytes(url: URL): Promise<ArrayBuffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url.pathname}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

/**
 * The wasm backend, made once per worker (a later init() reuses it and its threads): on every
 * core over a shared memory when the page is cross-origin isolated (the dev server and `npm start`
 * send COOP/COEP), else single-threaded. Its binaries are bundled by Vite from kernels/wasm/build.
 */
let wasmOps: Promise<WasmOps> | null = null;
function makeWasm(): Promise<WasmOps> {
  wasmOps ??= (async () => {
    const threads = Math.min(8, self.navigator.hardwareConcurrency || 1);
    if (self.crossOriginIsolated && threads > 1) {
      const spawn = (): ThreadPort => {
        const w = new Worker(new URL('../kernels/wasm/thread.mjs', import.meta.url), {
          type: 'module',
          name: 'dewpoint-wasm-thread',
        });
        return {
          postMessage: (m) => w.postMessage(m),
          onMessage: (fn) => w.addEventListener('message', (e) => fn(e.data)),
          terminate: () => w.terminate(),
        };
      };
      return createThreadedWasmOps(
        await fetchBytes(new URL('../kernels/wasm/build/ops-mt.wasm', import.meta.url)),
        threads,
        spawn,
      );
    }
    return createWasmOps(await fetchBytes(new URL('../kernels/wasm/build/ops.wasm', import.meta.url)));
  })();
  return wasmOps;
}

/** IndexedDB when this context has it (a reload keeps runs), memory otherwise. */
async function openStore(): Promise<RunStore> {
  if (!self.indexedDB) return new MemoryRunStore();
  try {
    return await openIdbStore();
  } catch (e) {
    console.error(`dewpoint: IndexedDB unavailable, runs will not survive a reload: ${(e as Error).message}`);
    return new MemoryRunStore();
  }
}

// Web Locks tell a run live in another tab from one a closed tab interrupted (runs/run-locks.ts).
const locks = self.navigator.locks ? webRunLocks(self.navigator.locks) : memoryRunLocks();
expose(createWorkbench(() => self.navigator.gpu, fetchBase, new DeferredRunStore(openStore()), locks, makeWasm));
