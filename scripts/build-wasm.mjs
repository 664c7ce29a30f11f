#!/usr/bin/env node
// `node scripts/build-wasm.mjs [--force]`: compiles the wasm backend's kernels when stale (the
// build itself, its flags and outputs are kernels/wasm/node-build.mjs). Run by `npm ci` (prepare),
// `npm run build:wasm` (--force) and `npm test`; vite.config.ts imports `buildWasm` from here.
import { fileURLToPath } from 'node:url';
import { buildWasm } from '../kernels/wasm/node-build.mjs';

export { buildWasm };

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWasm({ force: process.argv.includes('--force') });
}
