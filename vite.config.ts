import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { buildWasm } from './scripts/build-wasm.mjs';
import { chunkLimit } from './scripts/chunk-limit.mjs';

/** Compiles the wasm backend's kernels before a build or the dev server needs kernels/wasm/build/ops.wasm. */
const wasmKernels = (): Plugin => ({ name: 'dewpoint-wasm-kernels', buildStart: () => buildWasm() });

/**
 * Cross-origin isolation (COOP + COEP) lets the page use SharedArrayBuffer, which the wasm
 * backend's worker threads share their memory through. A static host must send the same two headers.
 */
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** Modules of these node_modules packages (`@scope/name` or `name`). */
const packages = (...names: string[]) => new RegExp(`[\\\\/]node_modules[\\\\/](${names.join('|')})[\\\\/]`);

const ECHARTS_PARTS = /[\\/]node_modules[\\/]echarts[\\/]lib[\\/](chart|component)[\\/]/;

/**
 * Chunks of their own for the large libraries, so that no chunk passes 500 kB (chunkLimit fails
 * the build otherwise; before these, the app was one 1.06 MB chunk and the worker one of 1.01 MB).
 * The views are split by App.tsx's lazy imports, but the charts library is over the limit by itself
 * (echarts ~440 kB minified with the charts the views register, its renderer zrender ~175 kB), and
 * the worker is one entry holding everything that trains, stores and exports.
 */
const APP_CHUNKS = [
  { name: 'react', test: packages('react', 'react-dom', 'scheduler'), priority: 1 },
  // echarts in two: the charts and components the views register, and the core they build on. Each
  // group is taken before the one listed above it, which would otherwise take it along as a dependency.
  { name: 'echarts-charts', test: ECHARTS_PARTS, priority: 1 },
  { name: 'echarts', test: (id: string) => packages('echarts').test(id) && !ECHARTS_PARTS.test(id), priority: 2 },
  { name: 'zrender', test: packages('zrender'), priority: 3 },
];

/** Modules under these folders of the repository (`kernels`, `worker/rl`). */
const folders = (...names: string[]) =>
  new RegExp(`[\\\\/](${names.map((n) => n.replace('/', '[\\\\/]')).join('|')})[\\\\/]`);

/** A layer's group only where it is worth a chunk: bytes of its modules before minification. */
const LAYER_MIN = 100_000;

/**
 * The worker by the layers of scripts/check-imports.mjs, lowest first, so that a group's modules
 * import only their own group and those below it: the kernels; the model, sampling and what they
 * read; the environments and trainers (with the example environment's 2000 tasks); the rest
 * (presets, store, exports, runs, the API) stays in the entry. The same groups apply to the small
 * workers (the sampler, the wasm threads), which `minSize` leaves whole.
 */
const WORKER_CHUNKS = [
  { name: 'zod', test: packages('zod'), priority: 3 },
  { name: 'parquet', test: packages('hyparquet', 'hyparquet-writer'), priority: 3 },
  { name: 'huggingface', test: packages('@huggingface/jinja', '@huggingface/tokenizers'), priority: 3 },
  { name: 'kernels', test: folders('kernels'), priority: 2, minSize: LAYER_MIN },
  {
    name: 'model',
    test: folders(
      ...['contract', 'rl', 'rewards', 'data', 'model', 'hf', 'rollout', 'companion-client'].map((f) => `worker/${f}`),
    ),
    priority: 1,
    minSize: LAYER_MIN,
  },
  {
    name: 'trainers',
    test: folders('worker/episodes', 'worker/train', 'worker/flow', 'examples'),
    minSize: LAYER_MIN,
  },
];

export default defineConfig({
  plugins: [react(), wasmKernels(), chunkLimit()],
  worker: {
    format: 'es',
    plugins: () => [chunkLimit()],
    rolldownOptions: { output: { codeSplitting: { groups: WORKER_CHUNKS } } },
  },
  build: { target: 'es2022', sourcemap: true, rolldownOptions: { output: { codeSplitting: { groups: APP_CHUNKS } } } },
  server: { port: 5173, strictPort: true, host: 'localhost', headers: ISOLATION },
  preview: { port: 5173, strictPort: true, host: 'localhost', headers: ISOLATION },
});
