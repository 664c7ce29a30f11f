/** The dedicated Worker's entry point: exposes the workbench API over comlink, nothing else. */
import { expose } from 'comlink';
import { createWorkbench } from './api';
import { memoryRunLocks, webRunLocks } from './runs/run-locks';
import { CHECKPOINT_FILES } from './model/checkpoint';
import type { CheckpointFiles } from './model/checkpoint';
import { openIdbStore } from './store/idb-store';
import type { BaseName } from './runs/run-manager';
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

/** The wasm backend's binary, bundled by Vite from kernels/wasm/build (scripts/build-wasm.mjs). */
async function fetchWasm(): Promise<ArrayBuffer> {
  const url = new URL('../kernels/wasm/build/ops.wasm', import.meta.url);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url.pathname}: HTTP ${res.status}`);
  return res.arrayBuffer();
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
expose(createWorkbench(() => self.navigator.gpu, fetchBase, new DeferredRunStore(openStore()), locks, fetchWasm));
