/** The dedicated Worker's entry point: exposes the workbench API over comlink, nothing else. */
import { expose } from 'comlink';
import { createWorkbench } from './api';
import type { WasmOps } from '../kernels/backends/wasm';
import type { ModelConfig } from './model/config';
import { PortSampler } from './rollout/remote-sampler';
import type { RemoteSampler } from './rollout/remote-sampler';
import { browserWasmOps } from './wasm-backend';
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

/**
 * The trainer's wasm backend, made once per worker (a later init() reuses it and its threads): on
 * every core (at most 8) when the page is cross-origin isolated, else single-threaded.
 */
let wasmOps: Promise<WasmOps> | null = null;
function makeWasm(): Promise<WasmOps> {
  wasmOps ??= browserWasmOps(Math.min(8, self.navigator.hardwareConcurrency || 1));
  return wasmOps;
}

/**
 * A sampler slot (the `samplerWorker` option) as a Web Worker of its own (worker/sampler-worker.ts)
 * on wasm: one thread beside a trainer on wasm (which has the cores), up to 4 beside one on WebGPU.
 * Its memory is shared with this worker, which writes the weights there (rollout/shared-weights.ts).
 */
function samplerWorker(config: ModelConfig, trainerBackend: string): RemoteSampler {
  const w = new Worker(new URL('./sampler-worker.ts', import.meta.url), { type: 'module', name: 'dewpoint-sampler' });
  const cores = self.navigator.hardwareConcurrency || 1;
  const threads = trainerBackend === 'webgpu' ? Math.max(1, Math.min(4, cores - 1)) : 1;
  return new PortSampler(
    {
      postMessage: (m) => w.postMessage(m),
      onMessage: (fn) => w.addEventListener('message', (e) => fn(e.data)),
      onFailure: (fn) => w.addEventListener('error', (e) => fn(new Error(e.message || 'the worker failed to load'))),
      terminate: () => w.terminate(),
    },
    config,
    'the sampler worker',
    threads,
  );
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
expose(
  createWorkbench(
    () => self.navigator.gpu,
    fetchBase,
    new DeferredRunStore(openStore()),
    locks,
    makeWasm,
    samplerWorker,
  ),
);
