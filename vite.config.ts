import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { buildWasm } from './scripts/build-wasm.mjs';

/** Compiles the wasm backend's kernels before a build or the dev server needs kernels/wasm/build/ops.wasm. */
const wasmKernels = (): Plugin => ({ name: 'dewpoint-wasm-kernels', buildStart: () => buildWasm() });

/**
 * Cross-origin isolation (COOP + COEP) lets the page use SharedArrayBuffer, which the wasm
 * backend's worker threads share their memory through. A static host must send the same two headers.
 */
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  plugins: [react(), wasmKernels()],
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: { port: 5173, strictPort: true, host: 'localhost', headers: ISOLATION },
  preview: { port: 5173, strictPort: true, host: 'localhost', headers: ISOLATION },
});
